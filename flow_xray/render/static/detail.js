// detail.js -> FX.detail: the detail panel -- every field of the selected node, as text.
// Large strings and objects start collapsed; their contents are built only when opened.
// Public: valueView, kvTable, section, facts, isEmpty, traceDetail, graphDetail, emptyDetail,
// tagsOf, fillTags.

FX.detail = (function () {
  const U = FX.util;

  const LONG_STRING = 600;
  const BIG_OBJECT = 800;
  const CHILD_PAGE = 100;

  function valueView(value, depth) {
    depth = depth || 0;
    if (value === null || value === undefined) return U.el("span", "fx-null", "null");
    if (typeof value === "string") return stringView(value);
    if (typeof value === "number") return U.el("span", "fx-num", U.plainNumber(value));
    if (typeof value === "boolean") return U.el("span", "fx-num", String(value));
    return objectView(value, depth);
  }

  function stringView(text) {
    text = U.visible(text);
    if (text.length <= 120 && text.indexOf("\n") < 0) return U.el("span", "fx-str", text);
    const pre = U.el("pre", "fx-pre", text.length > LONG_STRING ? text.slice(0, LONG_STRING) + "\u2026" : text);
    if (text.length <= LONG_STRING) return pre;
    const box = U.el("div", "fx-long");
    box.appendChild(pre);
    const more = U.el("button", "fx-link", "Show all " + U.fmtInt(text.length) + " characters");
    more.type = "button";
    more.addEventListener("click", function () {
      pre.textContent = text;
      more.remove();
    });
    box.appendChild(more);
    return box;
  }

  function objectView(value, depth) {
    const isArray = Array.isArray(value);
    const keys = isArray ? null : Object.keys(value);
    const count = isArray ? value.length : keys.length;
    const details = U.el("details", "fx-obj");
    const text = JSON.stringify(value);
    const summary = U.el("summary", null);
    summary.appendChild(U.el("span", "fx-muted",
      isArray ? "[\u2009" + U.fmtCount(count, "item", "items") + "\u2009]" : "{\u2009" + U.fmtCount(count, "key", "keys") + "\u2009}"));
    summary.appendChild(U.el("span", "fx-preview", U.ellipsis(text, 80)));
    details.appendChild(summary);
    let built = false;
    const build = function () {
      if (built) return;
      built = true;
      const entries = isArray ? value.map(function (v, i) { return [String(i), v]; })
        : keys.map(function (k) { return [k, value[k]]; });
      details.appendChild(kvTable(entries, depth + 1));
    };
    details.addEventListener("toggle", function () { if (details.open) build(); });
    if (depth < 2 && text.length < BIG_OBJECT) {
      build();
      details.open = true;
    }
    return details;
  }

  // Rows of key / value; long lists show a page at a time.
  function kvTable(entries, depth) {
    const table = U.el("div", "fx-kv");
    let shown = 0;
    const more = U.el("button", "fx-link", "");
    more.type = "button";
    const page = function () {
      const end = Math.min(entries.length, shown + CHILD_PAGE);
      for (; shown < end; shown++) {
        const row = U.el("div", "fx-kv-row");
        row.appendChild(U.el("div", "fx-k", entries[shown][0]));
        const v = U.el("div", "fx-v");
        v.appendChild(valueView(entries[shown][1], depth || 0));
        row.appendChild(v);
        table.insertBefore(row, more.parentNode ? more : null);
      }
      if (shown < entries.length) {
        more.textContent = "Show " + U.fmtInt(Math.min(CHILD_PAGE, entries.length - shown)) + " more of " + U.fmtInt(entries.length - shown);
        if (!more.parentNode) table.appendChild(more);
      } else if (more.parentNode) more.remove();
    };
    more.addEventListener("click", page);
    page();
    return table;
  }

  function section(panel, title, content, open) {
    const box = U.el("details", "fx-section");
    box.open = open !== false;
    box.appendChild(U.el("summary", null, title));
    box.appendChild(content);
    panel.appendChild(box);
    return box;
  }

  function facts(pairs) {
    const grid = U.el("dl", "fx-facts");
    for (const pair of pairs) {
      if (pair[1] === null || pair[1] === undefined) continue;
      grid.appendChild(U.el("dt", null, pair[0]));
      const dd = U.el("dd", pair[2] || null, pair[1]);
      grid.appendChild(dd);
    }
    return grid;
  }

  function isEmpty(v) {
    if (v === null || v === undefined) return true;
    if (typeof v === "object") return Object.keys(v).length === 0;
    return false;
  }

  // The tags trace.tag attached to a call: [name, value] pairs, from its attributes named
  // `prefix` + name (the page says the prefix: payload `tag_prefix`) and a 0.3.x file's
  // `tags` object. Labels have the value true.
  function tagsOf(node, prefix) {
    const attrs = node && node.attributes && typeof node.attributes === "object" ? node.attributes : null;
    if (!attrs || typeof prefix !== "string" || !prefix) return [];
    const out = [];
    const old = attrs.tags;
    if (old && typeof old === "object" && !Array.isArray(old)) {
      for (const k of Object.keys(old)) out.push([k, old[k]]);
    }
    for (const k of Object.keys(attrs)) if (k.startsWith(prefix)) out.push([k.slice(prefix.length), attrs[k]]);
    return out;
  }

  // Fill `box` with one badge per tag of `node` ("label", or "key=value"); empty when none.
  function fillTags(box, node, prefix) {
    U.clear(box);
    for (const pair of tagsOf(node, prefix)) {
      const value = pair[1];
      const shown = value === true ? pair[0] : pair[0] + "=" + (typeof value === "string" ? value : JSON.stringify(value));
      const badge = U.el("span", "fx-tag", U.ellipsis(shown, 40));
      badge.title = shown;
      box.appendChild(badge);
    }
    return box;
  }

  const KNOWN_META = ["model", "prompt_tokens", "completion_tokens", "total_tokens", "estimated_cost_usd"];

  // The call as JSON, as the trace file has it (no viewer fields).
  function callJson(node) {
    const out = {};
    for (const k in node) if (k !== "parent" && k !== "view_status" && k !== "self_ms") out[k] = node[k];
    return JSON.stringify(out, null, 2);
  }

  function text(v) {
    return typeof v === "string" ? v : JSON.stringify(v, null, 2);
  }

  function failure(node) {
    if (node.status !== "error") return null;
    if (node.error_origin === false) return "passed up from a failing child";
    const where = "raised here";
    if (node.error_handled === true) return where + ", handled by a caller";
    if (node.error_handled === false) return where + ", not handled";
    return where;
  }

  // ctx: {path: [ancestor names], slowShare, link(), tagPrefix}
  function traceDetail(panel, node, ctx) {
    U.clear(panel);
    const head = U.el("div", "fx-detail-head");
    const status = node.view_status || node.status || "ok";
    head.appendChild(U.el("span", "fx-pill " + status, status));
    if (node.incomplete) head.appendChild(U.el("span", "fx-pill plain", "incomplete"));
    head.appendChild(U.el("span", "fx-kind", node.kind || "chain"));
    const tools = U.el("span", "fx-detail-tools");
    tools.appendChild(U.copyButton("Copy JSON", function () { return callJson(node); }));
    if (ctx.link) tools.appendChild(U.copyButton("Copy link", ctx.link));
    head.appendChild(tools);
    panel.appendChild(head);
    panel.appendChild(U.el("h2", "fx-detail-name", U.nameOf(node)));
    if (ctx.path.length) {
      // One <bdi> per ancestor: a right-to-left name (or a stray U+202E) cannot reorder the path.
      const path = U.el("div", "fx-path");
      ctx.path.forEach(function (name, k) {
        if (k) path.appendChild(document.createTextNode("  \u203a  "));
        path.appendChild(U.el("bdi", null, name));
      });
      panel.appendChild(path);
    }
    const tags = fillTags(U.el("div", "fx-tags fx-detail-tags"), node, ctx.tagPrefix);
    if (tags.childNodes.length) panel.appendChild(tags);
    const meta = node.meta && typeof node.meta === "object" ? node.meta : {};
    const tokens = [];
    if (U.isNum(meta.prompt_tokens)) tokens.push(U.fmtInt(meta.prompt_tokens) + " prompt");
    if (U.isNum(meta.completion_tokens)) tokens.push(U.fmtInt(meta.completion_tokens) + " completion");
    if (U.isNum(meta.total_tokens)) tokens.push(U.fmtInt(meta.total_tokens) + " total");
    const statusText = status === "slow"
      ? "ok, slow (own time \u2265 " + Math.round(ctx.slowShare * 100) + "% of wall time)"
      : node.status || "ok";
    const chat = node.chat && typeof node.chat === "object" && FX.chat ? node.chat : null;
    panel.appendChild(facts([
      ["Status", statusText, "fx-status " + status],
      ["Failure", failure(node)],
      ["Latency", node.ghost === true ? "not run" : U.fmtMs(node.latency_ms)],
      ["Self time", U.isNum(node.self_ms) ? U.fmtMs(node.self_ms) : null],
      ["Start", U.isNum(node.start_ms) ? "+" + U.fmtMs(node.start_ms) : null],
      // An LLM call with a conversation has these in its own block (chat.js).
      ["Model", meta.model === undefined || chat ? null : String(meta.model)],
      ["Tokens", tokens.length && !chat ? tokens.join(" \u00b7 ") : null],
      ["Cost", U.isNum(meta.estimated_cost_usd) && !chat ? U.fmtCost(meta.estimated_cost_usd) + " (estimated)" : null],
      ["Usage", node.usage_note ? (node.usage_counted === false ? "not in the totals: " : "in the totals; ") + node.usage_note : null],
    ]));
    if (node.error || node.traceback) {
      const box = U.el("div", "fx-error-box");
      if (node.error) box.appendChild(U.el("div", "fx-error", node.error));
      if (node.traceback) {
        box.appendChild(U.el("pre", "fx-pre fx-traceback", node.traceback));
        box.appendChild(U.copyButton("Copy traceback", function () { return node.traceback; }));
      } else box.appendChild(U.copyButton("Copy error", function () { return node.error; }));
      section(panel, "Error", box);
    }
    if (chat) FX.chat.section(panel, node); // the raw inputs and output then start folded
    const inputs = node.inputs;
    if (inputs && typeof inputs === "object" && !Array.isArray(inputs)) {
      const keys = Object.keys(inputs);
      const box = U.el("div", "fx-inputs");
      box.appendChild(keys.length
        ? kvTable(keys.map(function (k) { return [k, inputs[k]]; }), 1)
        : U.el("div", "fx-muted", "no inputs"));
      if (keys.length) box.appendChild(U.copyButton("Copy inputs", function () { return text(inputs); }));
      section(panel, "Inputs (" + keys.length + ")", box, !chat);
    } else if (inputs !== undefined) {
      section(panel, "Inputs", valueView(inputs, 1), !chat);
    }
    const output = U.el("div", "fx-output");
    output.appendChild(valueView(node.output === undefined ? null : node.output, 1));
    output.appendChild(U.copyButton("Copy value", function () { return text(node.output === undefined ? null : node.output); }));
    section(panel, "Output", output, !chat);
    const extra = Object.keys(meta).filter(function (k) { return KNOWN_META.indexOf(k) < 0; });
    if (extra.length) {
      section(panel, "Metadata", kvTable(extra.map(function (k) { return [k, meta[k]]; }), 1));
    }
    const attrs = node.attributes && typeof node.attributes === "object" ? node.attributes : {};
    const attrKeys = Object.keys(attrs);
    if (attrKeys.length) {
      section(panel, "Attributes (" + attrKeys.length + ")",
        kvTable(attrKeys.map(function (k) { return [k, attrs[k]]; }), 1), attrKeys.length <= 8);
    }
    if (Array.isArray(node.events) && node.events.length) {
      const list = U.el("div", "fx-events");
      for (const ev of node.events) {
        const row = U.el("div", "fx-event");
        const title = U.el("div", "fx-event-title");
        title.appendChild(U.el("b", null, ev && ev.name !== undefined ? ev.name : "event"));
        if (ev && U.isNum(ev.time_ms)) title.appendChild(U.el("span", "fx-muted", " at +" + U.fmtMs(ev.time_ms)));
        row.appendChild(title);
        if (ev && !isEmpty(ev.attributes)) row.appendChild(valueView(ev.attributes, 2));
        list.appendChild(row);
      }
      section(panel, "Events (" + node.events.length + ")", list);
    }
    const ids = [["id", node.id], ["trace_id", node.trace_id], ["span_id", node.span_id], ["parent_id", node.parent_id]]
      .filter(function (p) { return p[1]; });
    if (ids.length) {
      const box = U.el("div", "fx-ids");
      for (const pair of ids) {
        const row = U.el("div", "fx-kv-row");
        row.appendChild(U.el("div", "fx-k", pair[0]));
        const v = U.el("div", "fx-v");
        v.appendChild(U.el("span", "fx-str", pair[1]));
        v.appendChild(U.copyButton("Copy", function () { return String(pair[1]); }));
        row.appendChild(v);
        box.appendChild(row);
      }
      section(panel, "Identifiers", box, false);
    }
    if (node.static && FX.staticContext) FX.staticContext.section(panel, node);
  }

  function graphDetail(panel, node, label) {
    U.clear(panel);
    const head = U.el("div", "fx-detail-head");
    head.appendChild(U.el("span", "fx-pill " + node.status, node.status));
    panel.appendChild(head);
    panel.appendChild(U.el("h2", "fx-detail-name", label.split("\n")[0]));
    panel.appendChild(facts([["Node id", node.id]]));
    section(panel, "Label", U.el("pre", "fx-pre", label));
    const keys = Object.keys(node.detail || {});
    if (keys.length) {
      section(panel, "Detail", kvTable(keys.map(function (k) { return [k, node.detail[k]]; }), 1));
    }
  }

  function emptyDetail(panel, text) {
    U.clear(panel);
    panel.appendChild(U.el("div", "fx-empty", text));
  }

  return {
    valueView: valueView,
    kvTable: kvTable,
    section: section,
    facts: facts,
    isEmpty: isEmpty,
    traceDetail: traceDetail,
    graphDetail: graphDetail,
    emptyDetail: emptyDetail,
    tagsOf: tagsOf,
    fillTags: fillTags,
  };
})();
