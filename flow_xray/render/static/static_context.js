// static_context.js -> FX.staticContext: the static context of a trace, when the page has
// one (`flow-xray run --static`, `TraceResult.to_html(static=...)`): a "Static context"
// section in the detail panel -- where the function is defined, its static callers and
// callees, whether the source shows the call from its parent, and for a ghost (a function
// that could have run there but did not) why it is drawn. Ghost boxes and rows are styled
// by static_context.css from their view_status, "ghost".

FX.staticContext = (function () {
  const U = FX.util;
  const D = FX.detail;

  function isGhost(node) {
    return Boolean(node && node.ghost === true);
  }

  function nameList(names) {
    if (!Array.isArray(names) || !names.length) return U.el("div", "fx-muted", "none in the indexed source");
    const list = U.el("ul", "fx-static-list");
    for (const name of names) list.appendChild(U.el("li", null, U.visible(name)));
    return list;
  }

  // Append the section for `node` (a node row carrying a `static` object) to `panel`.
  function section(panel, node) {
    const info = node.static;
    if (!info || typeof info !== "object") return null;
    const box = U.el("div", "fx-static");
    if (isGhost(node)) {
      box.appendChild(U.el("div", "fx-static-note fx-ghost-note", info.note || "Did not run in this trace."));
    }
    const where = typeof info.path === "string" ? info.path + (typeof info.line === "number" ? ":" + info.line : "") : null;
    // How this call was made, as the source tells it: "called at line 12", or why not.
    const how = typeof info.edge_note === "string" ? info.edge_note : null;
    box.appendChild(D.facts([
      ["Function", typeof info.function === "string" ? U.visible(info.function) : null],
      ["Defined at", where === null ? null : U.visible(where)],
      ["Call", how === null ? null : U.visible(how), info.edge === "runtime-only" ? "fx-runtime-only" : null],
    ]));
    box.appendChild(U.el("div", "fx-static-head", "Static callers"));
    box.appendChild(nameList(info.callers));
    box.appendChild(U.el("div", "fx-static-head", "Static callees"));
    box.appendChild(nameList(info.callees));
    return D.section(panel, isGhost(node) ? "Static context (not run)" : "Static context", box);
  }

  return { isGhost: isGhost, section: section };
})();
