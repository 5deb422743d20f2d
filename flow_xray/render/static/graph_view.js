// graph_view.js -> FX.graphView: draws laid-out boxes and edges as SVG, with pan, zoom and selection.
// The caller supplies positions (from layout.js); this file only draws and handles input.
// Edge labels that would cover a box or another label are left out (the edge still shows).
// opts: {onSelect(key), pinSize (see _pinSize)}.
// Public: GraphView, edgePath, placeLabels, followTransform.

FX.graphView = (function () {
  const U = FX.util;
  // follow(): below this scale 12.5px labels are too small to read, so the view zooms in to
  // FOLLOW_SCALE (boxes at their natural size).
  const FOLLOW_READABLE = 0.75;
  const FOLLOW_SCALE = 1;

  function GraphView(parent, opts) {
    this.opts = opts;
    this.root = U.el("div", "fx-graph");
    this.svg = U.svg("svg", { class: "fx-svg", role: "img" });
    const defs = U.svg("defs", {});
    const marker = U.svg("marker", {
      id: "fx-arrow", viewBox: "0 0 10 10", refX: 9, refY: 5,
      markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse",
    });
    marker.appendChild(U.svg("path", { d: "M0,0 L10,5 L0,10 z", class: "fx-arrowhead" }));
    defs.appendChild(marker);
    this.svg.appendChild(defs);
    this.viewport = U.svg("g", {});
    this.edgeLayer = U.svg("g", { class: "fx-edges" });
    this.nodeLayer = U.svg("g", { class: "fx-nodes" });
    this.viewport.appendChild(this.edgeLayer);
    this.viewport.appendChild(this.nodeLayer);
    this.svg.appendChild(this.viewport);
    this.root.appendChild(this.svg);
    this.root.appendChild(this._toolbar());
    parent.appendChild(this.root);
    this.scale = 1;
    this.tx = 0;
    this.ty = 0;
    this.items = new Map();
    this.keyOf = new WeakMap();
    this.selected = null;
    this._bindInput();
    if (opts.pinSize) this._pinSize();
  }

  // opts.pinSize: give the drawing its pane's size in pixels, kept up to date. Chromium lays out
  // every box of a drawing sized in percent again whenever anything else on the page changes (a
  // step's caption: ~40 ms at 350 boxes); one sized in pixels is left alone. Until the observer
  // first reports, and between a pane's resize and its report, the size in percent holds; this
  // file reads sizes from the root, which always has the pane's current size.
  GraphView.prototype._pinSize = function () {
    if (typeof ResizeObserver !== "function") return;
    const svg = this.svg;
    new ResizeObserver(function (entries) {
      const r = entries[entries.length - 1].contentRect;
      svg.style.width = r.width + "px";
      svg.style.height = r.height + "px";
    }).observe(this.root);
  }

  GraphView.prototype._toolbar = function () {
    const bar = U.el("div", "fx-graph-tools");
    const self = this;
    const button = function (text, title, fn) {
      const b = U.el("button", "fx-btn", text);
      b.type = "button";
      b.title = title;
      b.addEventListener("click", fn);
      bar.appendChild(b);
    };
    button("\u2212", "Zoom out", function () { self.zoomBy(1 / 1.25); });
    button("+", "Zoom in", function () { self.zoomBy(1.25); });
    button("Fit", "Fit the graph in view", function () { self.fit(true); });
    return bar;
  }

  GraphView.prototype._bindInput = function () {
    const self = this;
    let drag = null;
    this.svg.addEventListener("pointerdown", function (e) {
      if (e.button !== 0) return;
      const nodeEl = e.target.closest ? e.target.closest(".fx-node") : null;
      drag = { x: e.clientX, y: e.clientY, tx: self.tx, ty: self.ty, moved: false, node: nodeEl };
      self.svg.setPointerCapture(e.pointerId);
    });
    this.svg.addEventListener("pointermove", function (e) {
      if (!drag) return;
      const dx = e.clientX - drag.x;
      const dy = e.clientY - drag.y;
      if (Math.abs(dx) + Math.abs(dy) > 4) drag.moved = true;
      if (!drag.moved) return;
      self.tx = drag.tx + dx;
      self.ty = drag.ty + dy;
      self._apply();
    });
    this.svg.addEventListener("pointerup", function () {
      if (drag && !drag.moved && drag.node && self.keyOf.has(drag.node)) {
        self.opts.onSelect(self.keyOf.get(drag.node));
      }
      drag = null;
    });
    this.svg.addEventListener("wheel", function (e) {
      e.preventDefault();
      const box = self.root.getBoundingClientRect();
      self.zoomBy(Math.exp(-e.deltaY * 0.0015), e.clientX - box.left, e.clientY - box.top);
    }, { passive: false });
  }

  GraphView.prototype._apply = function () {
    this.viewport.setAttribute("transform",
      "translate(" + this.tx.toFixed(1) + "," + this.ty.toFixed(1) + ") scale(" + this.scale.toFixed(4) + ")");
  }

  GraphView.prototype.zoomBy = function (factor, cx, cy) {
    const box = this.root.getBoundingClientRect();
    if (cx === undefined) { cx = box.width / 2; cy = box.height / 2; }
    const next = Math.min(3, Math.max(0.05, this.scale * factor));
    this.tx = cx - (cx - this.tx) * (next / this.scale);
    this.ty = cy - (cy - this.ty) * (next / this.scale);
    this.scale = next;
    this._apply();
  }

  // Smooth edge through points; tangents run along the rank axis so edges leave boxes straight.
  function edgePath(pts, horizontal) {
    let d = "M" + pts[0].x.toFixed(1) + "," + pts[0].y.toFixed(1);
    for (let i = 1; i < pts.length; i++) {
      const a = pts[i - 1];
      const b = pts[i];
      if (horizontal) {
        const mx = (a.x + b.x) / 2;
        d += " C" + mx.toFixed(1) + "," + a.y.toFixed(1) + " " + mx.toFixed(1) + "," + b.y.toFixed(1);
      } else {
        const my = (a.y + b.y) / 2;
        d += " C" + a.x.toFixed(1) + "," + my.toFixed(1) + " " + b.x.toFixed(1) + "," + my.toFixed(1);
      }
      d += " " + b.x.toFixed(1) + "," + b.y.toFixed(1);
    }
    return d;
  }

  // Which label boxes ({x, y, w, h}, top-left corner) can be drawn: in order, each one that
  // covers no obstacle box and no label kept before it. A grid of buckets keeps this near linear.
  function placeLabels(labels, obstacles) {
    const CELL = 96;
    const grid = new Map();
    const cells = function (b, fn) {
      for (let cx = Math.floor(b.x / CELL); cx <= Math.floor((b.x + b.w) / CELL); cx++) {
        for (let cy = Math.floor(b.y / CELL); cy <= Math.floor((b.y + b.h) / CELL); cy++) fn(cx + "," + cy);
      }
    };
    const add = function (b) {
      cells(b, function (id) {
        if (!grid.has(id)) grid.set(id, []);
        grid.get(id).push(b);
      });
    };
    const hits = function (b) {
      let hit = false;
      cells(b, function (id) {
        for (const o of grid.get(id) || []) {
          if (b.x < o.x + o.w && o.x < b.x + b.w && b.y < o.y + o.h && o.y < b.y + b.h) hit = true;
        }
      });
      return hit;
    };
    obstacles.forEach(add);
    return labels.map(function (b) {
      if (hits(b)) return false;
      add(b);
      return true;
    });
  }

  // The pan and zoom that show box b ({x, y, w, h}: centre and size, graph units) readably in a
  // view ({width, height, scale, tx, ty}), or null when no move is needed: b is wholly inside the
  // view (16px margin) at a scale of at least opt.readable. Otherwise b is centred, at the current
  // scale when that is readable, else at opt.scale -- never so large that b does not fit. With
  // opt.bounds (the drawing's {x0, y0, x1, y1}) the view stops at the drawing's edges instead of
  // showing empty room past them (b stays in view), and an axis the whole drawing fits is centred.
  function followTransform(view, b, opt) {
    const pad = 16;
    const s0 = view.scale;
    const cx = b.x * s0 + view.tx;
    const cy = b.y * s0 + view.ty;
    const inside = cx - (b.w / 2) * s0 >= pad && cx + (b.w / 2) * s0 <= view.width - pad &&
      cy - (b.h / 2) * s0 >= pad && cy + (b.h / 2) * s0 <= view.height - pad;
    if (inside && s0 >= opt.readable) return null;
    let s = s0 >= opt.readable ? s0 : opt.scale;
    s = Math.min(s, (view.width - 2 * pad) / b.w, (view.height - 2 * pad) / b.h);
    let tx = view.width / 2 - b.x * s;
    let ty = view.height / 2 - b.y * s;
    const k = opt.bounds;
    if (k) {
      const axis = function (t, lo, hi, size) {
        if ((hi - lo) * s + 2 * pad <= size) return (size - (hi - lo) * s) / 2 - lo * s;
        return Math.min(pad - lo * s, Math.max(size - pad - hi * s, t));
      };
      tx = axis(tx, k.x0, k.x1, view.width);
      ty = axis(ty, k.y0, k.y1, view.height);
    }
    return { scale: s, tx: tx, ty: ty };
  }

  // scene.nodes: [{key, x, y (centre), w, h, lines, status, cls, badge, lineCls, mark}];
  // lineCls[i]: extra classes of line i; mark: when a string, a strip at the box's left edge
  // with that class (graph_app.js colours it by gradient);
  // scene.edges: [{points, label}]; scene.horizontal: ranks run left to right.
  GraphView.prototype.draw = function (scene) {
    U.clear(this.edgeLayer);
    U.clear(this.nodeLayer);
    this.items = new Map();
    this.scene = scene;
    const spots = [];
    for (const edge of scene.edges) {
      this.edgeLayer.appendChild(U.svg("path", {
        d: edgePath(edge.points, scene.horizontal), class: "fx-edge", "marker-end": "url(#fx-arrow)",
      }));
      if (edge.label) {
        const mid = edge.points[Math.floor((edge.points.length - 1) / 2)];
        const next = edge.points[Math.floor((edge.points.length - 1) / 2) + 1];
        const text = U.visible(edge.label);
        const x = (mid.x + next.x) / 2 + 4;
        const y = (mid.y + next.y) / 2 + 4;
        // The box of 11px monospace text whose baseline starts at (x, y).
        spots.push({ x: x - 1, y: y - 10, w: text.length * 6.8 + 2, h: 13, text: text });
      }
    }
    const keep = spots.length ? placeLabels(spots, scene.nodes.map(function (n) {
      return { x: n.x - n.w / 2, y: n.y - n.h / 2, w: n.w, h: n.h };
    })) : [];
    spots.forEach(function (spot, k) {
      if (!keep[k]) return;
      const t = U.svg("text", { x: spot.x + 1, y: spot.y + 10, class: "fx-edge-label" });
      t.textContent = spot.text;
      this.edgeLayer.appendChild(t);
    }, this);
    const frag = document.createDocumentFragment();
    for (const node of scene.nodes) frag.appendChild(this._node(node));
    this.nodeLayer.appendChild(frag);
    this.fitText();
    if (this.selected !== null) this.select(this.selected, false);
  }

  // Cut every line still wider than its box (a character budget cannot know how wide the
  // glyphs are). Reads all widths first, then writes, so the page lays out once. With `keys`,
  // only those boxes (the ones whose text just changed).
  GraphView.prototype.fitText = function (keys) {
    const cuts = [];
    const items = keys ? keys.map((k) => this.items.get(k)).filter(Boolean) : this.items.values();
    const drops = [];
    for (const item of items) {
      const room = item.node.w - 14;
      item.texts.forEach(function (t, i) {
        const width = t.getComputedTextLength();
        if (width <= room) return;
        // A line of figures ("llm · 101.0 ms · 255 tok") loses whole parts, never digits.
        if (i > 0 && t.textContent.indexOf(" \u00b7 ") > 0) drops.push([t, room]);
        else cuts.push([t, Math.floor((t.textContent.length * room) / width) - 1]);
      });
    }
    for (const cut of cuts) cut[0].textContent = U.ellipsis(cut[0].textContent, Math.max(1, cut[1]));
    for (const drop of drops) fitParts(drop[0], drop[1]);
  }

  // Drop parts of a " · "-separated line until it fits `room`: words first (the kind), then
  // the last figure; a line that still does not fit is not drawn.
  function fitParts(t, room) {
    const parts = t.textContent.split(" \u00b7 ");
    while (parts.length && t.getComputedTextLength() > room) {
      const word = parts.findIndex(function (p) { return !/\d/.test(p); });
      if (word >= 0 && parts.length > 1) parts.splice(word, 1);
      else parts.pop();
      t.textContent = parts.join(" \u00b7 ");
    }
  }

  GraphView.prototype._node = function (node) {
    const g = U.svg("g", { class: "fx-node " + (node.status || "plain") + (node.cls ? " " + node.cls : "") });
    g.setAttribute("transform", "translate(" + (node.x - node.w / 2).toFixed(1) + "," + (node.y - node.h / 2).toFixed(1) + ")");
    g.appendChild(U.svg("rect", { width: node.w, height: node.h, rx: 7, ry: 7 }));
    const texts = [];
    const lineHeight = 15;
    const top = node.h / 2 - ((node.lines.length - 1) * lineHeight) / 2 + 4;
    node.lines.forEach(function (line, i) {
      const t = U.svg("text", { x: node.w / 2, y: top + i * lineHeight, class: lineClass(i, node.lineCls) });
      t.textContent = U.visible(line);
      g.appendChild(t);
      texts.push(t);
    });
    let mark = null;
    if (typeof node.mark === "string") {
      const holder = U.svg("g", { class: "fx-gmark" });
      mark = U.svg("rect", { x: 3, y: 5, width: 4, height: Math.max(4, node.h - 10), rx: 2, ry: 2, class: node.mark });
      holder.appendChild(mark);
      g.appendChild(holder);
    }
    if (node.badge) {
      const bw = 8 + node.badge.length * 6.5;
      const b = U.svg("g", { class: "fx-badge", transform: "translate(" + (node.w - bw + 6) + "," + (node.h - 9) + ")" });
      b.appendChild(U.svg("rect", { width: bw, height: 16, rx: 8, ry: 8 }));
      const bt = U.svg("text", { x: bw / 2, y: 12 });
      bt.textContent = node.badge;
      b.appendChild(bt);
      g.appendChild(b);
    }
    if (node.key !== null && node.key !== undefined) {
      this.keyOf.set(g, node.key);
      this.items.set(node.key, { el: g, node: node, texts: texts, mark: mark });
    }
    return g;
  }

  function lineClass(i, extra) {
    const base = i === 0 ? "fx-l1" : "fx-l2";
    return extra && extra[i] ? base + " " + extra[i] : base;
  }

  // Call fitText() once after the last setLines of a batch. lineCls as in draw().
  GraphView.prototype.setLines = function (key, lines, lineCls) {
    const item = this.items.get(key);
    if (!item) return;
    item.texts.forEach(function (t, i) {
      t.textContent = i < lines.length ? U.visible(lines[i]) : "";
      if (lineCls !== undefined) t.setAttribute("class", lineClass(i, lineCls));
    });
  }

  // The class of a box's mark strip (boxes drawn with a mark only).
  GraphView.prototype.setMark = function (key, cls) {
    const item = this.items.get(key);
    if (item && item.mark) item.mark.setAttribute("class", cls);
  }

  GraphView.prototype.setClass = function (key, cls, on) {
    const item = this.items.get(key);
    if (item) item.el.classList.toggle(cls, on);
  }

  GraphView.prototype.select = function (key, reveal) {
    if (this.selected !== null) this.setClass(this.selected, "selected", false);
    this.selected = key;
    if (key === null) return;
    this.setClass(key, "selected", true);
    if (reveal) this.reveal(key);
  }

  // Pan (not zoom) so the node is in view; leaves the view alone when it already is.
  GraphView.prototype.reveal = function (key) {
    const item = this.items.get(key);
    if (!item) return;
    const box = this.root.getBoundingClientRect();
    const n = item.node;
    const sx = n.x * this.scale + this.tx;
    const sy = n.y * this.scale + this.ty;
    const mx = (n.w / 2) * this.scale + 16;
    const my = (n.h / 2) * this.scale + 16;
    if (sx < mx || sx > box.width - mx) this.tx = box.width / 2 - n.x * this.scale;
    if (sy < my || sy > box.height - my) this.ty = box.height / 2 - n.y * this.scale;
    this._apply();
  }

  // The drawing area's size in pixels. Read it before changing boxes: after a change, reading
  // it makes the browser lay out the changed boxes first.
  GraphView.prototype.size = function () {
    const box = this.root.getBoundingClientRect();
    return { width: box.width, height: box.height };
  }

  // Centre the box at a readable scale unless it is already well in view (followTransform);
  // returns whether the view moved. `size`: this.size(), when the caller read it already.
  GraphView.prototype.follow = function (key, size) {
    const item = this.items.get(key);
    const box = size || this.size();
    if (!item || !box.width) return false;
    const view = { width: box.width, height: box.height, scale: this.scale, tx: this.tx, ty: this.ty };
    const opt = { readable: FOLLOW_READABLE, scale: FOLLOW_SCALE, bounds: bounds(this.scene.nodes) };
    const move = followTransform(view, item.node, opt);
    if (!move) return false;
    this.scale = move.scale;
    this.tx = move.tx;
    this.ty = move.ty;
    this._apply();
    return true;
  }

  // The drawing's extent: {x0, y0, x1, y1} over every box.
  function bounds(nodes) {
    let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
    for (const n of nodes) {
      x0 = Math.min(x0, n.x - n.w / 2);
      y0 = Math.min(y0, n.y - n.h / 2);
      x1 = Math.max(x1, n.x + n.w / 2);
      y1 = Math.max(y1, n.y + n.h / 2);
    }
    return { x0: x0, y0: y0, x1: x1, y1: y1 };
  }

  // Fit the whole drawing; when that would make labels unreadable, show the top at a readable scale.
  GraphView.prototype.fit = function (force) {
    const scene = this.scene;
    const box = this.root.getBoundingClientRect();
    if (!scene || !scene.nodes.length || !box.width) return;
    const k = bounds(scene.nodes);
    const x0 = k.x0, y0 = k.y0, x1 = k.x1, y1 = k.y1;
    const pad = 24;
    let s = Math.min((box.width - 2 * pad) / (x1 - x0), (box.height - 2 * pad) / (y1 - y0), 1.25);
    const readable = force ? 0.05 : 0.55;
    if (s >= readable) {
      this.scale = s;
      this.tx = (box.width - (x1 - x0) * s) / 2 - x0 * s;
      this.ty = (box.height - (y1 - y0) * s) / 2 - y0 * s;
    } else {
      // The top box (the first of them): a trace's root, a bottom-to-top graph's output.
      let first = scene.nodes[0];
      for (const n of scene.nodes) if (n.y - n.h / 2 < first.y - first.h / 2) first = n;
      this.scale = s = 0.8;
      this.tx = box.width / 2 - first.x * s;
      this.ty = pad - (first.y - first.h / 2) * s;
    }
    this._apply();
  }

  return { GraphView: GraphView, edgePath: edgePath, placeLabels: placeLabels, followTransform: followTransform };
})();
