"""Pages and pictures of plain data: the graph model, DOT text and offline HTML viewers.

Presents only: the trace model (`flow_xray.tree`) and its analyses
(`flow_xray.analysis`) come in, pages and DOT go out. Stdlib only otherwise;
nothing here imports OpenTelemetry. `page` is the one HTML page shell (and its
Content-Security-Policy); `trace_page` the one trace viewer path, for any
trace size; `diff_page` and `graph_page` the other viewers; `trace_graph` a
trace's call graph and DOT; `graph` the graph model shared with the autodiff
viewer, its DOT writer and reader; `payload` how a trace page packs its data.

This package's own namespace holds the graph side only, so that drawing a
`Value` graph never loads the trace model: import the trace pages from
`flow_xray.render.trace_page` and `flow_xray.render.trace_graph`.
"""

from __future__ import annotations

from flow_xray.render.graph import Graph, GraphEdge, GraphNode, Step, graph_to_dot, parse_dot
from flow_xray.render.graph_page import dot_viewer_html, graph_to_html

__all__ = [
    "Graph",
    "GraphEdge",
    "GraphNode",
    "Step",
    "dot_viewer_html",
    "graph_to_dot",
    "graph_to_html",
    "parse_dot",
]
