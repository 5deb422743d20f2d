"""0.2.0's import path ``flow_xray.export_html``: single-file offline HTML viewers.

A thin module over `flow_xray.autodiff.viewer` (DOT graphs),
`flow_xray.render.trace_page` (traces) and `flow_xray.analysis.diff` (0.3.x's
``diff_to_html``). Pages need no network: 0.2.0 loaded Graphviz from a CDN,
these draw the graph themselves.
"""

from __future__ import annotations

from typing import Any

from flow_xray.analysis.diff import diff_traces
from flow_xray.autodiff.viewer import standalone_viewer_html, write_standalone_viewer_html
from flow_xray.render.trace_page import trace_to_html
from flow_xray.tree.model import TraceResult

__all__ = [
    "diff_to_html",
    "standalone_viewer_html",
    "trace_to_standalone_html",
    "write_standalone_viewer_html",
]


def diff_to_html(old: TraceResult, new: TraceResult, *, title: str = "flow-xray diff") -> str:
    """0.3.x's ``diff_to_html``: the offline diff viewer page of two runs (``old`` first).

    Example::

        page = diff_to_html(TraceResult.load("good.json"), TraceResult.load("bad.json"))
    """
    return diff_traces(old, new).to_html(title=title)


def trace_to_standalone_html(
    trace_result: Any, *, title: str = "flow-xray trace", static_index: Any | None = None
) -> str:
    """Return the offline viewer page of a `TraceResult` (``result.to_html`` writes the same).

    ``static_index`` (0.3.6's; a ``flow_xray.static_index.build_index`` result or a
    `StaticIndex`) adds the static context, as ``result.to_html(static_index=...)`` does.

    Example::

        page = trace_to_standalone_html(trace.run(agent, "query"), title="agent")
    """
    to_html = getattr(trace_result, "to_html", None)
    if static_index is not None:
        return str(trace_result.to_html(title=title, static_index=static_index))
    if callable(to_html):
        return str(to_html(title=title))
    return trace_to_html(trace_result.to_dict(), title=title)  # only to_dict(), as 0.2.0 took
