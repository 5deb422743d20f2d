"""The trace viewer page: the one path from a trace to its offline HTML, for any size.

model -> columns (`flow_xray.tree.columns`, lazily built nodes read a field at
a time) -> analyses (the static context's ghosts and ``static`` column,
``self_ms`` / ``view_status``, the overview, each LLM call's chat) -> packed
payload (`flow_xray.render.payload`) -> the page shell (`flow_xray.render.page`).
No dict per call is made, so a million-call trace renders in seconds.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from flow_xray import attributes as attr, jsontext
from flow_xray.analysis.chat import add_chat
from flow_xray.analysis.overview import overview
from flow_xray.analysis.static.rows import add_static
from flow_xray.analysis.timing import SLOW_SHARE, finish_columns
from flow_xray.files import write_text_atomic
from flow_xray.render.page import app_script, app_style, page
from flow_xray.render.payload import pack
from flow_xray.tree.columns import Absent, trace_columns
from flow_xray.tree.model import Totals, TraceNode, TraceResult, totals_dict
from flow_xray.tree.plain import nodes_from_plain

if TYPE_CHECKING:
    from flow_xray.analysis.static.index import StaticIndex
    from flow_xray.analysis.static.merge import StaticContext


def result_to_html(
    result: TraceResult,
    path: str | os.PathLike[str] | None = None,
    title: str = "flow-xray trace",
    static: StaticIndex | None = None,
    select: TraceNode | str | None = None,
    *,
    totals: Totals | None = None,
) -> str:
    """The viewer page of ``result`` (`TraceResult.to_html`); also written to ``path`` if given.

    With ``static`` the page shows the run's static context too (`StaticIndex.merge`);
    ``select`` (a node of the trace, or its ``span_id``) is the call the page opens on.
    ``totals``: ``result.totals`` when the caller has just read them (a command that
    also prints them), so the counting pass is not run again on an unchanged tree.
    """
    figures = totals_dict(result.totals if totals is None else totals)
    context = static.merge(result) if static is not None else None
    call = (select.span_id or select.id) if isinstance(select, TraceNode) else select
    with jsontext.gc_paused():  # a column per field, a row per call: no cycles
        html = trace_page(result.roots, figures, title, context, select=call)
    if path is not None:
        write_text_atomic(path, html)
    return html


def trace_page(
    roots: Sequence[TraceNode],
    totals: Any,
    title: str = "flow-xray trace",
    static: StaticContext | None = None,
    *,
    select: str | None = None,
) -> str:
    """The viewer page of the calls under ``roots``, with the trace's ``totals`` (a mapping
    as `TraceResult.to_dict` holds them, or None) in its header and ``static`` shown.

    ``select`` (a call's ``span_id``, or its ``id`` when it has none) is the call the
    page opens on instead of the overview's choice; a call named in the URL fragment
    still wins, and an unknown one changes nothing.
    """
    columns = trace_columns(roots)
    absent: Absent = {}
    section = None
    if static is not None:
        absent, section = add_static(columns, static)
    shape = finish_columns(columns, totals)
    add_chat(columns, absent)
    summary = overview(columns, shape)
    row = _row_of(columns, select) if select else -1
    if row >= 0:
        summary["first"] = row  # the row the page opens on (trace_app.js restoreState)
    head: dict[str, Any] = {
        "mode": "trace",
        "title": title,
        "totals": dict(totals) if isinstance(totals, Mapping) else None,
        "slow_share": SLOW_SHARE,
        "overview": summary,
        "tag_prefix": attr.TAG_PREFIX,  # trace.tag's badges (detail.js tagsOf)
    }
    if section is not None:
        head["static"] = section
    return page(title, pack(head, columns, absent, consume=True), app_script(), app_style())


def trace_to_html(
    data: Mapping[str, Any], title: str = "flow-xray trace", select: str | None = None
) -> str:
    """Return the offline viewer page for a trace in its JSON form (``TraceResult.to_dict()``).

    The nodes are drawn as they are (`flow_xray.tree.plain.nodes_from_plain`:
    nothing is checked or counted), with the header totals the data holds;
    ``select`` as in `trace_page`.

    Example::

        with open("run_trace.json") as fh:
            page = trace_to_html(json.load(fh))
    """
    nodes = data.get("nodes")
    with jsontext.gc_paused():  # as in `result_to_html`
        roots = nodes_from_plain(nodes if isinstance(nodes, list) else [])
        return trace_page(roots, data.get("totals"), title, select=select)


def _row_of(columns: Mapping[str, Sequence[Any]], call: str) -> int:
    """The row of the call whose ``span_id`` (else ``id``) is ``call``; -1 when none is."""
    for key in ("span_id", "id"):
        for row, value in enumerate(columns.get(key) or ()):
            if value == call:
                return row
    return -1
