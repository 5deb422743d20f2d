"""The diff viewer: two runs aligned call by call in one offline HTML page.

The page is built by the one shell (`flow_xray.render.page`), so it follows
the trace viewer's safety rules: one file, no network (a
Content-Security-Policy allowing only its own inline script and style, by
hash), data only as escaped JSON read with ``JSON.parse`` and shown with
``textContent``. Both runs' calls and the aligned rows are packed as a trace
page packs its calls (`flow_xray.render.payload.pack`: columns, gzip), so a
diff of two 100k-call runs is a 6.7 MB page (137 MB as plain JSON). It reuses
the trace viewer's scripts (DOM helpers, number formats, the detail panel,
the payload reader; everything but its start-up) and adds
``diff_view.js`` (rows and the side-by-side detail) and ``diff_app.js``
(header, filters, keyboard), styled by ``viewer.css`` plus ``diff_view.css``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from flow_xray import jsontext
from flow_xray.analysis.diff.trace_diff import call_rows
from flow_xray.analysis.timing import SLOW_SHARE, finish_columns
from flow_xray.render.page import diff_script, diff_style, page
from flow_xray.render.payload import pack
from flow_xray.tree.columns import trace_columns
from flow_xray.tree.model import totals_dict
from flow_xray.tree.plain import nodes_from_plain

if TYPE_CHECKING:
    from flow_xray.analysis.diff.trace_diff import TraceDiff
    from flow_xray.tree.model import TraceNode


def result_diff_to_html(diff: TraceDiff, title: str = "flow-xray diff") -> str:
    """The diff viewer page of ``diff`` (`TraceDiff.to_html`), drawn from both runs' trees
    as they are: the page `diff_to_html` makes of ``diff.to_dict()``, without every
    call to a dict and back (two 100k-call runs: half the time)."""
    with jsontext.gc_paused():  # a dict per call, a column per field: no cycles
        rows, counts = call_rows(diff)
        before = _side(diff.before_label, diff.before.roots, totals_dict(diff.before.totals))
        after = _side(diff.after_label, diff.after.roots, totals_dict(diff.after.totals))
        return _page(title, diff.summary(), diff.equal, counts, before, after, rows)


def diff_to_html(data: Mapping[str, Any], title: str = "flow-xray diff") -> str:
    """Return the diff viewer page for a diff's JSON form (``TraceDiff.to_dict()``).

    Example::

        page = diff_to_html(TraceResult.load("a.json").diff(TraceResult.load("b.json")).to_dict())
    """
    calls = data.get("calls")
    with jsontext.gc_paused():  # as in `result_diff_to_html`
        before, after = (_plain_side(data.get(key)) for key in ("before", "after"))
        rows = calls if isinstance(calls, list) else []
        return _page(
            title, data.get("summary"), data.get("equal"), data.get("counts"), before, after, rows
        )


def _plain_side(side: Any) -> dict[str, Any]:
    """`_side` of one run in the diff's JSON form."""
    side = side if isinstance(side, Mapping) else {}
    totals = side.get("totals")
    nodes = side.get("nodes")
    return _side(
        str(side.get("label", "")),
        nodes_from_plain(nodes if isinstance(nodes, list) else []),
        dict(totals) if isinstance(totals, Mapping) else None,
    )


def _page(
    title: str,
    summary: Any,
    equal: Any,
    counts: Any,
    before: dict[str, Any],
    after: dict[str, Any],
    rows: list[Any],
) -> str:
    payload: dict[str, Any] = {
        "mode": "diff",
        "title": title,
        "summary": summary,
        "equal": equal,
        "counts": counts,
        "slow_share": SLOW_SHARE,
        "before": before,
        "after": after,
        "calls": _packed({}, rows),
    }
    return page(title, payload, diff_script(), diff_style())


def _side(label: str, roots: Sequence[TraceNode], totals: dict[str, Any] | None) -> dict[str, Any]:
    """One run: its label, totals and nodes flattened in pre-order (as the trace viewer has
    them), so the rows' ``a`` / ``b`` indices point straight into the list; packed."""
    columns = trace_columns(roots)  # the rows `flatten_trace` gives, as their columns
    finish_columns(columns, totals)
    return pack({"label": label, "totals": totals}, columns, consume=True)


def _packed(head: dict[str, Any], rows: list[Any]) -> dict[str, Any]:
    """``rows`` (dicts) as the trace page packs its calls (`flow_xray.render.payload.pack`),
    a column per key, with ``head``: a 100k-call diff's page is 6.7 MB, not 137. The
    page unpacks each part (``FX.payload.unpack``); a part with an empty head stands for
    its rows alone (the calls)."""
    lists: dict[str, list[Any]] = {}
    absent: dict[str, list[int]] = {}
    for at, row in enumerate(rows):
        mapping = row if isinstance(row, Mapping) else {}
        for key in mapping:
            if key not in lists:  # rows before it lack it
                lists[key], absent[key] = [None] * at, list(range(at))
        for key, column in lists.items():
            if key in mapping:
                column.append(mapping[key])
            else:
                column.append(None)
                absent[key].append(at)
    if not lists:
        lists["parent"] = [None] * len(rows)  # (rows without fields: still counted)
        absent["parent"] = list(range(len(rows)))
    columns: dict[str, Sequence[Any]] = dict(lists)
    return pack(head, columns, absent, consume=True)
