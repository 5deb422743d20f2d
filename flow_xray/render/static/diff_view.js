// diff_view.js -> FX.diffView: what the diff page draws -- the two runs' trees aligned row
// by row (virtualized: only rows near the viewport exist), and the side-by-side detail of a
// pair of calls: what changed, key by key or as a text diff, then both calls in full.
// Everything reaches the page through textContent (util.js / detail.js).

FX.diffView = (function () {
  const U = FX.util;
  const D = FX.detail;
  const ROW_H = 26;
  const MARKS = { same: "", changed: "~", added: "+", removed: "\u2212" };

  function isNum(v) {
    return typeof v === "number" && isFinite(v);
  }

  // A call's name as text ("?" when it has none), invisible characters shown.
  function nameOf(node) {
    return node.name === null || node.name === undefined ? "?" : U.visible(node.name);
  }

  // "+340 ms" / "-12 ms" / "+1.24 s"
  function fmtDeltaMs(d) {
    const size = Math.abs(d);
    const sign = d < 0 ? "\u2212" : "+";
    if (size >= 1000) return sign + (size / 1000).toFixed(2) + " s";
    if (size >= 10) return sign + size.toFixed(0) + " ms";
    return sign + size.toFixed(1) + " ms";
  }

  // Dollars as the trace page writes them, with three significant digits.
  function fmtCost(usd) {
    return isNum(usd) ? U.fmtCost(usd, 3) : "unknown";
  }

  function fmtPct(a, b) {
    if (!(a > 0)) return "";
    const pct = ((b - a) / a) * 100;
    const size = Math.abs(pct);
    return (pct < 0 ? "\u2212" : "+") + (size >= 1 || size === 0 ? size.toFixed(0) : size.toFixed(1)) + "%";
  }

  // How much slower the second run's call was, as a share (0.25 = 25% slower); null if unknown.
  function slowdown(row) {
    const lat = row.latency_ms || [];
    if (!isNum(lat[0]) || !isNum(lat[1]) || lat[0] <= 0) return null;
    return (lat[1] - lat[0]) / lat[0];
  }

  // A virtualized list of fixed-height rows in a scrolling box.
  class RowList {
    // opts: {createRow(), fillRow(el, item), onClick(item, event)}
    constructor(parent, opts) {
      this.opts = opts;
      this.scroller = U.el("div", "fx-rows fx-diff-rows");
      this.scroller.tabIndex = 0;
      this.spacer = U.el("div", "fx-rows-spacer");
      this.scroller.appendChild(this.spacer);
      parent.appendChild(this.scroller);
      this.items = [];
      this.pool = [];
      const redraw = U.perFrame(() => this.render());
      this.scroller.addEventListener("scroll", redraw);
      if (window.ResizeObserver) new ResizeObserver(redraw).observe(this.scroller);
      this.scroller.addEventListener("click", function (e) {
        const row = e.target.closest(".fx-diff-row");
        if (row && row.fxItem !== undefined) opts.onClick(row.fxItem, e);
      });
    }

    setItems(items) {
      this.items = items;
      this.spacer.style.height = items.length * ROW_H + "px";
      this.render();
    }

    render() {
      const top = this.scroller.scrollTop;
      const height = this.scroller.clientHeight || 600;
      const first = Math.max(0, Math.floor(top / ROW_H) - 6);
      const last = Math.min(this.items.length, Math.ceil((top + height) / ROW_H) + 6);
      while (this.pool.length < last - first) {
        const row = this.opts.createRow();
        this.pool.push(row);
        this.scroller.appendChild(row);
      }
      for (let k = 0; k < this.pool.length; k++) {
        const row = this.pool[k];
        const position = first + k;
        if (position >= last) {
          row.style.display = "none";
          row.fxItem = undefined;
          continue;
        }
        row.style.display = "";
        row.style.transform = "translateY(" + position * ROW_H + "px)";
        row.fxItem = this.items[position];
        this.opts.fillRow(row, this.items[position]);
      }
    }

    // Scroll just enough to show the row at `position`, centring it when it is far away.
    reveal(position) {
      const top = this.scroller.scrollTop;
      const height = this.scroller.clientHeight;
      const y = position * ROW_H;
      if (y < top) this.scroller.scrollTop = y - (y < top - height ? height / 2 : 0);
      else if (y + ROW_H > top + height) {
        this.scroller.scrollTop = y + ROW_H - height + (y > top + 2 * height ? height / 2 : 0);
      }
      this.render();
    }
  }

  // One row: the change mark, the first run's call, the latency change, the second run's call.
  function createRow() {
    const row = U.el("div", "fx-diff-row");
    const parts = { mark: U.el("div", "fx-diff-mark") };
    row.appendChild(parts.mark);
    for (const side of ["a", "b"]) {
      const cell = U.el("div", "fx-diff-side fx-side-" + side);
      const p = {
        cell: cell, indent: U.el("span", "fx-indent"), caret: U.el("span", "fx-caret"),
        dot: U.el("span", "fx-dot"), name: U.el("span", "fx-name"), lat: U.el("span", "fx-diff-lat"),
      };
      for (const key of ["indent", "caret", "dot", "name", "lat"]) cell.appendChild(p[key]);
      parts[side] = p;
      row.appendChild(cell);
      if (side === "a") {
        parts.delta = U.el("div", "fx-diff-delta");
        row.appendChild(parts.delta);
      }
    }
    row.fxParts = parts;
    return row;
  }

  // view: {calls, nodes: [before, after], depth, kids, expanded, selected, matches, keep}
  function fillRow(row, i, view) {
    const call = view.calls[i];
    const p = row.fxParts;
    row.className = "fx-diff-row fx-change-" + call.change +
      (i === view.selected ? " selected" : "") +
      (view.matches && !view.matches[i] ? " fx-context" : "");
    p.mark.textContent = MARKS[call.change] || "";
    const caretSide = call.a >= 0 ? 0 : 1; // the tree opens from the first side that has it
    [["a", 0], ["b", 1]].forEach(function (pair) {
      const s = p[pair[0]];
      const index = call[pair[0]];
      const node = index >= 0 ? view.nodes[pair[1]][index] : null;
      s.cell.classList.toggle("fx-absent", !node);
      s.indent.style.width = view.depth[i] * 14 + "px";
      s.caret.textContent = pair[1] === caretSide && view.kids[i]
        ? (view.expanded[i] ? "\u25be" : "\u25b8") : "";
      s.dot.className = "fx-dot " + (node ? node.view_status || "ok" : "none");
      s.name.textContent = node ? nameOf(node) : "";
      s.name.className = "fx-name" + (view.hits && view.hits[i] ? " fx-hit" : "");
      s.lat.textContent = node ? U.fmtMs(node.latency_ms) : "";
    });
    const lat = call.latency_ms || [];
    let delta = "";
    let cls = "";
    if (call.change === "added" || call.change === "removed") {
      delta = call.change;
    } else if (isNum(lat[0]) && isNum(lat[1])) {
      delta = fmtDeltaMs(lat[1] - lat[0]);
      const share = slowdown(call);
      if (share !== null && share >= 0.1 && lat[1] - lat[0] >= 1) cls = " slower";
      else if (share !== null && share <= -0.1 && lat[0] - lat[1] >= 1) cls = " faster";
    }
    p.delta.textContent = delta;
    p.delta.className = "fx-diff-delta" + cls;
  }

  const CONTEXT_LINES = 2;

  // A text diff: deleted and inserted pieces marked, all of it as text. Long unchanged runs
  // of lines keep CONTEXT_LINES on each side of a change; a button shows the rest.
  function textDiff(ops) {
    const pre = U.el("pre", "fx-pre fx-textdiff");
    ops.forEach(function (op, k) {
      if (op[0] === "insert" || op[0] === "delete") {
        pre.appendChild(U.el(op[0] === "insert" ? "ins" : "del", op[0] === "insert" ? "fx-ins" : "fx-del", U.visible(op[1])));
        return;
      }
      const lines = op[1].split(/(?<=\n)/);
      const head = k === 0 ? 0 : CONTEXT_LINES;
      const tail = k === ops.length - 1 ? 0 : CONTEXT_LINES;
      if (lines.length <= head + tail + 1) {
        pre.appendChild(document.createTextNode(U.visible(op[1])));
        return;
      }
      pre.appendChild(document.createTextNode(U.visible(lines.slice(0, head).join(""))));
      const hidden = lines.slice(head, lines.length - tail).join("");
      const more = U.el("button", "fx-link fx-unchanged", "\u22ef " + U.fmtCount(lines.length - head - tail, "unchanged line", "unchanged lines"));
      more.type = "button";
      more.addEventListener("click", function () { more.replaceWith(document.createTextNode(U.visible(hidden))); });
      pre.appendChild(more);
      pre.appendChild(document.createTextNode(U.visible(lines.slice(lines.length - tail).join(""))));
    });
    return pre;
  }

  // Key-level changes of one value: path, what happened, then the old and new value.
  function changeList(diff) {
    const box = U.el("div", "fx-changes");
    for (const change of diff.changes || []) {
      const item = U.el("div", "fx-change fx-change-" + change.change);
      const head = U.el("div", "fx-change-head");
      head.appendChild(U.el("span", "fx-change-tag", change.change));
      head.appendChild(U.el("code", "fx-change-path", change.path ? U.visible(change.path) : "(whole value)"));
      item.appendChild(head);
      if (change.text) {
        item.appendChild(textDiff(change.text));
      } else {
        const pair = U.el("div", "fx-change-pair");
        for (const side of ["before", "after"]) {
          const cell = U.el("div", "fx-change-" + side);
          const absent = (side === "before" && change.change === "added") ||
            (side === "after" && change.change === "removed");
          cell.appendChild(absent ? U.el("span", "fx-muted", "(absent)") : D.valueView(change[side], 1));
          pair.appendChild(cell);
        }
        item.appendChild(pair);
      }
      box.appendChild(item);
    }
    if (diff.more) box.appendChild(U.el("div", "fx-muted", "\u2026 and " + U.fmtInt(diff.more) + " more changes"));
    return box;
  }

  function meta(node) {
    return node && node.meta && typeof node.meta === "object" ? node.meta : {};
  }

  // Field | first run | second run, changed rows marked.
  function compareTable(call, a, b, labels) {
    const table = U.el("div", "fx-compare");
    const head = [U.el("div", "fx-compare-k", ""), U.el("div", "fx-compare-h", labels[0]), U.el("div", "fx-compare-h", labels[1])];
    head.forEach(function (cell) { table.appendChild(cell); });
    const lat = call.latency_ms || [];
    const tokens = call.tokens || [];
    const cost = call.cost_usd || [];
    const fields = call.fields || [];
    const latText = function (v, other) {
      if (!isNum(v)) return "\u2014";
      let text = U.fmtMs(v);
      if (isNum(other) && v !== other && other === lat[0]) text += "  (" + fmtDeltaMs(v - other) + ", " + fmtPct(other, v) + ")";
      return text;
    };
    const rows = [
      ["Status", a ? a.status || "ok" : null, b ? b.status || "ok" : null, fields.indexOf("status") >= 0],
      ["Latency", a ? latText(lat[0]) : null, b ? latText(lat[1], lat[0]) : null, false],
      ["Tokens", isNum(tokens[0]) ? U.fmtInt(tokens[0]) : null, isNum(tokens[1]) ? U.fmtInt(tokens[1]) : null, fields.indexOf("tokens") >= 0],
      ["Cost", isNum(cost[0]) ? fmtCost(cost[0]) : null, isNum(cost[1]) ? fmtCost(cost[1]) : null, fields.indexOf("cost") >= 0],
      ["Model", meta(a).model, meta(b).model, fields.indexOf("model") >= 0],
      ["Error", a ? a.error : null, b ? b.error : null, fields.indexOf("error") >= 0],
    ];
    for (const r of rows) {
      const none = (r[1] === null || r[1] === undefined) && (r[2] === null || r[2] === undefined);
      if (none) continue;
      table.appendChild(U.el("div", "fx-compare-k", r[0]));
      for (const k of [1, 2]) {
        const absent = (k === 1 && !a) || (k === 2 && !b);
        const text = absent ? "(not in this run)" : r[k] === null || r[k] === undefined ? "\u2014" : String(r[k]);
        table.appendChild(U.el("div", "fx-compare-v" + (r[3] ? " fx-differs" : "") + (absent ? " fx-muted" : ""), text));
      }
    }
    return table;
  }

  // What the trace viewer's detail panel needs to show one call (older and newer forms).
  function detailContext(node, path, slowShare) {
    const status = node.view_status || node.status || "ok";
    return {
      path: path, slowShare: slowShare, name: nameOf(node), status: status,
      statusText: node.status || "ok",
    };
  }

  // The detail of one aligned row. ctx: {labels, paths, slowShare}
  function pairDetail(panel, call, a, b, ctx) {
    U.clear(panel);
    const top = U.el("div", "fx-pair-top");
    const head = U.el("div", "fx-detail-head");
    head.appendChild(U.el("span", "fx-pill fx-change-pill " + call.change, call.change));
    const node = b || a;
    head.appendChild(U.el("span", "fx-kind", (node && node.kind) || "chain"));
    top.appendChild(head);
    top.appendChild(U.el("h2", "fx-detail-name", node ? nameOf(node) : "?"));
    const path = U.el("div", "fx-path");
    (call.path || []).forEach(function (name, k) {
      if (k) path.appendChild(document.createTextNode("  \u203a  "));
      path.appendChild(U.el("bdi", null, U.visible(name)));
    });
    top.appendChild(path);
    if (call.fields && call.fields.length) {
      top.appendChild(U.el("div", "fx-diff-fields", "Changed: " + call.fields.join(", ")));
    }
    top.appendChild(compareTable(call, a, b, ctx.labels));
    // The output first: what a call produced is what a comparison is usually about.
    if (call.output) D.section(top, "Output changed", changeList(call.output));
    if (call.inputs) D.section(top, "Inputs changed", changeList(call.inputs));
    panel.appendChild(top);
    const both = U.el("div", "fx-pair");
    [[a, ctx.labels[0], ctx.paths[0]], [b, ctx.labels[1], ctx.paths[1]]].forEach(function (side) {
      const column = U.el("section", "fx-pair-side");
      column.appendChild(U.el("div", "fx-pair-label", side[1]));
      const body = U.el("div", "fx-pair-body");
      if (side[0]) D.traceDetail(body, side[0], detailContext(side[0], side[2], ctx.slowShare));
      else body.appendChild(U.el("div", "fx-empty", "Not in this run."));
      column.appendChild(body);
      both.appendChild(column);
    });
    panel.appendChild(both);
  }

  return {
    ROW_H: ROW_H,
    RowList: RowList,
    createRow: createRow,
    fillRow: fillRow,
    pairDetail: pairDetail,
    textDiff: textDiff,
    slowdown: slowdown,
    fmtDeltaMs: fmtDeltaMs,
    fmtCost: fmtCost,
    nameOf: nameOf,
    fmtPct: fmtPct,
  };
})();
