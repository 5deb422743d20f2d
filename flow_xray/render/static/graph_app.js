// graph_app.js -> FX.graphApp: the graph viewer for autodiff and DOT graphs -- a layered DAG layout,
// a detail panel, and an optional stepping view (slider, buttons, arrow / j k keys).
// Big graphs stay readable: each step's box is followed (graph_view.js follow(): centred at a
// readable scale when it is off-screen or too small to read; the "Follow" box turns that off);
// boxes named "L1.N3.*" fold into one box per neuron or layer (graph_groups.js: graphs over 150
// nodes open with neurons folded, a click opens a folded box, the header folds or opens them all,
// a node's detail folds its neuron or layer; stepping never unfolds: a folded box holding the
// stepped node is the one highlighted and followed, and names it); "grad:" rows read signed at 4
// significant digits, with a strip coloured by sign and size against the largest gradient.
// Also the fallback page that shows DOT text it could not draw.
// Public: GraphApp, dotSource, textApp.

FX.graphApp = (function () {
  const U = FX.util;
  const L = FX.layout;
  const G = FX.graphView;
  const D = FX.detail;
  const GG = FX.graphGroups;
  const FOLDS = [
    ["none", "Expand all", "Draw every node"],
    ["neuron", "Collapse neurons", "One box per neuron (L1.N0.*, L1.N1.*, ...)"],
    ["layer", "Collapse layers", "One box per layer (L1.*, L2.*, ...); click one to see its neurons"],
  ];

  function GraphApp(data) {
    const self = this;
    this.data = data;
    this.nodes = data.nodes || [];
    this.steps = data.steps || [];
    this.step = -1;
    this.selected = -1; // a node index
    this.selectedGroup = null; // or the key of the group whose detail is shown
    this.follow = true;
    this.indexOf = new Map();
    this.nodes.forEach(function (node, i) { self.indexOf.set(node.id, i); });
    this.labels = this.nodes.map(function (node) { return String(node.label); });
    this.names = this.labels.map(function (label) { return label.split("\n")[0]; });
    this.model = GG.buildGroups(this.names);
    this.collapsed = GG.defaultCollapsed(this.model, this.nodes.length);
    this.edges = [];
    for (const e of data.edges || []) {
      if (this.indexOf.has(e.source) && this.indexOf.has(e.target)) {
        this.edges.push({ s: this.indexOf.get(e.source), t: this.indexOf.get(e.target), label: e.label });
      }
    }
    const grouped = this.model.keys.length > 0;
    const top = U.header(data.title || "flow-xray graph");
    U.chip(top.chips, U.fmtInt(this.nodes.length), this.nodes.length === 1 ? "node" : "nodes");
    U.chip(top.chips, U.fmtInt((data.edges || []).length), "edges");
    if (this.steps.length) U.chip(top.chips, U.fmtInt(this.steps.length), "steps");
    if (grouped) top.controls.appendChild(this._foldButtons());
    document.body.appendChild(top.header);
    const main = U.el("main", "fx-main");
    const left = U.el("section", "fx-left");
    if (this.steps.length) left.appendChild(this._stepper());
    const pane = U.el("div", "fx-pane fx-graph-pane fx-graph-full");
    left.appendChild(pane);
    if (typeof data.source === "string") left.appendChild(dotSource(data.source));
    main.appendChild(left);
    this.panel = U.el("aside", "fx-detail");
    main.appendChild(this.panel);
    document.body.appendChild(main);
    let hints = grouped ? " \u00b7 click a folded box to open it" : "";
    if (this.labels.some(function (label) { return GG.gradOf(label) !== null; })) {
      hints += " \u00b7 left strip: gradient, red + / blue \u2212, stronger = larger";
    }
    document.body.appendChild(U.el("footer", "fx-help", this.steps.length
      ? "\u2190 \u2192 or j k step \u00b7 Home / End first / last step \u00b7 click a node for its detail" + hints
      : "j k select the next / previous node \u00b7 drag to pan \u00b7 wheel to zoom" + hints));
    this.view = new G.GraphView(pane, {
      onSelect: function (key) {
        if (typeof key === "string") self.expand(key);
        else self.select(key);
      },
      pinSize: true, // the stepper's text changes at every step
    });
    this._measure();
    this._draw();
    this._pressFold();
    D.emptyDetail(this.panel, "Click a node to see its detail.");
    if (this.steps.length) this.setStep(0, false); // the page opens on the fitted drawing
    document.addEventListener("keydown", function (e) { self._key(e); });
  }

  function signature(text) {
    return text.lines.join("\n") + "\u0000" + text.lineCls.join(" ") + "\u0000" + text.mark;
  }

  // Whether the folded box `key` holds the stepped node.
  function holdsActive(app, key) {
    const active = app._active();
    return active >= 0 && app.fold.owner[active] === key;
  }

  function boxSize(chars, lines) {
    return { w: Math.min(360, Math.max(84, chars * 7.3 + 26)), h: lines * 15 + 18 };
  }

  // Box sizes fixed for the whole session: a node's box fits every label any frame gives it, a
  // folded box its three lines; and the largest |gradient| anywhere, the scale of the colour marks.
  GraphApp.prototype._measure = function () {
    const self = this;
    const n = this.nodes.length;
    const chars = new Array(n).fill(4);
    const rows = new Array(n).fill(1);
    this.hasGrad = new Array(n).fill(false);
    let maxGrad = 0;
    const see = function (i, label) {
      const shown = GG.showGrads(label);
      rows[i] = Math.max(rows[i], shown.lines.length);
      for (const line of shown.lines) chars[i] = Math.max(chars[i], line.length);
      if (shown.grad !== null) {
        self.hasGrad[i] = true;
        maxGrad = Math.max(maxGrad, Math.abs(shown.grad));
      }
    };
    this.labels.forEach(function (label, i) { see(i, label); });
    for (const step of this.steps) {
      for (const id in step.labels || {}) {
        if (this.indexOf.has(id)) see(this.indexOf.get(id), String(step.labels[id]));
      }
    }
    this.maxGrad = maxGrad;
    this.rows = rows;
    this.sizes = chars.map(function (c, i) { return boxSize(c, rows[i]); });
    this.groupSizes = new Map();
    for (const key of this.model.keys) {
      const group = this.model.groups.get(key);
      // Widest of: the key, "layer · 4 neurons · 128 nodes", "peak grad: -1.235e-4", "▶ <member>".
      let c = Math.max(key.length, 21);
      c = Math.max(c, (group.kind + " \u00b7 " + group.children.length + " neurons \u00b7 " + group.members.length + " nodes").length);
      for (const i of group.members) c = Math.max(c, this.names[i].length + 2);
      this.groupSizes.set(key, boxSize(c, 3));
    }
  };

  // Lay out and draw what the fold state shows, then fit it in view.
  GraphApp.prototype._draw = function () {
    const self = this;
    const fold = GG.fold(this.model, this.collapsed);
    this.fold = fold;
    const at = new Map();
    fold.keys.forEach(function (key, k) { at.set(key, k); });
    const sizeOf = function (key) { return typeof key === "number" ? self.sizes[key] : self.groupSizes.get(key); };
    const sizes = fold.keys.map(sizeOf);
    const edges = GG.foldEdges(this.edges, fold.owner).map(function (e) {
      return { s: at.get(e.s), t: at.get(e.t), label: e.label };
    });
    const rankdir = this.data.rankdir || "TB";
    const layout = L.dag(sizes, edges, rankdir);
    const horizontal = rankdir === "LR";
    const port = function (p, v, toward) {
      const s = sizes[v];
      if (horizontal) return { x: p.x + Math.sign(toward.x - p.x || 1) * (s.w / 2 + 1), y: p.y };
      return { x: p.x, y: p.y + Math.sign(toward.y - p.y || 1) * (s.h / 2 + 1) };
    };
    const scene = { nodes: [], edges: [], horizontal: horizontal };
    this.painted = new Map(); // key -> signature of the text it shows
    fold.keys.forEach(function (key, k) {
      const text = self._text(key);
      self.painted.set(key, signature(text));
      const group = typeof key === "string";
      scene.nodes.push({
        key: key, x: layout.pos[k].x, y: layout.pos[k].y, w: sizes[k].w, h: sizes[k].h,
        status: group ? "plain" : self.nodes[key].status, cls: group ? "fx-group" : "",
        lines: text.lines, lineCls: text.lineCls, badge: "",
        mark: group || self.hasGrad[key] ? text.mark : null,
      });
    });
    edges.forEach(function (e, k) {
      const pts = layout.routes[k].slice();
      if (e.s === e.t || pts.length < 2) return;
      pts[0] = port(pts[0], e.s, pts[1]);
      pts[pts.length - 1] = port(pts[pts.length - 1], e.t, pts[pts.length - 2]);
      scene.edges.push({ points: pts, label: e.label });
    });
    this.view.draw(scene);
    this._paint();
    this.view.fit(false);
  }

  // The stepped node's index, or -1.
  GraphApp.prototype._active = function () {
    if (this.step < 0) return -1;
    const i = this.indexOf.get(this.steps[this.step].active);
    return i === undefined ? -1 : i;
  }

  // A drawn box's lines (each cut to fit its box; boxes stop growing at 360px, the full label
  // stays in the detail panel), their classes and its gradient mark class.
  GraphApp.prototype._text = function (key) {
    let lines;
    let lineCls;
    let grad;
    let w;
    if (typeof key === "number") {
      const shown = GG.showGrads(this.labels[key]);
      lines = shown.lines;
      while (lines.length < this.rows[key]) lines.push("");
      lineCls = lines.map(function (line) { return GG.parseGrad(line) === null ? "" : "fx-grad"; });
      grad = shown.grad;
      w = this.sizes[key].w;
    } else {
      const text = GG.groupLines(this.model, key, this.labels, this.names, this._active());
      lines = text.lines;
      lineCls = ["", holdsActive(this, key) ? "fx-group-step" : "", "fx-grad"];
      grad = text.grad;
      w = this.groupSizes.get(key).w;
    }
    const max = Math.max(4, Math.floor((w - 16) / 7.3));
    return {
      lines: lines.map(function (line) { return U.ellipsis(line, max); }),
      lineCls: lineCls,
      mark: GG.gradClass(grad, this.maxGrad),
    };
  }

  // Put the current labels, marks and step highlights on every drawn box.
  GraphApp.prototype._paint = function () {
    const active = this._active();
    const seen = new Set();
    for (let s = 0; s < this.step; s++) seen.add(this.steps[s].active);
    const activeKey = active >= 0 ? this.fold.owner[active] : null;
    const changed = [];
    for (const key of this.fold.keys) {
      const text = this._text(key);
      const sig = signature(text);
      if (this.painted.get(key) !== sig) { // most boxes keep their text from one step to the next
        this.painted.set(key, sig);
        this.view.setLines(key, text.lines, text.lineCls);
        this.view.setMark(key, text.mark);
        changed.push(key);
      }
      this.view.setClass(key, "active", key === activeKey);
      if (typeof key === "number") {
        const id = this.nodes[key].id;
        this.view.setClass(key, "done", seen.has(id) && key !== active);
      }
    }
    this.view.fitText(changed);
    let selected = null;
    if (this.selectedGroup !== null) {
      if (this.fold.keys.indexOf(this.selectedGroup) >= 0) selected = this.selectedGroup;
    } else if (this.selected >= 0) selected = this.fold.owner[this.selected];
    this.view.select(selected, false);
  }

  GraphApp.prototype._stepper = function () {
    const self = this;
    const bar = U.el("div", "fx-stepper");
    const button = function (text, title, delta) {
      const b = U.el("button", "fx-btn", text);
      b.type = "button";
      b.title = title;
      b.addEventListener("click", function () { self.setStep(self.step + delta); });
      bar.appendChild(b);
    };
    button("\u25c0", "Previous step", -1);
    this.slider = U.el("input", "fx-slider");
    this.slider.type = "range";
    this.slider.min = "0";
    this.slider.max = String(this.steps.length - 1);
    this.slider.setAttribute("aria-label", "Step");
    this.slider.addEventListener("input", function () { self.setStep(Number(self.slider.value)); });
    bar.appendChild(this.slider);
    button("\u25b6", "Next step", 1);
    this.counter = U.el("span", "fx-counter", "");
    bar.appendChild(this.counter);
    const follow = U.el("label", "fx-toggle fx-follow");
    follow.title = "Centre each step's node at a readable size when it is out of view or too small";
    const box = U.el("input");
    box.type = "checkbox";
    box.checked = true;
    box.addEventListener("change", function () {
      self.follow = box.checked;
      if (self.follow) self._followActive();
    });
    follow.appendChild(box);
    follow.appendChild(U.el("span", null, "Follow"));
    bar.appendChild(follow);
    this.caption = U.el("div", "fx-caption", "");
    bar.appendChild(this.caption);
    return bar;
  }

  GraphApp.prototype._foldButtons = function () {
    const self = this;
    const bar = U.el("div", "fx-seg fx-fold");
    bar.setAttribute("role", "group");
    bar.setAttribute("aria-label", "Fold groups");
    this.foldButtons = FOLDS.map(function (fold) {
      const b = U.el("button", "fx-btn", fold[1]);
      b.type = "button";
      b.title = fold[2];
      b.dataset.fold = fold[0];
      b.addEventListener("click", function () { self.foldAll(fold[0]); });
      bar.appendChild(b);
      return b;
    });
    return bar;
  }

  // Which of the three fold views the current state is ("" after single boxes were opened).
  GraphApp.prototype._foldLevel = function () {
    for (const fold of FOLDS) {
      const want = GG.collapseLevel(this.model, fold[0]);
      if (want.size === this.collapsed.size && Array.from(want).every((k) => this.collapsed.has(k))) return fold[0];
    }
    return "";
  }

  GraphApp.prototype._pressFold = function () {
    const level = this._foldLevel();
    for (const b of this.foldButtons || []) b.setAttribute("aria-pressed", String(b.dataset.fold === level));
  }

  // Re-lay out after the fold state changed (the new drawing fitted in view), then centre the box
  // now drawing node `member` (the group just opened or closed) when given, else pan to the
  // stepped box if the fit left it out of view.
  GraphApp.prototype._refold = function (member) {
    this._draw();
    this._pressFold();
    const active = this._active();
    if (member >= 0) this.view.follow(this.fold.owner[member]);
    else if (active >= 0) this.view.reveal(this.fold.owner[active]);
    this._detail();
  }

  // "none", "neuron" or "layer" (see graph_groups.js collapseLevel).
  GraphApp.prototype.foldAll = function (level) {
    this.collapsed = GG.collapseLevel(this.model, level);
    this._refold(-1);
  }

  // Open a folded box: its members are drawn (the neurons of a layer keep their own state).
  GraphApp.prototype.expand = function (key) {
    if (!this.collapsed.delete(key)) return;
    this.selectedGroup = key;
    this._refold(this.model.groups.get(key).members[0]);
  }

  GraphApp.prototype.collapse = function (key) {
    if (!this.model.groups.has(key) || this.collapsed.has(key)) return;
    this.collapsed.add(key);
    this.selectedGroup = key;
    this._refold(this.model.groups.get(key).members[0]);
  }

  GraphApp.prototype._followActive = function (size) {
    const active = this._active();
    if (active >= 0) this.view.follow(this.fold.owner[active], size);
  }

  // Show frame k; with Follow on (and `follow` not false) the view follows its node.
  GraphApp.prototype.setStep = function (k, follow) {
    if (!this.steps.length) return;
    k = Math.max(0, Math.min(this.steps.length - 1, k));
    const size = this.view.size(); // before any box changes (see GraphView.size)
    this.step = k;
    const frame = this.steps[k];
    const labels = frame.labels || {};
    for (let i = 0; i < this.nodes.length; i++) {
      const id = this.nodes[i].id;
      this.labels[i] = Object.prototype.hasOwnProperty.call(labels, id) ? String(labels[id]) : String(this.nodes[i].label);
    }
    this._paint();
    this.slider.value = String(k);
    this.counter.textContent = "Step " + (k + 1) + " / " + this.steps.length;
    this.caption.textContent = U.visible(frame.caption);
    if (this.follow && follow !== false) this._followActive(size);
    if (this.selected >= 0 || this.selectedGroup !== null) this._detail();
  }

  GraphApp.prototype.select = function (i) {
    this.selected = i;
    this.selectedGroup = null;
    this.view.select(this.fold.owner[i], false);
    this._detail();
  }

  // The detail panel: the selected group's facts, or the selected node's with its groups.
  GraphApp.prototype._detail = function () {
    const self = this;
    if (this.selectedGroup !== null) {
      this._groupDetail(this.selectedGroup);
      return;
    }
    if (this.selected < 0) return;
    const i = this.selected;
    D.graphDetail(this.panel, this.nodes[i], this.labels[i]);
    const path = this.model.paths[i];
    if (!path.length) return;
    const box = U.el("div", "fx-group-actions");
    for (const key of path.slice().reverse()) {
      const kind = this.model.groups.get(key).kind;
      const b = U.el("button", "fx-btn", "Collapse " + kind + " " + key);
      b.type = "button";
      b.addEventListener("click", function () { self.collapse(key); });
      box.appendChild(b);
    }
    D.section(this.panel, "Group", box);
  }

  GraphApp.prototype._groupDetail = function (key) {
    const self = this;
    const group = this.model.groups.get(key);
    const text = GG.groupLines(this.model, key, this.labels, this.names, this._active());
    const folded = this.fold.owner[group.members[0]] === key;
    U.clear(this.panel);
    const head = U.el("div", "fx-detail-head");
    head.appendChild(U.el("span", "fx-pill plain", group.kind));
    this.panel.appendChild(head);
    this.panel.appendChild(U.el("h2", "fx-detail-name", key));
    this.panel.appendChild(D.facts([
      ["Nodes", U.fmtInt(group.members.length)],
      ["Neurons", group.children.length ? U.fmtInt(group.children.length) : null],
      ["Peak grad", text.grad === null ? null : GG.fmtGrad(text.grad)],
      ["Drawn as", folded ? "one box" : "its members"],
    ]));
    const b = U.el("button", "fx-btn fx-group-toggle", (folded ? "Expand " : "Collapse ") + group.kind);
    b.type = "button";
    b.addEventListener("click", function () {
      if (folded) self.expand(key);
      else self.collapse(key);
    });
    this.panel.appendChild(b);
    D.section(this.panel, "Members", U.el("pre", "fx-pre", group.members.map(function (i) {
      return self.names[i];
    }).join("\n")), group.members.length <= 60);
  }

  GraphApp.prototype._key = function (e) {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    const tag = e.target.tagName;
    if (tag === "BUTTON" && (e.key === " " || e.key === "Enter")) return;
    const forward = ["ArrowRight", "ArrowDown", "j"].indexOf(e.key) >= 0;
    const back = ["ArrowLeft", "ArrowUp", "k"].indexOf(e.key) >= 0;
    if (tag === "INPUT" && e.target !== this.slider) return;
    if (e.target === this.slider && (e.key.startsWith("Arrow") || e.key === "Home" || e.key === "End")) {
      return; // the slider moves itself and fires "input"
    }
    if (this.steps.length) {
      if (forward || back) this.setStep(this.step + (forward ? 1 : -1));
      else if (e.key === "Home") this.setStep(0);
      else if (e.key === "End") this.setStep(this.steps.length - 1);
      else if (e.key === "f") this.view.fit(true);
      else return;
    } else if (this.nodes.length && (forward || back)) {
      const n = this.nodes.length;
      this.select(this.selected < 0 ? 0 : (this.selected + (forward ? 1 : n - 1)) % n);
      this.view.reveal(this.fold.owner[this.selected]);
    } else if (e.key === "f") this.view.fit(true);
    else return;
    e.preventDefault();
  }

  // The DOT text a drawn page was made from: folded under the graph, with a copy button
  // (util.js copyText: the clipboard API where the page may use it, else a textarea copy).
  function dotSource(text) {
    const box = U.el("details", "fx-dot-source");
    box.appendChild(U.el("summary", "", "DOT source"));
    const copy = U.el("button", "fx-btn fx-copy-dot", "Copy DOT");
    copy.type = "button";
    const pre = U.el("pre", "fx-pre fx-dot-text", text);
    copy.addEventListener("click", function () {
      box.open = true;
      U.copyText(text, function (ok) { copy.textContent = ok ? "Copied" : "Copy failed: select the text"; });
    });
    box.appendChild(copy);
    box.appendChild(pre);
    return box;
  }

  function textApp(data) {
    const top = U.header(data.title || "flow-xray graph");
    document.body.appendChild(top.header);
    const main = U.el("main", "fx-text-main");
    main.appendChild(U.el("p", "fx-note",
      "This DOT text uses features the built-in viewer does not draw (only digraphs of nodes and edges are drawn). Here it is as text; Graphviz can render it."));
    main.appendChild(U.el("pre", "fx-pre fx-dot-text", data.text));
    document.body.appendChild(main);
  }

  return { GraphApp: GraphApp, dotSource: dotSource, textApp: textApp };
})();
