// detail.js: the detail panel -- every field of the selected node, as text.
// Large strings and objects start collapsed; their contents are built only when opened.

const LONG_STRING = 600;
const BIG_OBJECT = 800;
const CHILD_PAGE = 100;

FX.valueView = function (value, depth) {
  depth = depth || 0;
  if (value === null || value === undefined) return FX.el("span", "fx-null", "null");
  if (typeof value === "string") return FX._stringView(value);
  if (typeof value === "number" || typeof value === "boolean") {
    return FX.el("span", "fx-num", String(value));
  }
  return FX._objectView(value, depth);
};

FX._stringView = function (text) {
  text = FX.visible(text);
  if (text.length <= 120 && text.indexOf("\n") < 0) return FX.el("span", "fx-str", text);
  const pre = FX.el("pre", "fx-pre", text.length > LONG_STRING ? text.slice(0, LONG_STRING) + "\u2026" : text);
  if (text.length <= LONG_STRING) return pre;
  const box = FX.el("div", "fx-long");
  box.appendChild(pre);
  const more = FX.el("button", "fx-link", "Show all " + FX.fmtInt(text.length) + " characters");
  more.type = "button";
  more.addEventListener("click", function () {
    pre.textContent = text;
    more.remove();
  });
  box.appendChild(more);
  return box;
};

FX._objectView = function (value, depth) {
  const isArray = Array.isArray(value);
  const keys = isArray ? null : Object.keys(value);
  const count = isArray ? value.length : keys.length;
  const details = FX.el("details", "fx-obj");
  const text = JSON.stringify(value);
  const summary = FX.el("summary", null);
  summary.appendChild(FX.el("span", "fx-muted",
    isArray ? "[\u2009" + FX.fmtCount(count, "item", "items") + "\u2009]" : "{\u2009" + FX.fmtCount(count, "key", "keys") + "\u2009}"));
  summary.appendChild(FX.el("span", "fx-preview", FX.ellipsis(text, 80)));
  details.appendChild(summary);
  let built = false;
  const build = function () {
    if (built) return;
    built = true;
    const entries = isArray ? value.map(function (v, i) { return [String(i), v]; })
      : keys.map(function (k) { return [k, value[k]]; });
    details.appendChild(FX.kvTable(entries, depth + 1));
  };
  details.addEventListener("toggle", function () { if (details.open) build(); });
  if (depth < 2 && text.length < BIG_OBJECT) {
    build();
    details.open = true;
  }
  return details;
};

// Rows of key / value; long lists show a page at a time.
FX.kvTable = function (entries, depth) {
  const table = FX.el("div", "fx-kv");
  let shown = 0;
  const more = FX.el("button", "fx-link", "");
  more.type = "button";
  const page = function () {
    const end = Math.min(entries.length, shown + CHILD_PAGE);
    for (; shown < end; shown++) {
      const row = FX.el("div", "fx-kv-row");
      row.appendChild(FX.el("div", "fx-k", entries[shown][0]));
      const v = FX.el("div", "fx-v");
      v.appendChild(FX.valueView(entries[shown][1], depth || 0));
      row.appendChild(v);
      table.insertBefore(row, more.parentNode ? more : null);
    }
    if (shown < entries.length) {
      more.textContent = "Show " + FX.fmtInt(Math.min(CHILD_PAGE, entries.length - shown)) + " more of " + FX.fmtInt(entries.length - shown);
      if (!more.parentNode) table.appendChild(more);
    } else if (more.parentNode) more.remove();
  };
  more.addEventListener("click", page);
  page();
  return table;
};

FX.section = function (panel, title, content, open) {
  const box = FX.el("details", "fx-section");
  box.open = open !== false;
  box.appendChild(FX.el("summary", null, title));
  box.appendChild(content);
  panel.appendChild(box);
  return box;
};

FX.facts = function (pairs) {
  const grid = FX.el("dl", "fx-facts");
  for (const pair of pairs) {
    if (pair[1] === null || pair[1] === undefined) continue;
    grid.appendChild(FX.el("dt", null, pair[0]));
    const dd = FX.el("dd", pair[2] || null, pair[1]);
    grid.appendChild(dd);
  }
  return grid;
};

FX.isEmpty = function (v) {
  if (v === null || v === undefined) return true;
  if (typeof v === "object") return Object.keys(v).length === 0;
  return false;
};

const KNOWN_META = ["model", "prompt_tokens", "completion_tokens", "total_tokens", "estimated_cost_usd"];

