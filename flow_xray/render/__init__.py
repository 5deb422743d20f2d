"""Rendering from plain data: the shared graph model, DOT text and offline HTML viewers.

Stdlib only; nothing here imports OpenTelemetry or the autodiff engine. The
trace renderers take the JSON form of a trace (``TraceResult.to_dict()``), so
any saved flow-xray JSON renders with ``trace_to_html(json.load(fh))``.
"""

from __future__ import annotations

from flow_xray.render.graph import Graph, GraphEdge, GraphNode, Step, graph_to_dot, parse_dot
from flow_xray.render.html import columns_to_html, dot_viewer_html, graph_to_html, trace_to_html
from flow_xray.render.trace_graph import trace_to_dot

__all__ = [
    "Graph",
    "GraphEdge",
    "GraphNode",
    "Step",
    "columns_to_html",
    "dot_viewer_html",
    "graph_to_dot",
    "graph_to_html",
    "parse_dot",
    "trace_to_dot",
    "trace_to_html",
]
