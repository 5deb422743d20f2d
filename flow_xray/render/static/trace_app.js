// trace_app.js -> FX.TraceApp: the trace viewer -- header totals, search and errors-only filter,
// the call graph, the tree + waterfall rows, the detail panel and keyboard navigation.
//
// Scale: nodes arrive flat in pre-order with parent indices, so every subtree is
// a contiguous range; expand/collapse and filtering are array scans. Rows are
// virtualized, large subtrees start collapsed (OPEN_BUDGET), and past SUMMARY_OVER visible calls
// the graph draws a summary around the selection (trace_summary.js) instead of every box.
// Public: FX.TraceApp, the viewer's constructor (new FX.TraceApp(payload)); its methods
// come from trace_actions.js. Hooks for other views: app.top (the row holding the overview
// and graph panes), app.select(i, reveal), app.onSelect (functions called with the selected
// row), app.state / app.saveState() (the URL fragment, see state.js).

FX.TraceApp = (function () {
  const U = FX.util;
  const G = FX.graphView;
  const R = FX.rows;
  const D = FX.detail;
  const P = FX.panes;
  const T = FX.timeline;
  const O = FX.overview;
  const ST = FX.state;
  const ROW_H = 26;
  const OPEN_BUDGET = 300;

  function TraceApp(data) {
    this.data = data;
    this.nodes = Array.isArray(data.nodes) ? data.nodes : [];
    this.slowShare = U.isNum(data.slow_share) ? data.slow_share : 0.2;
    this._index();
    this.expanded = this._initialExpansion();
    this.saved = null; // expansion state to restore when the filter is cleared
    this.keep = null; // with a filter: 1 for matches and their ancestors
    this.matches = null;
    this.lower = null;
    this.selected = -1;
    this.onSelect = [];
    this.appliedQuery = "";
    this.appliedErrors = false;
    this.ov = data.overview && typeof data.overview === "object" ? data.overview : {};
    this.critical = new Uint8Array(this.nodes.length);
    for (const i of this.ov.critical || []) if (i >= 0 && i < this.nodes.length) this.critical[i] = 1;
    this.state = ST.parse(location.hash);
    this._buildUi();
    this.refresh(true);
    if (this.nodes.length) {
      this.restoreState();
    } else {
      D.emptyDetail(this.panel, "This trace has no calls.");
    }
  };

  // The row the page opens on: the call named in the URL, else the overview's choice (the
  // root-cause failure, not a handled retry), else the first row.
  TraceApp.prototype.restoreState = function () {
    const st = this.state;
    if (st.q || st.errors) {
      this.search.value = st.q || "";
      this.errorsOnly.checked = Boolean(st.errors);
      this.applyFilter(true);
    }
    if (st.overview === "0") this.showOverview(false);
    let target = -1;
    if (st.call) {
      for (let i = 0; i < this.nodes.length && target < 0; i++) {
        if (this.nodes[i].span_id === st.call || this.nodes[i].id === st.call) target = i;
      }
    }
    if (target < 0) target = U.isNum(this.ov.first) && this.ov.first >= 0 ? this.ov.first : 0;
    if (this.keep && !this.keep[target]) this.nextMatch(1);
    else this.select(target, true);
  };

  TraceApp.prototype._index = function () {
    const n = this.nodes.length;
    this.parent = new Int32Array(n);
    this.depth = new Int32Array(n);
    this.size = new Int32Array(n).fill(1);
    this.kids = new Int32Array(n);
    let t0 = Infinity;
    let t1 = -Infinity;
    for (let i = 0; i < n; i++) {
      const node = this.nodes[i];
      const p = typeof node.parent === "number" && node.parent < i ? node.parent : -1;
      this.parent[i] = p;
      if (p >= 0) {
        this.depth[i] = this.depth[p] + 1;
        this.kids[p]++;
      }
      const start = U.isNum(node.start_ms) ? node.start_ms : 0;
      t0 = Math.min(t0, start);
      t1 = Math.max(t1, start + (U.isNum(node.latency_ms) ? node.latency_ms : 0));
    }
    for (let i = n - 1; i > 0; i--) if (this.parent[i] >= 0) this.size[this.parent[i]] += this.size[i];
    this.t0 = n ? t0 : 0;
    this.span = n && t1 > t0 ? t1 - t0 : 1;
  };

  // Breadth-first, open nodes while the visible rows stay within OPEN_BUDGET; then open the
  // path to the first errors so "what failed" is on screen at once.
  TraceApp.prototype._initialExpansion = function () {
    const n = this.nodes.length;
    const expanded = new Uint8Array(n);
    const queue = [];
    for (let i = 0; i < n; i += this.size[i]) queue.push(i);
    let visible = queue.length;
    for (let head = 0; head < queue.length; head++) {
      const i = queue[head];
      if (!this.kids[i] || visible + this.kids[i] > OPEN_BUDGET) continue;
      expanded[i] = 1;
      visible += this.kids[i];
      for (let c = i + 1; c < i + this.size[i]; c += this.size[c]) queue.push(c);
    }
    let errors = 0;
    for (let i = 0; i < n && errors < 10; i++) {
      if (this.nodes[i].view_status !== "error") continue;
      errors++;
      for (let p = this.parent[i]; p >= 0; p = this.parent[p]) expanded[p] = 1;
    }
    return expanded;
  };

  TraceApp.prototype._totals = function () {
    const t = this.data.totals;
    if (t && typeof t === "object") return t;
    const out = { nodes: this.nodes.length, errors: 0, wall_time_ms: this.span, total_tokens: 0, cost_usd: null };
    for (const node of this.nodes) {
      if (node.status === "error") out.errors++;
      const meta = node.meta || {};
      if (U.isNum(meta.total_tokens)) out.total_tokens += meta.total_tokens;
      if (U.isNum(meta.estimated_cost_usd)) out.cost_usd = (out.cost_usd || 0) + meta.estimated_cost_usd;
    }
    return out;
  };

  TraceApp.prototype._buildUi = function () {
    const self = this;
    const top = U.header(this.data.title || "flow-xray trace");
    const t = this._totals();
    const ov = this.ov;
    const firstOf = function (list) { return Array.isArray(list) && list.length ? list[0] : -1; };
    U.chip(top.chips, U.fmtInt(t.nodes || 0), t.nodes === 1 ? "call" : "calls");
    this._chipGoes(U.chip(top.chips, U.fmtMs(t.wall_time_ms), "wall time", "fx-chip-slow"), "slow", firstOf(ov.self_time),
      "The call with the most time of its own");
    this._errorChips(top.chips, t);
    this._chipGoes(U.chip(top.chips, U.fmtInt(t.total_tokens || 0), "tokens"), "models", -1, "Usage per model");
    this._chipGoes(U.chip(top.chips, U.isNum(t.cost_usd) ? U.fmtCost(t.cost_usd) : "\u2014", U.isNum(t.cost_usd) ? "est. cost" : "cost unknown"),
      "llm", firstOf(ov.llm), "The costliest LLM call");
    this.search = U.el("input", "fx-search");
    this.search.type = "search";
    this.search.placeholder = "Search  ( / )  e.g. model:gpt-4o duration>500ms";
    this.search.title = "Words search names, inputs, outputs, errors and attributes. Filters: name: error: kind: status: key:value, model:gpt-4o (exactly that model) or model:gpt-4o* (a prefix), duration> self> tokens> cost> (ms, s). -term excludes. Enter / Shift+Enter: next / previous match. ? lists everything.";
    this.search.setAttribute("aria-label", "Search calls");
    const label = U.el("label", "fx-toggle");
    this.errorsOnly = U.el("input");
    this.errorsOnly.type = "checkbox";
    label.appendChild(this.errorsOnly);
    label.appendChild(U.el("span", null, "Errors only"));
    this.matchInfo = U.el("span", "fx-match-info", "");
    this.matchPos = U.el("span", "fx-match-pos", "");
    const step = function (text, title, delta) {
      const b = U.el("button", "fx-btn fx-match-step", text);
      b.type = "button";
      b.title = title;
      b.addEventListener("click", function () { self.nextMatch(delta); });
      return b;
    };
    top.controls.appendChild(this.search);
    top.controls.appendChild(step("\u2191", "Previous match (Shift+Enter)", -1));
    top.controls.appendChild(step("\u2193", "Next match (Enter)", 1));
    top.controls.appendChild(this.matchPos);
    top.controls.appendChild(label);
    top.controls.appendChild(this.matchInfo);
    const save = U.el("button", "fx-btn fx-download", "\u2913 JSON");
    save.type = "button";
    save.title = "Save this trace as flow-xray JSON (flow-xray view and TraceResult.load read it)";
    save.addEventListener("click", function () { self.downloadJson(); });
    top.controls.appendChild(save);
    document.body.appendChild(top.header);

    const main = U.el("main", "fx-main");
    const left = U.el("section", "fx-left");
    this.top = U.el("div", "fx-top");
    this.overview = O.build(this, this.ov);
    const ovPane = U.el("div", "fx-pane fx-ov-pane");
    const ovHead = U.el("div", "fx-ov-head");
    ovHead.appendChild(U.el("span", "fx-ov-heading", "Overview"));
    const hide = U.el("button", "fx-btn fx-ov-hide", "Hide");
    hide.type = "button";
    hide.addEventListener("click", function () { self.showOverview(false); self.saveState(); });
    ovHead.appendChild(hide);
    ovPane.appendChild(ovHead);
    ovPane.appendChild(this.overview.el);
    this.ovPane = ovPane;
    this.top.appendChild(ovPane);
    const graphPane = U.el("div", "fx-pane fx-graph-pane");
    this.graph = new G.GraphView(graphPane, { onSelect: function (i) { self.select(i, true); } });
    const showOv = U.el("button", "fx-btn fx-ov-show", "Overview");
    showOv.type = "button";
    showOv.title = "Show the overview";
    showOv.addEventListener("click", function () { self.showOverview(true); self.saveState(); });
    graphPane.appendChild(showOv);
    this.top.appendChild(graphPane);
    left.appendChild(this.top);
    const table = U.el("div", "fx-pane fx-table" + ((this.ov.critical || []).length > 1 ? " fx-has-crit" : ""));
    this.timeline = new T.Timeline(this);
    table.appendChild(this.timeline.toolbar());
    const head = this._tableHead();
    table.appendChild(head);
    this.rows = new R.RowList(table, {
      rowHeight: ROW_H,
      createRow: TraceApp.createRow,
      fillRow: function (row, i) { self._fillRow(row, i); },
      onClick: function (i, e) {
        if (e.target.classList.contains("fx-caret")) self.toggle(i);
        else self.select(i, true);
      },
    });
    table.appendChild(this.timeline.flameView());
    left.appendChild(table);
    main.appendChild(left);
    this.panel = U.el("aside", "fx-detail");
    this.panel.setAttribute("aria-label", "Selected call");
    main.appendChild(this.panel);
    document.body.appendChild(main);
    const help = U.el("footer", "fx-help");
    help.appendChild(U.el("span", "fx-help-keys",
      "? help \u00b7 \u2191\u2193 or j k move \u00b7 \u2190 \u2192 collapse / expand \u00b7 Enter or Space toggle \u00b7 / search, Enter / Shift+Enter next / previous match \u00b7 e next error \u00b7 Esc clear \u00b7 + \u2212 0 zoom \u00b7 Shift+\u2190 \u2192 pan \u00b7 z zoom to call"));
    this.help = new FX.help.Help(FX.help.TRACE);
    const helpButton = U.el("button", "fx-btn fx-help-open", "? Help");
    helpButton.type = "button";
    helpButton.title = "Keys and search syntax ( ? )";
    helpButton.addEventListener("click", function () { self.help.toggle(); });
    help.appendChild(helpButton);
    document.body.appendChild(help);
    this.timeline.bind(table, head, this.rows.scroller);
    this.panes = new P.Layout({
      main: main, left: left, top: this.top, bottom: table, side: this.panel, footer: help,
      names: { top: "Graph", bottom: "Tree", side: "Detail" },
      onResize: function () { if (self.graph.scene) self.graph.fit(false); },
    });
    this.bindKeys();
    const refilter = U.debounce(function () { self.applyFilter(); }, 120);
    this.search.addEventListener("input", refilter);
    this.errorsOnly.addEventListener("change", function () { self.applyFilter(); });
  };

  // Failures in the header: the unhandled ones (the run failed: red) apart from those a
  // caller handled (the run went on: not red); "0 errors" when nothing failed. Counted per
  // failure where it was raised (overview.errors), not per call it passed through.
  TraceApp.prototype._errorChips = function (chips, totals) {
    const errors = Array.isArray(this.ov.errors) ? this.ov.errors : null;
    if (!errors) { // a payload without the overview: every failed call, as before
      const n = totals.errors || 0;
      this._chipGoes(U.chip(chips, U.fmtInt(n), n === 1 ? "error" : "errors", n ? "bad" : ""), "errors", -1,
        "The failures");
      return;
    }
    const unhandled = errors.filter(function (e) { return !e.handled; });
    const handled = errors.filter(function (e) { return e.handled; });
    if (unhandled.length || !handled.length) {
      const n = unhandled.length;
      const chip = U.chip(chips, U.fmtInt(n), n === 1 ? "unhandled error" : (n ? "unhandled errors" : "errors"),
        "fx-chip-errors" + (n ? " bad" : ""));
      this._chipGoes(chip, "errors", n ? unhandled[0].row : -1, "The root-cause failure");
    }
    if (handled.length) {
      const chip = U.chip(chips, U.fmtInt(handled.length), "handled", "fx-chip-handled");
      this._chipGoes(chip, "errors", handled[0].row, "Failures a caller handled (the run went on)");
    }
  };

  // Clicking a header chip shows its overview section and selects the call it points at.
  TraceApp.prototype._chipGoes = function (chip, section, row, title) {
    const self = this;
    chip.classList.add("fx-chip-link");
    chip.tabIndex = 0;
    chip.setAttribute("role", "button");
    chip.title = title + " (click)";
    chip.dataset.section = section;
    const go = function () {
      self.showOverview(true);
      self.overview.show(section);
      if (row >= 0) self.select(row, true);
    };
    chip.addEventListener("click", go);
    chip.addEventListener("keydown", function (e) {
      if (e.key === "Enter" || e.key === " ") { e.preventDefault(); e.stopPropagation(); go(); }
    });
  };

  TraceApp.prototype.showOverview = function (on) {
    this.overviewShown = on;
    this.top.classList.toggle("fx-ov-hidden", !on);
    if (this.graph && this.scene !== null) this.graph.fit(false);
  };

  TraceApp.prototype._tableHead = function () {
    const self = this;
    const head = U.el("div", "fx-row fx-table-head");
    const call = U.el("div", "fx-cell-name", "Call");
    const tool = function (text, title, open) {
      const b = U.el("button", "fx-btn fx-tree-tool", text);
      b.type = "button";
      b.title = title;
      b.addEventListener("click", function () { self.expandAll(open); });
      call.appendChild(b);
    };
    tool("Expand all", "Open every call (past 30 the graph shows a summary around the selection)", true);
    tool("Collapse all", "Close every call but the roots", false);
    head.appendChild(call);
    head.appendChild(U.el("div", "fx-cell-lat", "Latency \u00b7 self"));
    head.appendChild(this.timeline.axis(U.el("div", "fx-cell-bar")));
    return head;
  };

  TraceApp.createRow = function () {
    const row = U.el("div", "fx-trace-row");
    const name = U.el("div", "fx-cell-name");
    const parts = {
      indent: U.el("span", "fx-indent"), caret: U.el("span", "fx-caret"), dot: U.el("span", "fx-dot"),
      icon: U.el("span", "fx-erricon"), name: U.el("span", "fx-name"), kind: U.el("span", "fx-kindtag"),
      tags: U.el("span", "fx-tags fx-rowtags"), model: U.el("span", "fx-fact fx-fact-model"),
      tokens: U.el("span", "fx-fact fx-fact-tokens"), cost: U.el("span", "fx-fact fx-fact-cost"),
      lat: U.el("div", "fx-cell-lat"), total: U.el("span", "fx-lat-total"),
      self: U.el("span", "fx-lat-self"), bar: U.el("div", "fx-bar"),
    };
    name.appendChild(parts.indent);
    name.appendChild(parts.caret);
    name.appendChild(parts.dot);
    name.appendChild(parts.icon);
    name.appendChild(parts.name);
    name.appendChild(parts.kind);
    name.appendChild(parts.tags);
    name.appendChild(parts.model);
    name.appendChild(parts.tokens);
    name.appendChild(parts.cost);
    row.appendChild(name);
    parts.lat.appendChild(parts.total);
    parts.lat.appendChild(parts.self);
    row.appendChild(parts.lat);
    const track = U.el("div", "fx-cell-bar");
    track.appendChild(parts.bar);
    row.appendChild(track);
    row._parts = parts;
    return row;
  };

  TraceApp.prototype._fillRow = function (row, i) {
    const node = this.nodes[i];
    const p = row._parts;
    const status = node.view_status || "ok";
    p.indent.style.width = this.depth[i] * 16 + "px";
    p.caret.textContent = this.kids[i] ? (this.expanded[i] ? "\u25be" : "\u25b8") : "";
    p.dot.className = "fx-dot " + status;
    const icon = TraceApp.statusIcon(node);
    p.icon.textContent = icon.text;
    p.icon.className = "fx-erricon " + icon.cls;
    p.icon.title = icon.title;
    p.name.textContent = U.nameOf(node);
    p.name.className = "fx-name" + (this.matches && this.matches[i] ? " fx-hit" : "");
    p.kind.textContent = U.visible(node.kind || "chain");
    p.kind.className = "fx-kindtag kind-" + (/^[a-z]+$/.test(node.kind || "") ? node.kind : "other");
    D.fillTags(p.tags, node, this.data.tag_prefix);
    const facts = O.llmParts(node);
    p.model.textContent = facts.model;
    p.model.title = facts.model;
    p.tokens.textContent = facts.tokens;
    p.cost.textContent = facts.cost;
    p.total.textContent = node.ghost === true ? "not run" : U.fmtMs(node.latency_ms);
    p.self.textContent = U.isNum(node.self_ms) && this.kids[i] ? U.fmtMs(node.self_ms) : "";
    const ended = U.isNum(node.latency_ms);
    p.bar.className = "fx-bar " + status + (ended && !node.incomplete ? "" : " open") + (this.critical[i] ? " crit" : "");
    this.timeline.placeBar(p.bar, i);
    row.classList.toggle("selected", i === this.selected);
  };

  // How a call ended, as a row icon: a failure raised here and not handled, one handled by a
  // caller, one passed up from a child, a cancelled or interrupted call; nothing when ok.
  TraceApp.statusIcon = function (node) {
    if (node.status === "error") {
      if (node.error_origin === false) return { text: "\u2191", cls: "passed", title: "failed: passed up from a child" };
      if (node.error_handled) return { text: "\u21ba", cls: "handled", title: "failed here, handled by a caller" };
      return { text: "\u2716", cls: "unhandled", title: "failed here, not handled" };
    }
    if (node.status === "cancelled") return { text: "\u2298", cls: "stopped", title: "cancelled" };
    if (node.status === "interrupted") return { text: "\u23f8", cls: "stopped", title: "interrupted" };
    return { text: "", cls: "", title: "" };
  };

  Object.assign(TraceApp.prototype, FX.traceActions);
  return TraceApp;
})();
