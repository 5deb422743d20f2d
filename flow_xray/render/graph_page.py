"""The graph viewer page: a `Graph` (or DOT text) drawn offline, with an optional stepping view.

The trace's call graph and the autodiff `Value` graphs share it. The page is
built by the one shell (`flow_xray.render.page`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flow_xray.render.graph import Graph, Step, parse_dot
from flow_xray.render.page import app_script, app_style, page


def graph_to_html(
    graph: Graph,
    title: str = "flow-xray graph",
    steps: Sequence[Step] = (),
    source: str | None = None,
) -> str:
    """Return the offline viewer page for a `Graph`, with a stepping view when ``steps`` is given.

    The stepping view has a slider, previous/next buttons and arrow / j k keys;
    each frame highlights its ``active`` node and shows its ``labels``. The
    ``source`` text (the DOT the graph was read from) is kept in the page,
    shown on demand under the graph with a copy button.
    """
    payload: dict[str, Any] = {
        "mode": "graph",
        "title": title,
        "rankdir": graph.rankdir,
        "nodes": [
            {"id": n.id, "label": n.label, "status": n.status, "detail": dict(n.detail)}
            for n in graph.nodes
        ],
        "edges": [{"source": e.source, "target": e.target, "label": e.label} for e in graph.edges],
        "steps": [
            {"active": s.active, "caption": s.caption, "labels": dict(s.labels)} for s in steps
        ],
    }
    if source is not None:
        payload["source"] = source
    return page(title, payload, app_script(), app_style())


def dot_viewer_html(dot: str, title: str = "flow-xray graph") -> str:
    """Return the offline viewer page for DOT text: drawn when `parse_dot` understands it
    (the DOT text kept in the page, viewable and copyable), otherwise shown as text."""
    graph = parse_dot(dot)
    if graph is not None:
        return graph_to_html(graph, title=title, source=dot)
    return page(title, {"mode": "text", "title": title, "text": dot}, app_script(), app_style())
