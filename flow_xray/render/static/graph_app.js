// graph_app.js -> FX.graphApp: the graph viewer for autodiff and DOT graphs -- a layered DAG layout,
// a detail panel, and an optional stepping view (slider, buttons, arrow / j k keys).
// Also the fallback page that shows DOT text it could not draw.
// Public: GraphApp, dotSource, textApp.

FX.graphApp = (function () {
  const U = FX.util;
  const L = FX.layout;
  const G = FX.graphView;
  const D = FX.detail;

  function GraphApp(data) {
    const self = this;
    this.data = data;
    this.nodes = data.nodes || [];
    this.steps = data.steps || [];
    this.step = -1;
    this.selected = -1;
    this.indexOf = new Map();
    this.nodes.forEach(function (node, i) { self.indexOf.set(node.id, i); });
    this.labels = this.nodes.map(function (node) { return String(node.label); });
    const top = U.header(data.title || "flow-xray graph");
    U.chip(top.chips, U.fmtInt(this.nodes.length), this.nodes.length === 1 ? "node" : "nodes");
    U.chip(top.chips, U.fmtInt((data.edges || []).length), "edges");
    if (this.steps.length) U.chip(top.chips, U.fmtInt(this.steps.length), "steps");
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
    document.body.appendChild(U.el("footer", "fx-help", this.steps.length
      ? "\u2190 \u2192 or j k step \u00b7 Home / End first / last step \u00b7 click a node for its detail"
      : "j k select the next / previous node \u00b7 drag to pan \u00b7 wheel to zoom"));
    this.view = new G.GraphView(pane, { onSelect: function (i) { self.select(i); } });
    this._draw();
    D.emptyDetail(this.panel, "Click a node to see its detail.");
    if (this.steps.length) this.setStep(0);
    document.addEventListener("keydown", function (e) { self._key(e); });
  }

  GraphApp.prototype._draw = function () {
    const self = this;
    const lineSets = this.nodes.map(function (node) { return [node.label]; });
    for (const step of this.steps) {
      for (const id in step.labels || {}) {
        if (this.indexOf.has(id)) lineSets[this.indexOf.get(id)].push(String(step.labels[id]));
      }
    }
    const sizes = lineSets.map(function (labels) {
      let lines = 1;
      let chars = 4;
      for (const label of labels) {
        const rows = String(label).split("\n");
        lines = Math.max(lines, rows.length);
        for (const row of rows) chars = Math.max(chars, row.length);
      }
      return { w: Math.min(360, Math.max(84, chars * 7.3 + 26)), h: lines * 15 + 18 };
    });
    this.sizes = sizes;
    const edges = [];
    for (const e of this.data.edges || []) {
      if (this.indexOf.has(e.source) && this.indexOf.has(e.target)) {
        edges.push({ s: this.indexOf.get(e.source), t: this.indexOf.get(e.target), label: e.label });
      }
    }
    const rankdir = this.data.rankdir || "TB";
    const layout = L.dag(sizes, edges, rankdir);
    const horizontal = rankdir === "LR";
    const port = function (p, v, toward) {
      const s = sizes[v];
      if (horizontal) return { x: p.x + Math.sign(toward.x - p.x || 1) * (s.w / 2 + 1), y: p.y };
      return { x: p.x, y: p.y + Math.sign(toward.y - p.y || 1) * (s.h / 2 + 1) };
    };
    const scene = { nodes: [], edges: [], horizontal: horizontal };
    this.nodes.forEach(function (node, i) {
      scene.nodes.push({
        key: i, x: layout.pos[i].x, y: layout.pos[i].y, w: sizes[i].w, h: sizes[i].h,
        status: node.status, lines: self._lines(i, String(node.label)), badge: "",
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
    this.view.fit(false);
  }

  // A label's lines, each cut to fit its box (boxes stop growing at 360px; the full
  // label stays in the detail panel).
  GraphApp.prototype._lines = function (i, label) {
    const max = Math.max(4, Math.floor((this.sizes[i].w - 16) / 7.3));
    return label.split("\n").map(function (line) { return U.ellipsis(line, max); });
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
    this.caption = U.el("div", "fx-caption", "");
    bar.appendChild(this.caption);
    return bar;
  }

  GraphApp.prototype.setStep = function (k) {
    if (!this.steps.length) return;
    k = Math.max(0, Math.min(this.steps.length - 1, k));
    this.step = k;
    const frame = this.steps[k];
    const seen = new Set();
    for (let s = 0; s < k; s++) seen.add(this.steps[s].active);
    for (let i = 0; i < this.nodes.length; i++) {
      const id = this.nodes[i].id;
      const labels = frame.labels || {};
      this.labels[i] = Object.prototype.hasOwnProperty.call(labels, id) ? String(labels[id]) : String(this.nodes[i].label);
      this.view.setLines(i, this._lines(i, this.labels[i]));
      this.view.setClass(i, "active", id === frame.active);
      this.view.setClass(i, "done", seen.has(id) && id !== frame.active);
    }
    this.view.fitText();
    this.slider.value = String(k);
    this.counter.textContent = "Step " + (k + 1) + " / " + this.steps.length;
    this.caption.textContent = U.visible(frame.caption);
    if (this.indexOf.has(frame.active)) this.view.reveal(this.indexOf.get(frame.active));
    if (this.selected >= 0) this.select(this.selected);
  }

  GraphApp.prototype.select = function (i) {
    this.selected = i;
    this.view.select(i, false);
    D.graphDetail(this.panel, this.nodes[i], this.labels[i]);
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
      this.view.reveal(this.selected);
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
