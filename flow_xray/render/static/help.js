// help.js -> FX.help: the keyboard-help overlay that `?` opens (and Esc, `?` or a click
// outside closes): the keys and the search syntax of a page, as a table. Pure DOM, no state
// beyond the overlay; the page decides when to toggle it.
// Public: Help(sections) -> {el, open(), close(), toggle(), isOpen()}; TRACE (the trace
// page's sections: keys, search), DIFF (the diff page's: keys, filters).

FX.help = (function () {
  const U = FX.util;

  const TRACE = [
    ["Keys", [
      ["\u2191 \u2193  or  j k", "move to the previous / next call (PageUp, PageDown, Home, End)"],
      ["\u2190 \u2192  or  h l", "collapse / expand; \u2190 on a closed call goes to its caller"],
      ["Enter  or  Space", "open or close the selected call"],
      ["/", "search; Enter / Shift+Enter (or n / N) next / previous match"],
      ["e", "next failure"],
      ["Esc", "clear the search (and close this help)"],
      ["f", "fit the graph in its pane"],
      ["+  \u2212  0", "zoom the timeline in, out, to the whole run"],
      ["Shift+\u2190 \u2192", "pan the timeline"],
      ["z", "zoom the timeline to the selected call"],
      ["?", "this help"],
    ]],
    ["Search", [
      ["words", "all of them in the name, inputs, output, error or attributes"],
      ["name:x  error:x  kind:x  status:x", "that field contains x (status: ok, error, slow, cancelled, interrupted)"],
      ["model:gpt-4o", "exactly that model (not gpt-4o-mini)"],
      ["model:gpt-4o*", "every model starting with gpt-4o"],
      ["key:value", "an input, metadata or attribute whose key contains key and value contains value"],
      ["duration>500ms  self>100ms", "latency, own time (> >= < <= =; ms, s, m)"],
      ["tokens>1000  cost>0.01", "tokens, estimated cost in dollars"],
      ["\"two words\"   -term", "a phrase; a term that must not match"],
    ]],
  ];

  const DIFF = [
    ["Keys", [
      ["n  N  or  ]  [", "next / previous change"],
      ["\u2191 \u2193  or  j k", "move to the previous / next pair (PageUp, PageDown, Home, End)"],
      ["\u2190 \u2192  or  h l", "collapse / expand; \u2190 on a closed pair goes to its caller"],
      ["Enter  or  Space", "open or close the selected pair"],
      ["/", "search names"],
      ["c", "only changed calls"],
      ["e", "next failure"],
      ["Esc", "clear the filters (and close this help)"],
      ["?", "this help"],
    ]],
    ["Filters", [
      ["Only changed", "pairs that differ, with their callers"],
      ["Only errors", "pairs where either run failed"],
      ["Slower by \u2265 N %", "calls at least N % (and 1 ms) slower in the second run"],
    ]],
  ];

  function Help(sections) {
    const self = this;
    this.el = U.el("div", "fx-help-overlay");
    this.el.hidden = true;
    const box = U.el("div", "fx-help-box");
    box.setAttribute("role", "dialog");
    box.setAttribute("aria-modal", "true");
    box.setAttribute("aria-label", "Keyboard help");
    box.tabIndex = -1;
    const head = U.el("div", "fx-help-head");
    head.appendChild(U.el("h2", "fx-help-title", "Keyboard and search"));
    const close = U.el("button", "fx-btn fx-help-close", "Close");
    close.type = "button";
    close.addEventListener("click", function () { self.close(); });
    head.appendChild(close);
    box.appendChild(head);
    for (const section of sections) {
      box.appendChild(U.el("h3", "fx-help-section", section[0]));
      const table = U.el("dl", "fx-help-table");
      for (const row of section[1]) {
        table.appendChild(U.el("dt", null, row[0]));
        table.appendChild(U.el("dd", null, row[1]));
      }
      box.appendChild(table);
    }
    this.el.appendChild(box);
    this.box = box;
    this.el.addEventListener("click", function (e) { if (e.target === self.el) self.close(); });
    document.body.appendChild(this.el);
  }

  Help.prototype.isOpen = function () { return !this.el.hidden; };
  Help.prototype.open = function () {
    this.returnTo = document.activeElement;
    this.el.hidden = false;
    this.box.focus();
  };
  Help.prototype.close = function () {
    if (this.el.hidden) return;
    this.el.hidden = true;
    if (this.returnTo && this.returnTo.focus) this.returnTo.focus();
  };
  Help.prototype.toggle = function () { if (this.isOpen()) this.close(); else this.open(); };

  return { Help: Help, TRACE: TRACE, DIFF: DIFF };
})();
