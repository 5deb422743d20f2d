// overview.js -> FX.overview: the trace viewer's overview pane -- failures root cause first,
// the calls with the most self time, the critical path, the costliest LLM calls and usage
// per model, repeated calls. The figures come computed from Python (analysis/overview.py,
// payload.overview, rows by index); this file only draws them. Every entry selects its call.
// Public: build(app, overview) -> {el, show(section)}; llmFacts(node) -> "gpt-4o · 1.2k tok · $0.01"; llmParts(node) -> {model, tokens, cost}; sections: errors, slow, critical, llm,
// models, repeated. `app` gives nodes, parent and select(i, reveal).

FX.overview = (function () {
  const U = FX.util;
  const LIST = 6;
  const CHAIN = 10; // steps of the critical path listed before the middle is folded

  function entry(app, i, text, facts, cls) {
    const row = U.el("button", "fx-ov-row" + (cls ? " " + cls : ""));
    row.type = "button";
    row.dataset.row = String(i);
    row.appendChild(U.el("span", "fx-ov-name", text));
    row.appendChild(U.el("span", "fx-ov-facts", facts));
    row.addEventListener("click", function () { app.select(i, true); });
    return row;
  }

  function block(box, key, title, count) {
    const section = U.el("section", "fx-ov-section");
    section.dataset.section = key;
    const head = U.el("h3", "fx-ov-title", title);
    if (count !== null && count !== undefined) head.appendChild(U.el("span", "fx-ov-count", count));
    section.appendChild(head);
    box.appendChild(section);
    return section;
  }

  // Model, tokens and cost of an LLM call, each "" when the call has none.
  function llmParts(node) {
    const meta = node.meta || {};
    const tokens = U.tokens(node);
    return {
      model: meta.model !== undefined && meta.model !== null ? U.visible(meta.model) : "",
      tokens: tokens ? U.fmtTokensShort(tokens) : "",
      cost: U.isNum(meta.estimated_cost_usd) ? U.fmtCost(meta.estimated_cost_usd) : "",
    };
  }

  // The same as one line: "gpt-4o · 1.2k tok · $0.01" ("" for other calls).
  function llmFacts(node) {
    const p = llmParts(node);
    return [p.model, p.tokens, p.cost].filter(Boolean).join(" \u00b7 ");
  }

  function errorText(node) {
    return node.error ? U.ellipsis(U.visible(node.error), 90) : "failed";
  }

  // The critical path as a chain, root first, each step indented under the one before; a long
  // chain shows its first and last CHAIN / 2 steps around a line saying how many are left out.
  function chain(app, s, rows) {
    const nodes = app.nodes;
    const list = U.el("ol", "fx-ov-chain");
    const keep = function (k) { return rows.length <= CHAIN || k < CHAIN / 2 || k >= rows.length - CHAIN / 2; };
    rows.forEach(function (i, k) {
      if (!keep(k)) {
        if (keep(k - 1)) {
          list.appendChild(U.el("li", "fx-ov-chain-gap", "\u22ee " + U.fmtCount(rows.length - CHAIN, "call", "calls") + " more"));
        }
        return;
      }
      const item = U.el("li", "fx-ov-chain-step");
      item.style.setProperty("--fx-step", String(Math.min(k, 8)));
      item.appendChild(entry(app, i, (k ? "\u21b3 " : "") + U.nameOf(nodes[i]), U.fmtMs(nodes[i].latency_ms)));
      list.appendChild(item);
    });
    s.appendChild(list);
  }

  function build(app, ov) {
    ov = ov || {};
    const nodes = app.nodes;
    const el = U.el("div", "fx-overview");
    el.setAttribute("aria-label", "Overview");
    const sections = {};

    const errors = Array.isArray(ov.errors) ? ov.errors : [];
    if (errors.length) {
      const s = sections.errors = block(el, "errors", "Failures, root cause first", errors.length);
      for (const e of errors.slice(0, LIST)) {
        const node = nodes[e.row];
        const how = [e.handled ? "handled" : "not handled", "raised here"];
        if (e.passed.length) how.push("passed up through " + U.fmtCount(e.passed.length, "call", "calls"));
        if (e.handled && e.handled_by >= 0) how.push("caught by " + U.nameOf(nodes[e.handled_by]));
        const row = entry(app, e.row, (e.handled ? "\u21ba " : "\u2716 ") + U.nameOf(node), how.join(" \u00b7 "),
          e.handled ? "handled" : "unhandled");
        row.appendChild(U.el("span", "fx-ov-error", errorText(node)));
        s.appendChild(row);
      }
    }

    const slow = Array.isArray(ov.self_time) ? ov.self_time : [];
    if (slow.length) {
      const s = sections.slow = block(el, "slow", "Most time of their own", null);
      for (const i of slow.slice(0, LIST)) {
        const node = nodes[i];
        s.appendChild(entry(app, i, U.nameOf(node), U.fmtMs(node.self_ms) + " self \u00b7 " + U.fmtMs(node.latency_ms) + " total"));
      }
    }

    const critical = Array.isArray(ov.critical) ? ov.critical : [];
    if (critical.length > 1) {
      const s = sections.critical = block(el, "critical", "Critical path", U.fmtCount(critical.length, "call", "calls"));
      s.appendChild(U.el("p", "fx-ov-note", "The chain that decides the wall time: from the run down to the call each " +
        "one waited for last. Outlined in the graph and the waterfall."));
      chain(app, s, critical);
    }

    const llm = Array.isArray(ov.llm) ? ov.llm : [];
    if (llm.length) {
      const s = sections.llm = block(el, "llm", "Costliest LLM calls", null);
      for (const i of llm.slice(0, LIST)) s.appendChild(entry(app, i, U.nameOf(nodes[i]), llmFacts(nodes[i])));
    }

    const models = Array.isArray(ov.models) ? ov.models : [];
    if (models.length) {
      const s = sections.models = block(el, "models", "Usage per model", null);
      const table = U.el("div", "fx-ov-models");
      for (const m of models) {
        const row = U.el("div", "fx-ov-model");
        row.appendChild(U.el("span", "fx-ov-name", U.visible(m.model)));
        row.appendChild(U.el("span", "fx-ov-facts", U.fmtCount(m.calls, "call", "calls") + " \u00b7 " +
          U.fmtTokensShort(m.total_tokens) + " \u00b7 " + (U.isNum(m.cost_usd) ? U.fmtCost(m.cost_usd) : "cost unknown")));
        table.appendChild(row);
      }
      s.appendChild(table);
    }

    const repeated = Array.isArray(ov.repeated) ? ov.repeated : [];
    if (repeated.length) {
      const s = sections.repeated = block(el, "repeated", "Repeated calls", null);
      for (const g of repeated.slice(0, LIST)) {
        const first = g.rows[0];
        const facts = ["\u00d7" + g.count + " under " + U.nameOf(nodes[g.parent]), U.fmtMs(g.total_ms) + " total"];
        if (g.failed) facts.push(U.fmtCount(g.failed, "failed", "failed"));
        const failed = g.rows.filter(function (i) { return nodes[i].status === "error"; });
        s.appendChild(entry(app, failed.length ? failed[0] : first, U.nameOf(nodes[first]), facts.join(" \u00b7 ")));
      }
    }

    if (!el.firstChild) el.appendChild(U.el("div", "fx-empty", "Nothing stands out in this trace."));

    // Scroll the pane to a section and flash it.
    function show(key) {
      const s = sections[key];
      if (!s) return false;
      s.scrollIntoView({ block: "start" });
      s.classList.remove("fx-flash");
      void s.offsetWidth; // restart the animation
      s.classList.add("fx-flash");
      return true;
    }

    return { el: el, show: show };
  }

  return { build: build, llmFacts: llmFacts, llmParts: llmParts };
})();
