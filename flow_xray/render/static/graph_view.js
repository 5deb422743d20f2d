// graph_view.js -> FX.graphView: draws laid-out boxes and edges as SVG, with pan, zoom and selection.
// The caller supplies positions (from layout.js); this file only draws and handles input.
// Public: GraphView, edgePath.

FX.graphView = (function () {
  const U = FX.util;

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
      const box = self.svg.getBoundingClientRect();
      self.zoomBy(Math.exp(-e.deltaY * 0.0015), e.clientX - box.left, e.clientY - box.top);
    }, { passive: false });
  }

  GraphView.prototype._apply = function () {
    this.viewport.setAttribute("transform",
      "translate(" + this.tx.toFixed(1) + "," + this.ty.toFixed(1) + ") scale(" + this.scale.toFixed(4) + ")");
  }

  GraphView.prototype.zoomBy = function (factor, cx, cy) {
    const box = this.svg.getBoundingClientRect();
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

  // scene.nodes: [{key, x, y (centre), w, h, lines, status, cls, badge}];
  // scene.edges: [{points, label}]; scene.horizontal: ranks run left to right.
  GraphView.prototype.draw = function (scene) {
    U.clear(this.edgeLayer);
    U.clear(this.nodeLayer);
    this.items = new Map();
    this.scene = scene;
    for (const edge of scene.edges) {
      this.edgeLayer.appendChild(U.svg("path", {
        d: edgePath(edge.points, scene.horizontal), class: "fx-edge", "marker-end": "url(#fx-arrow)",
      }));
      if (edge.label) {
        const mid = edge.points[Math.floor((edge.points.length - 1) / 2)];
        const next = edge.points[Math.floor((edge.points.length - 1) / 2) + 1];
        const t = U.svg("text", { x: (mid.x + next.x) / 2 + 4, y: (mid.y + next.y) / 2 + 4, class: "fx-edge-label" });
        t.textContent = U.visible(edge.label);
        this.edgeLayer.appendChild(t);
      }
    }
    const frag = document.createDocumentFragment();
    for (const node of scene.nodes) frag.appendChild(this._node(node));
    this.nodeLayer.appendChild(frag);
    this.fitText();
    if (this.selected !== null) this.select(this.selected, false);
  }

  // Cut every line still wider than its box (a character budget cannot know how wide the
  // glyphs are). Reads all widths first, then writes, so the page lays out once.
  GraphView.prototype.fitText = function () {
    const cuts = [];
    for (const item of this.items.values()) {
      const room = item.node.w - 14;
      for (const t of item.texts) {
        const width = t.getComputedTextLength();
        if (width > room) cuts.push([t, Math.floor((t.textContent.length * room) / width) - 1]);
      }
    }
    for (const cut of cuts) cut[0].textContent = U.ellipsis(cut[0].textContent, Math.max(1, cut[1]));
  }

  GraphView.prototype._node = function (node) {
    const g = U.svg("g", { class: "fx-node " + (node.status || "plain") + (node.cls ? " " + node.cls : "") });
    g.setAttribute("transform", "translate(" + (node.x - node.w / 2).toFixed(1) + "," + (node.y - node.h / 2).toFixed(1) + ")");
    g.appendChild(U.svg("rect", { width: node.w, height: node.h, rx: 7, ry: 7 }));
    const texts = [];
    const lineHeight = 15;
    const top = node.h / 2 - ((node.lines.length - 1) * lineHeight) / 2 + 4;
    node.lines.forEach(function (line, i) {
      const t = U.svg("text", { x: node.w / 2, y: top + i * lineHeight, class: i === 0 ? "fx-l1" : "fx-l2" });
      t.textContent = U.visible(line);
      g.appendChild(t);
      texts.push(t);
    });
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
      this.items.set(node.key, { el: g, node: node, texts: texts });
    }
    return g;
  }

  // Call fitText() once after the last setLines of a batch.
  GraphView.prototype.setLines = function (key, lines) {
    const item = this.items.get(key);
    if (!item) return;
    item.texts.forEach(function (t, i) { t.textContent = i < lines.length ? U.visible(lines[i]) : ""; });
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
    const box = this.svg.getBoundingClientRect();
    const n = item.node;
    const sx = n.x * this.scale + this.tx;
    const sy = n.y * this.scale + this.ty;
    const mx = (n.w / 2) * this.scale + 16;
    const my = (n.h / 2) * this.scale + 16;
    if (sx < mx || sx > box.width - mx) this.tx = box.width / 2 - n.x * this.scale;
    if (sy < my || sy > box.height - my) this.ty = box.height / 2 - n.y * this.scale;
    this._apply();
  }

  // Fit the whole drawing; when that would make labels unreadable, show the top at a readable scale.
  GraphView.prototype.fit = function (force) {
    const scene = this.scene;
    const box = this.svg.getBoundingClientRect();
    if (!scene || !scene.nodes.length || !box.width) return;
    let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
    for (const n of scene.nodes) {
      x0 = Math.min(x0, n.x - n.w / 2);
      y0 = Math.min(y0, n.y - n.h / 2);
      x1 = Math.max(x1, n.x + n.w / 2);
      y1 = Math.max(y1, n.y + n.h / 2);
    }
    const pad = 24;
    let s = Math.min((box.width - 2 * pad) / (x1 - x0), (box.height - 2 * pad) / (y1 - y0), 1.25);
    const readable = force ? 0.05 : 0.55;
    if (s >= readable) {
      this.scale = s;
      this.tx = (box.width - (x1 - x0) * s) / 2 - x0 * s;
      this.ty = (box.height - (y1 - y0) * s) / 2 - y0 * s;
    } else {
      const first = scene.nodes[0];
      this.scale = s = 0.8;
      this.tx = box.width / 2 - first.x * s;
      this.ty = pad - (first.y - first.h / 2) * s;
    }
    this._apply();
  }

  return { GraphView: GraphView, edgePath: edgePath };
})();
