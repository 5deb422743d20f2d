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
from typing import Any

from flow_xray.analysis.timing import SLOW_SHARE, finish_columns
from flow_xray.render.page import diff_script, diff_style, page
from flow_xray.render.payload import pack
from flow_xray.tree.columns import trace_columns
from flow_xray.tree.plain import nodes_from_plain


def diff_to_html(data: Mapping[str, Any], title: str = "flow-xray diff") -> str:
    """Return the diff viewer page for a diff's JSON form (``TraceDiff.to_dict()``).

    Example::

        page = diff_to_html(TraceResult.load("a.json").diff(TraceResult.load("b.json")).to_dict())
    """
    calls = data.get("calls")
    payload: dict[str, Any] = {
        "mode": "diff",
        "title": title,
        "summary": data.get("summary"),
        "equal": data.get("equal"),
        "counts": data.get("counts"),
        "slow_share": SLOW_SHARE,
        "before": _side(data.get("before")),
        "after": _side(data.get("after")),
        "calls": _packed({}, calls if isinstance(calls, list) else []),
    }
    return page(title, payload, diff_script(), diff_style())


def _side(side: Any) -> dict[str, Any]:
    """One run: its label, totals and nodes flattened in pre-order (as the trace viewer has
    them), so the rows' ``a`` / ``b`` indices point straight into the list; packed."""
    side = side if isinstance(side, Mapping) else {}
    totals = side.get("totals")
    nodes = side.get("nodes")
    head = {
        "label": str(side.get("label", "")),
        "totals": dict(totals) if isinstance(totals, Mapping) else None,
    }
    # The rows `flatten_trace` gives, kept as the columns they are made from.
    columns = trace_columns(nodes_from_plain(nodes if isinstance(nodes, list) else []))
    finish_columns(columns, totals)
    return pack(head, columns, consume=True)


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
