"""0.3.6's import path ``flow_xray.merge``: one run joined with its static call graph.

A thin module over `flow_xray.analysis.static.qualnames`:
``merge_trace_with_static(trace_result, static_index)`` takes a `TraceResult`
and a ``flow_xray.static_index.StaticIndex`` and returns a `MergedGraph` whose
``nodes`` (by qualname) are ``executed`` or ``reachable-but-not-executed`` and
whose ``edges`` (by ``(caller, callee)``) are ``both``, ``runtime-only`` or
``static-only`` (each one's ``status``).

Example::

    merged = merge_trace_with_static(trace.run(agent, "q"), build_index(["agent.py"]))
    merged.edges[("choose_tool", "call_email")].status   # 'static-only'
"""

from __future__ import annotations

from flow_xray.analysis.static.qualnames import (
    MODULE_CALLER,
    MergedEdge,
    MergedGraph,
    MergedNode,
    QualnameIndex,
    merge_by_qualname,
)
from flow_xray.tree.model import TraceResult

__all__ = ["MODULE_CALLER", "MergedEdge", "MergedGraph", "MergedNode", "merge_trace_with_static"]


def merge_trace_with_static(trace_result: TraceResult, static_index: QualnameIndex) -> MergedGraph:
    """Join ``trace_result``'s calls with ``static_index`` by function (see `merge_by_qualname`)."""
    return merge_by_qualname(trace_result, static_index)
