// search.js -> FX.search: the trace viewer's query language, pure (no DOM; tested under Node).
//   free words        match the name, error, inputs, output, metadata and attributes (all words)
//   name:x  error:x  kind:x  status:x   that field contains x (status: ok, error,
//                     slow, cancelled, interrupted; error:ValueError matches the error text)
//   model:x           the model is exactly x (model:gpt-4o is not gpt-4o-mini);
//   model:x*          the model starts with x (model:gpt-4o* matches both)
//   key:value         any input, metadata or attribute whose key contains `key` and value `value`
//   duration>500ms  duration<2s  self>100ms  tokens>1000  cost>0.01   numeric comparisons
//                     (>, >=, <, <=, =); durations take ms, s, m or a bare number of ms
//   "quoted words"    one term with spaces; -term negates a term
// Case-insensitive substring matching.
// Public: parse(query) -> {terms, errors}; matcher(parsed) -> function(node) -> bool;
// parseDuration(text) -> ms or null.

FX.search = (function () {
  const FIELDS = ["name", "model", "error", "kind", "status"];
  const NUMERIC = { duration: "latency_ms", latency: "latency_ms", self: "self_ms", tokens: "tokens", cost: "cost" };
  const UNITS = { ms: 1, s: 1000, m: 60000 };

  function parseDuration(text) {
    const m = /^(\d+(?:\.\d+)?|\.\d+)\s*(ms|s|m)?$/i.exec(String(text).trim());
    if (!m) return null;
    return parseFloat(m[1]) * UNITS[(m[2] || "ms").toLowerCase()];
  }

  // Split on spaces, keeping "quoted parts" (also inside key:"a b").
  function tokenize(query) {
    const out = [];
    const re = /(-?)((?:[^\s"]*"[^"]*"?)+|[^\s"]+)/g;
    let m;
    while ((m = re.exec(query)) !== null) out.push({ neg: m[1] === "-", text: m[2].replace(/"/g, "") });
    return out;
  }

  function parse(query) {
    const terms = [];
    const errors = [];
    for (const tok of tokenize(String(query || ""))) {
      const text = tok.text;
      if (!text) continue;
      const cmp = /^([a-z_]+)\s*(>=|<=|>|<|=)\s*(.+)$/i.exec(text);
      if (cmp && NUMERIC[cmp[1].toLowerCase()]) {
        const key = cmp[1].toLowerCase();
        const field = NUMERIC[key];
        const value = field.endsWith("_ms") ? parseDuration(cmp[3]) : parseFloat(cmp[3].replace(/^\$/, ""));
        if (value === null || !isFinite(value)) {
          errors.push("cannot read " + JSON.stringify(cmp[3]) + " in " + text);
          continue;
        }
        terms.push({ type: "num", field: field, op: cmp[2], value: value, neg: tok.neg });
        continue;
      }
      const colon = text.indexOf(":");
      if (colon > 0) {
        const key = text.slice(0, colon).toLowerCase();
        const value = text.slice(colon + 1).toLowerCase();
        if (!value) continue; // "model:" while typing: not a filter yet
        terms.push({ type: FIELDS.indexOf(key) >= 0 ? key : "kv", key: key, value: value, neg: tok.neg });
        continue;
      }
      terms.push({ type: "text", value: text.toLowerCase(), neg: tok.neg });
    }
    return { terms: terms, errors: errors };
  }

  function lower(v) {
    if (v === null || v === undefined) return "";
    return (typeof v === "string" ? v : JSON.stringify(v)).toLowerCase();
  }

  function isNum(v) {
    return typeof v === "number" && isFinite(v);
  }

  function number(node, field) {
    const meta = node.meta || {};
    if (field === "tokens") {
      if (isNum(meta.total_tokens)) return meta.total_tokens;
      const t = (isNum(meta.prompt_tokens) ? meta.prompt_tokens : 0) + (isNum(meta.completion_tokens) ? meta.completion_tokens : 0);
      return t || null;
    }
    if (field === "cost") return isNum(meta.estimated_cost_usd) ? meta.estimated_cost_usd : null;
    return isNum(node[field]) ? node[field] : null;
  }

  function compare(a, op, b) {
    if (op === ">") return a > b;
    if (op === ">=") return a >= b;
    if (op === "<") return a < b;
    if (op === "<=") return a <= b;
    return a === b;
  }

  // Any key of these objects containing `key` whose value contains `value`. An object the
  // page holds as canonical JSON text (haystack.objectText) whose text lacks either is
  // passed by unread: any key and any value of it (a string, or JSON text as lower writes
  // it) is in that text as it stands, when the term holds nothing JSON escapes.
  function keyValue(node, key, value, haystack) {
    const plain = verbatim(key) && verbatim(value);
    for (const field of ["inputs", "meta", "attributes"]) {
      const text = plain ? haystack.objectText(node, field) : undefined;
      if (text !== undefined && (text.indexOf(key) < 0 || text.indexOf(value) < 0)) continue;
      const obj = node[field];
      if (!obj || typeof obj !== "object") continue;
      for (const k in obj) {
        if (k.toLowerCase().indexOf(key) >= 0 && lower(obj[k]).indexOf(value) >= 0) return true;
      }
    }
    return false;
  }

  // Whether JSON.stringify writes `text` inside a string as it is (no quote, backslash,
  // control character or surrogate).
  function verbatim(text) {
    return !/["\\\u0000-\u001f\ud800-\udfff]/.test(text);
  }

  function status(node) {
    return [node.status, node.view_status].map(lower).join(" ");
  }

  function test(node, term, haystack) {
    switch (term.type) {
      case "num": {
        const v = number(node, term.field);
        return v !== null && compare(v, term.op, term.value);
      }
      case "name": return lower(node.name === null || node.name === undefined ? "?" : node.name).indexOf(term.value) >= 0;
      case "model": {
        const model = lower((node.meta || {}).model);
        return term.value.endsWith("*") ? model.startsWith(term.value.slice(0, -1)) : model === term.value;
      }
      case "error": return node.status === "error" && lower(node.error).indexOf(term.value) >= 0;
      case "kind": return lower(node.kind || "chain").indexOf(term.value) >= 0;
      case "status": return status(node).indexOf(term.value) >= 0;
      case "kv": return keyValue(node, term.key, term.value, haystack);
      default: return haystack.has(node, term.value);
    }
  }

  const HAYSTACK = ["name", "error", "inputs", "output", "meta", "attributes", "kind"];

  // The function telling whether a node matches every term. Free text is searched in the
  // lower-cased text of the node's fields as if joined by newlines: a term without a
  // newline is found in that text exactly when it is found in one field's, so the fields
  // are written out one at a time, as needed, and kept for the node's next term. A field
  // the page holds as JSON text that is exactly what JSON.stringify would write
  // (FX.payload.canonicalText) is searched as that text, unparsed; an object many nodes
  // share (their attributes) is written out once.
  function matcher(parsed) {
    const canonical = FX.payload ? FX.payload.canonicalText : function () { return undefined; };
    const shared = new WeakMap();
    const fieldText = function (node, key) {
      const raw = canonical(node, key);
      if (raw !== undefined) return raw.toLowerCase();
      const v = node[key];
      if (v === null || typeof v !== "object") return lower(v);
      let text = shared.get(v);
      if (text === undefined) {
        text = lower(v);
        shared.set(v, text);
      }
      return text;
    };
    let lastNode = null;
    let parts = [];
    const part = function (node, k) {
      if (node !== lastNode) {
        lastNode = node;
        parts = [];
      }
      while (parts.length <= k) parts.push(fieldText(node, HAYSTACK[parts.length]));
      return parts[k];
    };
    const haystack = {
      // A field's canonical JSON text, lower-cased, when it holds an object; else undefined.
      objectText: function (node, key) {
        const raw = canonical(node, key);
        return raw !== undefined && raw.charCodeAt(0) === 123 ? raw.toLowerCase() : undefined;
      },
      has: function (node, value) {
        if (value.indexOf("\n") >= 0) {
          return HAYSTACK.map(function (key, k) { return part(node, k); }).join("\n").indexOf(value) >= 0;
        }
        for (let k = 0; k < HAYSTACK.length; k++) if (part(node, k).indexOf(value) >= 0) return true;
        return false;
      },
    };
    const terms = parsed.terms;
    return function (node) {
      for (const term of terms) {
        if (test(node, term, haystack) === term.neg) return false;
      }
      return true;
    };
  }

  return { parse: parse, matcher: matcher, parseDuration: parseDuration };
})();
