// state.js -> FX.state: what the URL fragment keeps of a trace page, pure (tested under Node).
// "#call=<span id>&q=<search>&errors=1&view=<name>" -- call is the selected call's span id
// (its id when it has none), q the search text, errors the errors-only filter, view the
// top pane's view (other views may register names). Unknown keys are kept as they are.
// Public: parse(hash) -> {call, q, errors, view, ...}; format(state) -> "#..." ('' when empty).

FX.state = (function () {
  function parse(hash) {
    const out = {};
    const params = new URLSearchParams(String(hash || "").replace(/^#/, ""));
    params.forEach(function (value, key) { out[key] = value; });
    if (out.errors !== undefined) out.errors = out.errors === "1";
    return out;
  }

  function format(state) {
    const params = new URLSearchParams();
    for (const key of Object.keys(state)) {
      const value = state[key];
      if (value === undefined || value === null || value === "" || value === false) continue;
      params.set(key, value === true ? "1" : String(value));
    }
    const text = params.toString();
    return text ? "#" + text : "";
  }

  return { parse: parse, format: format };
})();
