"""0.2.0's import path ``flow_xray.export_dot``: Graphviz DOT of a `Value` graph.

A thin module over `flow_xray.autodiff.export`. Unlike 0.2.0, DOT node ids are
graph positions (``n0``, ``n1``, ...), not ``Value.node_id``: see CHANGELOG.md.
"""

from __future__ import annotations

from flow_xray.autodiff.export import value_graph_to_dot, write_dot

__all__ = ["value_graph_to_dot", "write_dot"]
