// diff_app.js -> FX.diffApp: the diff page -- header with both runs' totals and the summary
// line, filters (only changed, only errors, slower than X%, name search), the aligned rows,
// the pair detail, keyboard navigation between changes, and the selection and filters in the
// URL fragment (state.js).
//
// Rows arrive flat in pre-order with parent indices, so every subtree is a contiguous range;
// expanding, collapsing and filtering are array scans.

FX.diffApp = (function () {
  const U = FX.util;
  const D = FX.detail;
  const V = FX.diffView;
  const ST = FX.state;
  const OPEN_BUDGET = 400;
  const MIN_SLOWER_MS = 1;

  class DiffApp {
    constructor(data) {
      this.data = data;
      this.calls = Array.isArray(data.calls) ? data.calls : [];
      this.sides = [data.before || {}, data.after || {}];
      this.nodes = this.sides.map(function (s) { return Array.isArray(s.nodes) ? s.nodes : []; });
      this.labels = this.sides.map(function (s, k) { return s.label || (k ? "after" : "before"); });
      this.slowShare = typeof data.slow_share === "number" ? data.slow_share : 0.2;
      this.index();
      this.expanded = this.initialExpansion();
      this.saved = null;
      this.keep = null;
      this.matches = null;
      this.selected = -1;
      this.state = ST.parse(location.hash);
      this.buildUi();
      this.refresh();
      if (this.calls.length) this.restoreState();
      else D.emptyDetail(this.panel, "Neither run has any calls.");
    }

    // The URL fragment ("#row=12&q=fetch&changed=1&errors=1&slower=20"): the selected row
    // (the pair's index: the same page always has the same rows) and the filters.
    restoreState() {
      const st = this.state;
      if (st.q || st.changed || st.errors || st.slower) {
        this.search.value = st.q || "";
        this.onlyChanged.checked = st.changed === "1";
        this.onlyErrors.checked = Boolean(st.errors);
        this.slower.value = st.slower && isFinite(Number(st.slower)) ? st.slower : "";
        this.applyFilter();
      }
      const row = /^\d+$/.test(st.row || "") ? Number(st.row) : -1;
      const first = this.nextChangeFrom(-1, 1);
      if (row >= 0 && row < this.calls.length && (!this.keep || this.keep[row])) this.select(row);
      else if (!this.keep) this.select(first >= 0 ? first : 0);
      this.saveState();
    }

    saveState() {
      this.state = Object.assign({}, this.state, {
        row: this.selected >= 0 ? String(this.selected) : "",
        q: this.search.value.trim(),
        changed: this.onlyChanged.checked,
        errors: this.onlyErrors.checked,
        slower: this.slower.value.trim(),
      });
      const hash = ST.format(this.state);
      if (hash === location.hash || (!hash && !location.hash)) return;
      try {
        history.replaceState(null, "", hash || location.pathname + location.search);
      } catch (err) {
        location.hash = hash;
      }
    }

    index() {
      const n = this.calls.length;
      this.parent = new Int32Array(n);
      this.depth = new Int32Array(n);
      this.size = new Int32Array(n).fill(1);
      this.kids = new Int32Array(n);
      this.changedBelow = new Uint8Array(n); // the row or a row under it differs
      for (let i = 0; i < n; i++) {
        const p = typeof this.calls[i].parent === "number" && this.calls[i].parent < i ? this.calls[i].parent : -1;
        this.parent[i] = p;
        if (p >= 0) {
          this.depth[i] = this.depth[p] + 1;
          this.kids[p]++;
        }
        if (this.calls[i].change !== "same") this.changedBelow[i] = 1;
      }
      for (let i = n - 1; i > 0; i--) {
        const p = this.parent[i];
        if (p < 0) continue;
        this.size[p] += this.size[i];
        if (this.changedBelow[i]) this.changedBelow[p] = 1;
      }
    }

    // Open every call with a change under it; then breadth-first while the rows stay
    // within OPEN_BUDGET, so a small diff opens whole and a big one opens on its changes.
    initialExpansion() {
      const n = this.calls.length;
      const expanded = new Uint8Array(n);
      let visible = 0;
      for (let i = 0; i < n; i += this.size[i]) visible++;
      for (let i = 0; i < n; i++) {
        if (this.kids[i] && this.changedBelow[i] && this.calls[i].change !== "added" && this.calls[i].change !== "removed") {
          expanded[i] = 1;
          visible += this.kids[i];
        }
      }
      const queue = [];
      for (let i = 0; i < n; i += this.size[i]) queue.push(i);
      for (let head = 0; head < queue.length; head++) {
        const i = queue[head];
        if (!expanded[i] && this.kids[i]) {
          if (visible + this.kids[i] > OPEN_BUDGET) continue;
          expanded[i] = 1;
          visible += this.kids[i];
        }
        if (!this.kids[i]) continue;
        for (let c = i + 1; c < i + this.size[i]; c += this.size[c]) queue.push(c);
      }
      return expanded;
    }

    buildUi() {
      const top = U.header(this.data.title || "flow-xray diff");
      const ta = this.sides[0].totals || {};
      const tb = this.sides[1].totals || {};
      const pair = function (a, b, fmt) { return fmt(a) + " \u2192 " + fmt(b); };
      const num = function (v) { return typeof v === "number" ? U.fmtInt(v) : "\u2014"; };
      const ms = function (v) { return typeof v === "number" ? U.fmtMs(v) : "\u2014"; };
      const cost = V.fmtCost;
      U.chip(top.chips, pair(ta.nodes, tb.nodes, num), "calls");
      U.chip(top.chips, pair(ta.wall_time_ms, tb.wall_time_ms, ms), "wall time");
      // Failures as the trace page counts them: unhandled (red when there are more) apart from
      // those a caller handled (the run went on).
      const unhandled = function (t) {
        return typeof t.errors === "number" ? t.errors - (typeof t.handled_errors === "number" ? t.handled_errors : 0) : null;
      };
      const ua = unhandled(ta);
      const ub = unhandled(tb);
      U.chip(top.chips, pair(ua, ub, num), "unhandled errors", (ub || 0) > (ua || 0) ? "bad" : "");
      if (ta.handled_errors || tb.handled_errors) {
        U.chip(top.chips, pair(ta.handled_errors || 0, tb.handled_errors || 0, num), "handled", "fx-chip-handled");
      }
      U.chip(top.chips, pair(ta.total_tokens, tb.total_tokens, num), "tokens");
      U.chip(top.chips, pair(ta.cost_usd, tb.cost_usd, cost), "cost");
      document.body.appendChild(top.header);

      // The verdict and summary line, then the filters, on the bar under the header.
      const bar = U.el("div", "fx-diff-summary");
      bar.appendChild(U.el("span", "fx-diff-verdict " + (this.data.equal ? "equal" : "differs"),
        this.data.equal ? "No differences" : "The runs differ"));
      bar.appendChild(U.el("span", "fx-diff-line", this.data.summary || ""));
      const controls = U.el("div", "fx-controls fx-diff-controls");
      this.search = U.el("input", "fx-search");
      this.search.type = "search";
      this.search.placeholder = "Search names  ( / )";
      this.search.setAttribute("aria-label", "Search by name");
      controls.appendChild(this.search);
      this.onlyChanged = this.toggle(controls, "Only changed", "fx-only-changed");
      this.onlyErrors = this.toggle(controls, "Only errors", "fx-only-errors");
      const slower = U.el("label", "fx-toggle fx-slower");
      slower.appendChild(U.el("span", null, "Slower by \u2265"));
      this.slower = U.el("input", "fx-slower-input");
      this.slower.type = "number";
      this.slower.min = "0";
      this.slower.step = "5";
      this.slower.placeholder = "%";
      this.slower.setAttribute("aria-label", "Only calls slower by at least this many percent");
      this.slower.title = "Only calls at least this much slower in the second run (and by 1 ms or more)";
      slower.appendChild(this.slower);
      slower.appendChild(U.el("span", null, "%"));
      controls.appendChild(slower);
      this.matchInfo = U.el("span", "fx-match-info", "");
      controls.appendChild(this.matchInfo);
      bar.appendChild(controls);
      document.body.appendChild(bar);

      const main = U.el("main", "fx-diff-main");
      const table = U.el("div", "fx-pane fx-diff-table");
      const head = U.el("div", "fx-diff-row fx-diff-head");
      head.appendChild(U.el("div", "fx-diff-mark", ""));
      head.appendChild(U.el("div", "fx-diff-side", this.labels[0]));
      head.appendChild(U.el("div", "fx-diff-delta", "\u0394 latency"));
      head.appendChild(U.el("div", "fx-diff-side", this.labels[1]));
      table.appendChild(head);
      const self = this;
      this.rows = new V.RowList(table, {
        createRow: V.createRow,
        fillRow: function (row, i) { V.fillRow(row, i, self.view()); },
        onClick: function (i, e) {
          if (e.target.classList.contains("fx-caret") && e.target.textContent) self.toggleRow(i);
          else self.select(i);
        },
      });
      main.appendChild(table);
      this.panel = U.el("section", "fx-detail fx-diff-detail");
      this.panel.setAttribute("aria-label", "Selected pair of calls");
      main.appendChild(this.panel);
      document.body.appendChild(main);
      const footer = U.el("footer", "fx-help");
      footer.appendChild(U.el("span", "fx-help-keys",
        "? help \u00b7 n / N next / previous change \u00b7 \u2191\u2193 or j k move \u00b7 \u2190 \u2192 collapse / expand \u00b7 " +
        "/ search \u00b7 c only changed \u00b7 e next error \u00b7 Esc clear"));
      this.help = new FX.help.Help(FX.help.DIFF);
      const helpButton = U.el("button", "fx-btn fx-help-open", "? Help");
      helpButton.type = "button";
      helpButton.title = "Keys and filters ( ? )";
      helpButton.addEventListener("click", () => this.help.toggle());
      footer.appendChild(helpButton);
      document.body.appendChild(footer);
      const refilter = U.debounce(function () { self.applyFilter(); }, 120);
      this.search.addEventListener("input", refilter);
      this.slower.addEventListener("input", refilter);
      this.onlyChanged.addEventListener("change", function () { self.applyFilter(); });
      this.onlyErrors.addEventListener("change", function () { self.applyFilter(); });
      this.bindKeys();
    }

    toggle(parent, text, cls) {
      const label = U.el("label", "fx-toggle " + cls);
      const box = U.el("input");
      box.type = "checkbox";
      label.appendChild(box);
      label.appendChild(U.el("span", null, text));
      parent.appendChild(label);
      return box;
    }

    view() {
      return {
        calls: this.calls, nodes: this.nodes, depth: this.depth, kids: this.kids,
        expanded: this.expanded, selected: this.selected, matches: this.matches, hits: this.hits,
      };
    }

    refresh() {
      const visible = [];
      for (let i = 0; i < this.calls.length;) {
        if (this.keep && !this.keep[i]) { i += this.size[i]; continue; }
        visible.push(i);
        i += this.expanded[i] ? 1 : this.size[i];
      }
      this.visible = visible;
      this.posOf = new Map();
      visible.forEach((i, pos) => this.posOf.set(i, pos));
      this.rows.setItems(visible);
    }

    // A row passes the filters when it meets every one that is set.
    passes(i, query, slowerBy) {
      const call = this.calls[i];
      if (this.onlyChanged.checked && call.change === "same") return false;
      if (this.onlyErrors.checked) {
        const status = call.status || [];
        if (status[0] !== "error" && status[1] !== "error") return false;
      }
      if (slowerBy !== null) {
        // At least that share slower, and by a millisecond or more: sub-millisecond calls
        // double in time by chance.
        const share = V.slowdown(call);
        const lat = call.latency_ms || [];
        if (share === null || share * 100 < slowerBy || lat[1] - lat[0] < MIN_SLOWER_MS) return false;
      }
      if (query && String(call.name).toLowerCase().indexOf(query) < 0) return false;
      return true;
    }

    applyFilter() {
      const query = this.search.value.trim().toLowerCase();
      const raw = this.slower.value.trim();
      const slowerBy = raw !== "" && isFinite(Number(raw)) ? Number(raw) : null;
      const active = query || slowerBy !== null || this.onlyChanged.checked || this.onlyErrors.checked;
      const n = this.calls.length;
      if (!active) {
        if (this.keep) this.expanded = this.saved;
        this.keep = this.matches = this.hits = this.saved = null;
        this.matchInfo.textContent = "";
      } else {
        if (!this.keep) this.saved = this.expanded;
        const matches = new Uint8Array(n);
        const keep = new Uint8Array(n);
        let count = 0;
        for (let i = 0; i < n; i++) {
          if (this.passes(i, query, slowerBy)) { matches[i] = keep[i] = 1; count++; }
        }
        // Parents precede children: one backward pass keeps every ancestor of a match.
        for (let i = n - 1; i > 0; i--) if (keep[i] && this.parent[i] >= 0) keep[this.parent[i]] = 1;
        this.matches = matches;
        this.hits = query ? matches : null;
        this.keep = keep;
        this.expanded = keep.slice();
        this.matchInfo.textContent = count ? U.fmtInt(count) + " of " + U.fmtCount(n, "call", "calls") : "no match";
      }
      this.refresh();
      if (this.selected >= 0 && (!this.keep || this.keep[this.selected])) this.select(this.selected);
      else if (this.visible.length) {
        const first = this.visible.find((i) => !this.matches || this.matches[i]);
        this.select(first === undefined ? this.visible[0] : first);
      } else D.emptyDetail(this.panel, "No call matches the filters.");
      this.saveState();
    }

    select(i) {
      if (i < 0 || i >= this.calls.length) return;
      if (this.keep && !this.keep[i]) return;
      let opened = false;
      for (let p = this.parent[i]; p >= 0; p = this.parent[p]) {
        if (!this.expanded[p]) { this.expanded[p] = 1; opened = true; }
      }
      if (opened) this.refresh();
      this.selected = i;
      this.rows.reveal(this.posOf.get(i));
      const call = this.calls[i];
      const a = call.a >= 0 ? this.nodes[0][call.a] : null;
      const b = call.b >= 0 ? this.nodes[1][call.b] : null;
      const paths = [[], []];
      for (let p = this.parent[i]; p >= 0; p = this.parent[p]) {
        const up = this.calls[p];
        if (up.a >= 0) paths[0].unshift(V.nameOf(this.nodes[0][up.a]));
        if (up.b >= 0) paths[1].unshift(V.nameOf(this.nodes[1][up.b]));
      }
      V.pairDetail(this.panel, call, a, b, { labels: this.labels, paths: paths, slowShare: this.slowShare });
      if (this.state) this.saveState();
    }

    toggleRow(i) {
      if (!this.kids[i]) return;
      this.expanded[i] = this.expanded[i] ? 0 : 1;
      this.refresh();
    }

    // The next row (in pre-order, wrapping) that differs and passes the filters; -1 if none.
    nextChangeFrom(from, delta) {
      const n = this.calls.length;
      for (let step = 1; step <= n; step++) {
        const i = (((from + delta * step) % n) + n) % n;
        if (this.calls[i].change !== "same" && (!this.keep || this.keep[i])) return i;
      }
      return -1;
    }

    nextError() {
      const n = this.calls.length;
      for (let step = 1; step <= n; step++) {
        const i = (Math.max(this.selected, 0) + step) % n;
        const status = this.calls[i].status || [];
        if ((status[0] === "error" || status[1] === "error") && (!this.keep || this.keep[i])) {
          this.select(i);
          return;
        }
      }
    }

    move(delta) {
      const vis = this.visible;
      if (!vis.length) return;
      const here = this.posOf.has(this.selected) ? this.posOf.get(this.selected) : -1;
      const pos = here < 0 ? 0 : Math.max(0, Math.min(vis.length - 1, here + delta));
      this.select(vis[pos]);
    }

    bindKeys() {
      const self = this;
      document.addEventListener("keydown", function (e) {
        if (e.ctrlKey || e.metaKey || e.altKey) return;
        if (self.help.isOpen()) { // the help is modal: ? and Esc close it, nothing else acts
          if (e.key === "?" || e.key === "Escape") self.help.close();
          e.preventDefault();
          return;
        }
        if (e.target === self.search || e.target === self.slower) {
          if (e.key === "Escape") {
            e.target.value = "";
            e.target.blur();
            self.applyFilter();
          } else if (e.key === "Enter") {
            e.preventDefault();
            self.applyFilter();
            e.target.blur();
          }
          return;
        }
        const sel = self.selected;
        const jump = function (delta) {
          const i = self.nextChangeFrom(sel, delta);
          if (i >= 0) self.select(i);
        };
        const actions = {
          ArrowDown: () => self.move(1), j: () => self.move(1),
          ArrowUp: () => self.move(-1), k: () => self.move(-1),
          PageDown: () => self.move(20), PageUp: () => self.move(-20),
          Home: () => self.move(-Infinity), End: () => self.move(Infinity),
          n: () => jump(1), "]": () => jump(1), N: () => jump(-1), "[": () => jump(-1),
          ArrowRight: () => { if (sel >= 0 && self.kids[sel] && !self.expanded[sel]) self.toggleRow(sel); else self.move(1); },
          ArrowLeft: () => {
            if (sel < 0) return;
            if (self.kids[sel] && self.expanded[sel]) self.toggleRow(sel);
            else if (self.parent[sel] >= 0) self.select(self.parent[sel]);
          },
          Enter: () => { if (sel >= 0) self.toggleRow(sel); },
          " ": () => { if (sel >= 0) self.toggleRow(sel); },
          "/": () => { self.search.focus(); self.search.select(); },
          c: () => { self.onlyChanged.checked = !self.onlyChanged.checked; self.applyFilter(); },
          e: () => self.nextError(),
          "?": () => self.help.open(),
          Escape: () => {
            if (self.search.value || self.slower.value || self.onlyChanged.checked || self.onlyErrors.checked) {
              self.search.value = "";
              self.slower.value = "";
              self.onlyChanged.checked = self.onlyErrors.checked = false;
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
    }
  }

  // The two runs and the aligned calls come packed as a trace page's calls (payload.js);
  // the calls' part has no head of its own: its rows are the calls.
  function start() {
    const failed = function (err) {
      document.body.appendChild(U.el("p", "fx-empty", "The embedded data could not be read: " + err.message));
      U.markReady();
    };
    let data;
    try {
      data = JSON.parse(document.getElementById("fx-data").textContent);
    } catch (err) {
      failed(err);
      return;
    }
    const P = FX.payload;
    Promise.all([P.unpack(data.before), P.unpack(data.after), P.unpack(data.calls)]).then(function (parts) {
      data.before = parts[0];
      data.after = parts[1];
      data.calls = parts[2] && !Array.isArray(parts[2]) ? parts[2].nodes : parts[2];
      new DiffApp(data);
      U.markReady();
    }).catch(failed);
  }

  return { DiffApp: DiffApp, start: start };
})();
