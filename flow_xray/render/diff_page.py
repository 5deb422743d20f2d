"""The diff viewer: two runs aligned call by call in one offline HTML page.

The page is built by the one shell (`flow_xray.render.page`), so it follows
the trace viewer's safety rules: one file, no network (a
Content-Security-Policy allowing only its own inline script and style, by
hash), data only as escaped JSON read with ``JSON.parse`` and shown with
``textContent``. It reuses the trace viewer's scripts (DOM helpers, number
formats, the detail panel; everything but its start-up) and adds
``diff_view.js`` (rows and the side-by-side detail) and ``diff_app.js``
(header, filters, keyboard), styled by ``viewer.css`` plus ``diff_view.css``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from flow_xray.analysis.timing import SLOW_SHARE
from flow_xray.render.page import diff_script, diff_style, page
from flow_xray.render.trace_graph import flatten_trace


def diff_to_html(data: Mapping[str, Any], title: str = "flow-xray diff") -> str:
    """Return the diff viewer page for a diff's JSON form (``TraceDiff.to_dict()``).

    Example::

        page = diff_to_html(TraceResult.load("a.json").diff(TraceResult.load("b.json")).to_dict())
    """
    payload: dict[str, Any] = {
        "mode": "diff",
        "title": title,
        "summary": data.get("summary"),
        "equal": data.get("equal"),
        "counts": data.get("counts"),
        "slow_share": SLOW_SHARE,
        "before": _side(data.get("before")),
        "after": _side(data.get("after")),
        "calls": data.get("calls") if isinstance(data.get("calls"), list) else [],
    }
    return page(title, payload, diff_script(), diff_style())


def _side(side: Any) -> dict[str, Any]:
    """One run: its label, totals and nodes flattened in pre-order (as the trace viewer has
    them), so the rows' ``a`` / ``b`` indices point straight into the list."""
    side = side if isinstance(side, Mapping) else {}
    totals = side.get("totals")
    trace = {"nodes": side.get("nodes") or [], "totals": totals}
    return {
        "label": str(side.get("label", "")),
        "totals": dict(totals) if isinstance(totals, Mapping) else None,
        "nodes": flatten_trace(trace),
    }
