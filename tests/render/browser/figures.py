"""Clipped figures on a viewer page: the check the width tests run, and a trace made to break it.

A figure is a duration (``646.5 ms``, ``19.41 s``), a token count (``1,234 tok``,
``12.3k tokens``), a cost (``$0.000064``) or a count in a header chip. It must be
either fully drawn or not drawn at all: a figure cut by a box that hides its
overflow (``695.7 ms`` shown as ``95.7 ms``) or ended by an ellipsis
(``$0.00…``) is a wrong figure on screen. Boxes that scroll (the rows, the
overview, the detail panel) and the graph's pannable drawing are windows, not
cuts: what they hide can be scrolled to, so they are not counted. Text quoted
from the trace (an error message that says "within 50 ms", an input value) is
the user's text, not a figure of the viewer's, and is not checked.
"""

from __future__ import annotations

from typing import Any

from viewer_traces import node

# Every text node holding a figure whose box is cut by an ancestor that hides its overflow
# (overflow hidden / clip, not auto / scroll). Fully outside such a box = not drawn (fine);
# partly inside = clipped. SVG text is checked against its node's box (a graph label wider
# than the box it sits in is cut as far as a reader is concerned).
CLIPPED_JS = r"""() => {
  const QUOTED = 'script, noscript, title, textarea, .fx-pre, .fx-turn-text, ' +
    '.fx-ov-error, .fx-error, .fx-v, .fx-obj';
  const FIGURE = /(\d[\d,.]*\s*(ms|s|k?\s?tok|tokens|calls?|nodes?)\b)|(\$\s?\d)|(\d\.\d+e[-+]?\d)/;
  const out = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let t = walker.nextNode(); t; t = walker.nextNode()) {
    const text = t.textContent;
    const el = t.parentElement;
    const chip = el.closest('.fx-chip');
    if (!FIGURE.test(text) && !(chip && el.tagName === 'B')) continue;
    if (el.closest(QUOTED)) continue;
    const range = document.createRange();
    range.selectNodeContents(t);
    const r = range.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) continue;  // not rendered (display: none)
    // v: the part of the text still in view after each scrolling ancestor (a window).
    let v = {l: r.left, t: r.top, r: r.right, b: r.bottom};
    let hidden = false;
    let cut = null;
    for (let a = el; a; a = a.parentElement) {
      const s = getComputedStyle(a);
      if (s.display === 'none' || s.visibility === 'hidden' || s.opacity === '0') {
        hidden = true;
        break;
      }
      if (a.tagName.toLowerCase() === 'svg') break;
      const hideX = s.overflowX === 'hidden' || s.overflowX === 'clip';
      const hideY = s.overflowY === 'hidden' || s.overflowY === 'clip';
      const scrollX = s.overflowX === 'auto' || s.overflowX === 'scroll';
      const scrollY = s.overflowY === 'auto' || s.overflowY === 'scroll';
      if (!hideX && !hideY && !scrollX && !scrollY) continue;
      const c = a.getBoundingClientRect();
      const outside = ((hideX || scrollX) && (v.r <= c.left + 0.5 || v.l >= c.right - 0.5)) ||
        ((hideY || scrollY) && (v.b <= c.top + 0.5 || v.t >= c.bottom - 0.5));
      if (outside) { hidden = true; break; }
      const inside = (!hideX || (v.l >= c.left - 0.5 && v.r <= c.right + 0.5)) &&
        (!hideY || (v.t >= c.top - 0.5 && v.b <= c.bottom + 0.5));
      const name = typeof a.className === 'string' && a.className ? a.className : a.tagName;
      if (!inside && !cut) cut = name;
      if (scrollX) { v.l = Math.max(v.l, c.left); v.r = Math.min(v.r, c.right); }
      if (scrollY) { v.t = Math.max(v.t, c.top); v.b = Math.min(v.b, c.bottom); }
    }
    if (hidden) continue;
    const g = el.closest('.fx-node');
    if (g && g.querySelector('rect')) {
      const box = g.querySelector('rect').getBoundingClientRect();
      if (r.left < box.left - 0.5 || r.right > box.right + 0.5) cut = cut || 'graph box';
    }
    if (cut) out.push({text: text.trim().slice(0, 60), by: String(cut), width: innerWidth});
  }
  return out;
}"""

# The figures every visible tree row must show in full: its total latency.
ROW_TOTALS_JS = r"""() => [...document.querySelectorAll('.fx-trace-row')]
  .filter(r => r.style.display !== 'none' && r._fxItem !== undefined)
  .map(r => {
    const total = r.querySelector('.fx-lat-total');
    const cell = r.querySelector('.fx-cell-lat').getBoundingClientRect();
    const box = total.getBoundingClientRect();
    const shown = box.width > 0 && box.left >= cell.left - 0.5 && box.right <= cell.right + 0.5 &&
      box.top >= cell.top - 0.5 && box.bottom <= cell.bottom + 0.5;
    return {text: total.textContent, shown: shown};
  })"""


def clipped_figures(page: Any) -> list[dict[str, Any]]:
    """The figures on ``page`` drawn in part (see the module docstring)."""
    return list(page.evaluate(CLIPPED_JS))


def big_trace() -> dict[str, Any]:
    """Long names, deep nesting and large figures: a 19.41 s parent, 8-digit token counts,
    a $1,234 call next to a $0.00000064 one, long model names and tags."""
    long = "summarise_every_quarterly_report_for_the_board_of_directors_" * 2
    nodes: list[dict[str, Any]] = []

    def add(
        name: str, kind: str, start: float, latency: float | None, parent: int | None, **fields: Any
    ) -> dict[str, Any]:
        item = node(len(nodes), name, kind, start, latency, parent, **fields)
        nodes.append(item)
        if parent is not None:
            nodes[parent]["children"].append(item)
        return item

    add(long, "agent", 0.0, 19409.1, None, attributes={"trace.tag.customer": "acme-enterprises"})
    parent = 0
    for depth in range(1, 9):  # a deep chain: indentation eats the name column
        add(f"{long}_level_{depth}", "chain", depth * 10.0, 19000.0 - depth * 1000, parent)
        parent = len(nodes) - 1
    add(
        "chat.completions.create",
        "llm",
        100.0,
        12345.6,
        parent,
        meta={
            "model": "gpt-4o-2024-08-06-with-a-very-long-fine-tune-suffix",
            "prompt_tokens": 12_345_678,
            "completion_tokens": 9_876_543,
            "total_tokens": 22_222_221,
            "estimated_cost_usd": 1234.5678,
        },
    )
    add(
        "embeddings.create",
        "llm",
        12500.0,
        3.2,
        parent,
        meta={
            "model": "text-embedding-3-small",
            "prompt_tokens": 32,
            "total_tokens": 32,
            "estimated_cost_usd": 6.4e-7,
        },
        attributes={"code.function.name": "embeddings.create", "llm.cost.total": 6.4e-7},
    )
    add("never_finished_" + long, "tool", 12600.0, None, parent, incomplete=True)
    add(
        "failing_" + long,
        "tool",
        13000.0,
        695.7,
        1,
        status="error",
        error="ValueError: " + "x" * 300,
    )
    for k in range(40):  # many siblings: a wide graph
        add(f"fetch_{k}", "retriever", 14000.0 + k * 100, 99.9 + k * 1000, 1)
    return {"version": 1, "nodes": [nodes[0]]}