// ctx: {path: [ancestor names], slowShare}
FX.traceDetail = function (panel, node, ctx) {
  FX.clear(panel);
  const head = FX.el("div", "fx-detail-head");
  const status = node.view_status || node.status || "ok";
  head.appendChild(FX.el("span", "fx-pill " + status, status));
  if (node.incomplete) head.appendChild(FX.el("span", "fx-pill plain", "incomplete"));
  head.appendChild(FX.el("span", "fx-kind", node.kind || "chain"));
  panel.appendChild(head);
  panel.appendChild(FX.el("h2", "fx-detail-name", FX.nameOf(node)));
  if (ctx.path.length) {
    // One <bdi> per ancestor: a right-to-left name (or a stray U+202E) cannot reorder the path.
    const path = FX.el("div", "fx-path");
    ctx.path.forEach(function (name, k) {
      if (k) path.appendChild(document.createTextNode("  \u203a  "));
      path.appendChild(FX.el("bdi", null, name));
    });
    panel.appendChild(path);
  }
  const meta = node.meta && typeof node.meta === "object" ? node.meta : {};
  const tokens = [];
  if (FX.isNum(meta.prompt_tokens)) tokens.push(FX.fmtInt(meta.prompt_tokens) + " prompt");
  if (FX.isNum(meta.completion_tokens)) tokens.push(FX.fmtInt(meta.completion_tokens) + " completion");
  if (FX.isNum(meta.total_tokens)) tokens.push(FX.fmtInt(meta.total_tokens) + " total");
  const statusText = status === "slow"
    ? "ok, slow (own time \u2265 " + Math.round(ctx.slowShare * 100) + "% of wall time)"
    : node.status || "ok";
  panel.appendChild(FX.facts([
    ["Status", statusText, "fx-status " + status],
    ["Latency", FX.fmtMs(node.latency_ms)],
    ["Start", FX.isNum(node.start_ms) ? "+" + FX.fmtMs(node.start_ms) : null],
    ["Model", meta.model === undefined ? null : String(meta.model)],
    ["Tokens", tokens.length ? tokens.join(" \u00b7 ") : null],
    ["Cost", FX.isNum(meta.estimated_cost_usd) ? FX.fmtCost(meta.estimated_cost_usd) + " (estimated)" : null],
  ]));
  if (node.error || node.traceback) {
    const box = FX.el("div", "fx-error-box");
    if (node.error) box.appendChild(FX.el("div", "fx-error", node.error));
    if (node.traceback) box.appendChild(FX.el("pre", "fx-pre fx-traceback", node.traceback));
    FX.section(panel, "Error", box);
  }
  const inputs = node.inputs;
  if (inputs && typeof inputs === "object" && !Array.isArray(inputs)) {
    const keys = Object.keys(inputs);
    FX.section(panel, "Inputs (" + keys.length + ")", keys.length
      ? FX.kvTable(keys.map(function (k) { return [k, inputs[k]]; }), 1)
      : FX.el("div", "fx-muted", "no inputs"));
  } else if (inputs !== undefined) {
    FX.section(panel, "Inputs", FX.valueView(inputs, 1));
  }
  const output = FX.el("div", "fx-output");
  output.appendChild(FX.valueView(node.output === undefined ? null : node.output, 1));
  FX.section(panel, "Output", output);
  const extra = Object.keys(meta).filter(function (k) { return KNOWN_META.indexOf(k) < 0; });
  if (extra.length) {
    FX.section(panel, "Metadata", FX.kvTable(extra.map(function (k) { return [k, meta[k]]; }), 1));
  }
  const attrs = node.attributes && typeof node.attributes === "object" ? node.attributes : {};
  const attrKeys = Object.keys(attrs);
  if (attrKeys.length) {
    FX.section(panel, "Attributes (" + attrKeys.length + ")",
      FX.kvTable(attrKeys.map(function (k) { return [k, attrs[k]]; }), 1), attrKeys.length <= 8);
  }
  if (Array.isArray(node.events) && node.events.length) {
    const list = FX.el("div", "fx-events");
    for (const ev of node.events) {
      const row = FX.el("div", "fx-event");
      const title = FX.el("div", "fx-event-title");
      title.appendChild(FX.el("b", null, ev && ev.name !== undefined ? ev.name : "event"));
      if (ev && FX.isNum(ev.time_ms)) title.appendChild(FX.el("span", "fx-muted", " at +" + FX.fmtMs(ev.time_ms)));
      row.appendChild(title);
      if (ev && !FX.isEmpty(ev.attributes)) row.appendChild(FX.valueView(ev.attributes, 2));
      list.appendChild(row);
    }
    FX.section(panel, "Events (" + node.events.length + ")", list);
  }
  const ids = [["id", node.id], ["trace_id", node.trace_id], ["span_id", node.span_id], ["parent_id", node.parent_id]]
    .filter(function (p) { return p[1]; });
  if (ids.length) FX.section(panel, "Identifiers", FX.kvTable(ids, 1), false);
  if (node.static && FX.staticContext) FX.staticContext.section(panel, node);
};

FX.graphDetail = function (panel, node, label) {
  FX.clear(panel);
  const head = FX.el("div", "fx-detail-head");
  head.appendChild(FX.el("span", "fx-pill " + node.status, node.status));
  panel.appendChild(head);
  panel.appendChild(FX.el("h2", "fx-detail-name", label.split("\n")[0]));
  panel.appendChild(FX.facts([["Node id", node.id]]));
  FX.section(panel, "Label", FX.el("pre", "fx-pre", label));
  const keys = Object.keys(node.detail || {});
  if (keys.length) {
    FX.section(panel, "Detail", FX.kvTable(keys.map(function (k) { return [k, node.detail[k]]; }), 1));
  }
};

FX.emptyDetail = function (panel, text) {
  FX.clear(panel);
  panel.appendChild(FX.el("div", "fx-empty", text));
};
