// trace_actions.js -> FX.traceActions: what the trace viewer does -- recompute visible rows,
// redraw the graph, select, expand/collapse, filter by name or errors, keyboard navigation.
// Public: the methods trace_app.js mixes into FX.TraceApp.prototype (refresh, select, toggle,
// applyFilter, nextMatch, nextError, move, drawGraph (every box, or the summary of
// trace_summary.js past its SUMMARY_OVER calls), bindKeys).

FX.traceActions = (function () {
  const U = FX.util;
  const L = FX.layout;
  const D = FX.detail;
  const Q = FX.search;
  const ST = FX.state;
  const SUM = FX.traceSummary;
  const BOX_W = 184;
  const BOX_H = 50;
  const SUMMARY_W = 150;
  const actions = {};

  actions.refresh = function (refit) {
    const n = this.nodes.length;
    const visible = [];
    for (let i = 0; i < n;) {
      if (this.keep && !this.keep[i]) { i += this.size[i]; continue; }
      visible.push(i);
      i += this.expanded[i] ? 1 : this.size[i];
    }
    this.visible = visible;
    this.posOf = new Map();
    visible.forEach((i, pos) => this.posOf.set(i, pos));
    this.rows.setItems(visible);
    this.drawGraph(refit);
  };

  // The graph: every visible row as a box while there are at most SUMMARY_OVER of them, else
  // the summary of the selection's neighbourhood (trace_summary.js): groups of repeated
  // siblings, folded subtrees and levels.
  actions.drawGraph = function (refit) {
    const summary = this.visible.length > SUM.SUMMARY_OVER;
    this.graphSummary = summary;
    const boxes = summary ? SUM.summarize(summaryTree(this), this.selected) : allBoxes(this);
    // Pick the orientation that fits the pane at the larger scale: wide shallow trees
    // (typical agent runs) read best left to right, deep narrow ones top to bottom.
    const box = this.graph.svg.getBoundingClientRect();
    // A summary's boxes are narrower: four levels of it fit a 1280 px window's graph pane.
    const width = summary ? SUMMARY_W : BOX_W;
    const opt = { w: width, h: BOX_H, gapX: 18, gapY: 44, horizontal: false };
    const down = L.tree(boxes, opt);
    const across = L.tree(boxes, Object.assign({}, opt, { horizontal: true }));
    const fitScale = function (p) {
      const e = L.extent(p, width, BOX_H);
      return Math.min((box.width || 800) / e.w, (box.height || 400) / e.h);
    };
    const horizontal = fitScale(across) > fitScale(down);
    const pos = horizontal ? across : down;
    const scene = { nodes: [], edges: [], horizontal: horizontal };
    boxes.forEach((b, k) => {
      scene.nodes.push(Object.assign({ key: b.row, x: pos[k].x, y: pos[k].y, w: width, h: BOX_H }, boxLook(this, b)));
      const p = b.parent;
      if (p >= 0) {
        scene.edges.push({ points: horizontal
          ? [{ x: pos[p].x + width / 2, y: pos[p].y }, { x: pos[k].x - width / 2 - 2, y: pos[k].y }]
          : [{ x: pos[p].x, y: pos[p].y + BOX_H / 2 }, { x: pos[k].x, y: pos[k].y - BOX_H / 2 - 2 }] });
      }
    });
    this.graph.draw(scene);
    if (refit || summary) this.graph.fit(false);
  };

  // Every visible row, one box each, a collapsed call carrying the count under it.
  function allBoxes(app) {
    const slot = new Map();
    return app.visible.map((i, k) => {
      slot.set(i, k);
      const p = app.parent[i];
      const hidden = app.kids[i] && !app.expanded[i] ? app.size[i] - 1 : 0;
      return { type: "call", row: i, rows: [i], hidden: hidden, parent: p >= 0 && slot.has(p) ? slot.get(p) : -1 };
    });
  }

  function summaryTree(app) {
    const nodes = app.nodes;
    const keep = app.keep;
    return {
      count: nodes.length, parent: app.parent, size: app.size,
      name: function (i) { return U.nameOf(nodes[i]); },
      failed: function (i) { return nodes[i].status === "error"; },
      allowed: function (i) { return !keep || keep[i] === 1; },
    };
  }

  // A box's lines, colour and marks: a call (name; kind, latency, tokens), a group of repeated
  // calls (name x N; how many, their total time, how many failed), "more" and folded levels.
  function boxLook(app, b) {
    const node = app.nodes[b.row];
    const hit = (rows) => app.matches ? rows.some((i) => app.matches[i]) : false;
    if (b.type === "call") {
      const tokens = U.tokens(node);
      const second = [node.kind || "chain", node.ghost === true ? "not run" : U.fmtMs(node.latency_ms)];
      if (tokens) second.push(U.fmtTokensShort(tokens));
      return {
        status: node.view_status || "ok",
        cls: (hit(b.rows) ? "fx-hit" : "") + (app.critical[b.row] ? " fx-crit" : ""),
        lines: [U.ellipsis(U.nameOf(node), 24), second.join(" \u00b7 ")],
        badge: b.hidden ? "+" + U.fmtInt(b.hidden) : "",
      };
    }
    if (b.type === "group") {
      let total = 0;
      let failed = 0;
      let status = "ok";
      for (const i of b.rows) {
        const n = app.nodes[i];
        if (U.isNum(n.latency_ms)) total += n.latency_ms;
        if (n.status === "error") failed++;
        if (n.view_status === "error") status = "error";
        else if (n.view_status === "slow" && status !== "error") status = "slow";
      }
      const second = [U.fmtCount(b.rows.length, "call", "calls"), U.fmtMs(total) + " total"];
      if (failed) second.push(failed + " failed");
      return {
        status: status, cls: "fx-sibgroup" + (hit(b.rows) ? " fx-hit" : ""), badge: "",
        lines: [U.ellipsis(U.nameOf(node), 20) + " \u00d7" + U.fmtInt(b.rows.length), second.join(" \u00b7 ")],
      };
    }
    if (b.type === "more") {
      return { status: "plain", cls: "fx-more", badge: "",
        lines: ["+" + U.fmtCount(b.rows.length, "more call", "more calls"), "listed in the tree"] };
    }
    return { status: "plain", cls: "fx-more", badge: "",
      lines: ["\u22ee " + U.fmtCount(b.rows.length, "level", "levels") + " folded", "from " + U.ellipsis(U.nameOf(node), 18)] };
  }

  actions.select = function (i, reveal) {
    if (i < 0 || i >= this.nodes.length) return;
    let hidden = false;
    for (let p = this.parent[i]; p >= 0; p = this.parent[p]) {
      if (!this.expanded[p]) { this.expanded[p] = 1; hidden = true; }
    }
    if (this.keep && !this.keep[i]) return;
    if (hidden) this.refresh(false);
    this.selected = i;
    this.rows.reveal(this.posOf.get(i));
    if (this.graphSummary) this.drawGraph(false); // the neighbourhood moved with the selection
    this.graph.select(i, reveal);
    if (this.timeline) this.timeline.onSelect(i);
    const path = [];
    for (let p = this.parent[i]; p >= 0; p = this.parent[p]) path.unshift(U.nameOf(this.nodes[p]));
    D.traceDetail(this.panel, this.nodes[i], {
      path: path, slowShare: this.slowShare, link: () => this.link(), tagPrefix: this.data.tag_prefix,
    });
    if (this.matches && this.matches[i]) this.matchPosition();
    for (const fn of this.onSelect) fn(i);
    this.saveState();
  };

  // Keep selection, search, filter and overview in the URL fragment (a reload or a shared
  // link comes back to them). replaceState: moving around adds no history entries.
  actions.saveState = function () {
    const node = this.selected >= 0 ? this.nodes[this.selected] : null;
    const st = Object.assign({}, this.state, {
      call: node ? node.span_id || node.id || "" : "",
      q: this.search.value.trim(),
      errors: this.errorsOnly.checked,
      overview: this.overviewShown === false ? "0" : "",
    });
    this.state = st;
    const hash = ST.format(st);
    if (hash === location.hash || (!hash && !location.hash)) return;
    try {
      history.replaceState(null, "", hash || location.pathname + location.search);
    } catch (err) {
      location.hash = hash;
    }
  };

  // The address of this page with the current state: what "Copy link" copies.
  actions.link = function () {
    return location.href.split("#")[0] + ST.format(this.state);
  };

  // Open every call (open) or close every one (not open); the selection stays, or moves
  // to its root when closing hid it.
  actions.expandAll = function (open) {
    const n = this.nodes.length;
    for (let i = 0; i < n; i++) this.expanded[i] = open && this.kids[i] ? 1 : 0;
    this.refresh(true);
    if (this.selected >= 0) {
      const target = open ? this.selected : this.rootOf(this.selected);
      if (!this.keep || this.keep[target]) this.select(target, true);
    }
  };

  actions.rootOf = function (i) {
    while (this.parent[i] >= 0) i = this.parent[i];
    return i;
  };

  // The trace as flow-xray JSON ({version, totals, nodes: [trees]}), rebuilt from the rows.
  actions.traceJson = function () {
    const made = this.nodes.map(function (row) {
      const copy = {};
      for (const k in row) if (k !== "parent" && k !== "view_status" && k !== "self_ms") copy[k] = row[k];
      copy.children = [];
      return copy;
    });
    const roots = [];
    for (let i = 0; i < made.length; i++) {
      if (this.parent[i] >= 0) made[this.parent[i]].children.push(made[i]);
      else roots.push(made[i]);
    }
    const out = { version: 1, nodes: roots };
    if (this.data.totals) out.totals = this.data.totals;
    return JSON.stringify(out, null, 1);
  };

  actions.downloadJson = function () {
    const title = String(this.data.title || "trace").replace(/[^\w.-]+/g, "_").slice(0, 80);
    U.download(title + ".json", this.traceJson());
  };

  actions.toggle = function (i) {
    if (!this.kids[i]) return;
    this.expanded[i] = this.expanded[i] ? 0 : 1;
    this.refresh(false);
    if (this.selected >= 0 && this.posOf.has(this.selected)) this.graph.select(this.selected, false);
  };

  // Filter by the search query (search.js) and the errors-only box: matches and their
  // ancestors stay. `restoring`: from the URL on open (the caller selects a call).
  actions.applyFilter = function (restoring) {
    const query = this.search.value.trim();
    const errorsOnly = this.errorsOnly.checked;
    const n = this.nodes.length;
    this.appliedQuery = query;
    this.appliedErrors = errorsOnly;
    this.matchPos.textContent = "";
    this.search.classList.remove("fx-bad-query");
    this.search.title = this.search.title.split("\n")[0];
    if (!query && !errorsOnly) {
      if (this.keep) {
        this.expanded = this.saved;
        this.keep = this.matches = this.saved = null;
      }
      this.matchInfo.textContent = "";
    } else {
      if (!this.keep) this.saved = this.expanded;
      const parsed = Q.parse(query);
      if (parsed.errors.length) {
        this.search.classList.add("fx-bad-query");
        this.search.title += "\n" + parsed.errors.join("; ");
      }
      const test = Q.matcher(parsed);
      const matches = new Uint8Array(n);
      const keep = new Uint8Array(n);
      let count = 0;
      for (let i = 0; i < n; i++) {
        const node = this.nodes[i];
        if ((!errorsOnly || node.view_status === "error") && (!query || test(node))) {
          matches[i] = keep[i] = 1;
          count++;
        }
      }
      // Parents precede children, so one backward pass marks every ancestor of a match.
      for (let i = n - 1; i > 0; i--) if (keep[i] && this.parent[i] >= 0) keep[this.parent[i]] = 1;
      this.matches = matches;
      this.matchCount = count;
      this.keep = keep;
      this.expanded = keep.slice();
      this.matchInfo.textContent = count ? U.fmtCount(count, "match", "matches") : "no match";
    }
    this.refresh(true);
    if (restoring) return;
    // Keep the selection when it survives the filter: select() re-opens its ancestors, so
    // clearing a search leaves the found call on screen instead of losing the place.
    if (this.selected >= 0 && (!this.keep || this.keep[this.selected])) this.select(this.selected, true);
    else if (this.matches) this.nextMatch(1);
    this.saveState();
  };

  // "2 / 5" beside the search box: which match is selected.
  actions.matchPosition = function () {
    let k = 0;
    for (let i = 0; i <= this.selected; i++) if (this.matches[i]) k++;
    this.matchPos.textContent = k + " / " + this.matchCount;
  };

  actions.nextMatch = function (delta, test) {
    test = test || ((i) => this.matches && this.matches[i]);
    const vis = this.visible;
    if (!vis.length) return;
    const here = this.posOf.has(this.selected) ? this.posOf.get(this.selected) : -1;
    for (let step = 1; step <= vis.length; step++) {
      const pos = (((here + delta * step) % vis.length) + vis.length) % vis.length;
      if (test(vis[pos])) { this.select(vis[pos], true); return; }
    }
  };

  actions.nextError = function () {
    const n = this.nodes.length;
    for (let step = 1; step <= n; step++) {
      const i = (Math.max(this.selected, 0) + step) % n;
      if (this.nodes[i].view_status === "error" && (!this.keep || this.keep[i])) {
        this.select(i, true);
        return;
      }
    }
  };

  actions.move = function (delta) {
    const vis = this.visible;
    if (!vis.length) return;
    const here = this.posOf.has(this.selected) ? this.posOf.get(this.selected) : -1;
    const pos = here < 0 ? 0 : Math.max(0, Math.min(vis.length - 1, here + delta));
    this.select(vis[pos], true);
  };

  actions.bindKeys = function () {
    const self = this;
    document.addEventListener("keydown", function (e) {
      if (e.ctrlKey || e.metaKey || e.altKey) return;
      if (self.help.isOpen()) { // the help is modal: ? and Esc close it, nothing else acts
        if (e.key === "?" || e.key === "Escape") self.help.close();
        e.preventDefault();
        e.stopImmediatePropagation();
        return;
      }
      if (e.target === self.search) {
        if (e.key === "Escape") {
          self.search.value = "";
          self.search.blur();
          self.applyFilter();
        } else if (e.key === "Enter") {
          // Enter: search (when the query changed), then next match; Shift+Enter: previous.
          e.preventDefault();
          const stale = self.search.value.trim() !== self.appliedQuery || self.errorsOnly.checked !== self.appliedErrors;
          if (stale) self.applyFilter();
          else self.nextMatch(e.shiftKey ? -1 : 1);
        }
        return;
      }
      const sel = self.selected;
      const actions = {
        ArrowDown: () => self.move(1), j: () => self.move(1),
        ArrowUp: () => self.move(-1), k: () => self.move(-1),
        PageDown: () => self.move(20), PageUp: () => self.move(-20),
        Home: () => self.move(-Infinity), End: () => self.move(Infinity),
        ArrowRight: () => {
          if (sel < 0) return self.move(1);
          if (self.kids[sel] && !self.expanded[sel]) self.toggle(sel);
          else if (self.kids[sel]) self.move(1);
        },
        ArrowLeft: () => {
          if (sel < 0) return;
          if (self.kids[sel] && self.expanded[sel]) self.toggle(sel);
          else if (self.parent[sel] >= 0) self.select(self.parent[sel], true);
        },
        Enter: () => { if (sel >= 0) self.toggle(sel); },
        " ": () => { if (sel >= 0) self.toggle(sel); },
        "/": () => { self.search.focus(); self.search.select(); },
        n: () => self.nextMatch(1), N: () => self.nextMatch(-1),
        e: () => self.nextError(),
        f: () => self.graph.fit(true),
        "?": () => self.help.open(),
        Escape: () => {
          if (self.search.value || self.errorsOnly.checked) {
            self.search.value = "";
            self.errorsOnly.checked = false;
            self.applyFilter();
          }
        },
      };
      actions.l = actions.ArrowRight;
      actions.h = actions.ArrowLeft;
      const isField = e.target.tagName === "INPUT" || e.target.tagName === "BUTTON" || e.target.tagName === "SUMMARY";
      if (isField && (e.key === " " || e.key === "Enter")) return;
      const action = actions[e.key];
      if (!action) return;
      e.preventDefault();
      action();
    });
  };

  return actions;
})();
