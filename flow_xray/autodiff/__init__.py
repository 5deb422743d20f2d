"""A scalar autodiff engine (`Value`) whose graphs export to DOT, JSON IR and HTML.

Standard library only: nothing here imports OpenTelemetry or flow-xray's
tracing side (a test walks the imports); the HTML viewers load
``flow_xray.render`` when called.

Example:
    >>> from flow_xray.autodiff import Value, value_graph_to_dot
    >>> a, b = Value(2.0, label="a"), Value(-3.0, label="b")
    >>> y = (a * b).tanh()
    >>> y.backward()
    >>> dot = value_graph_to_dot(y, show_grad=True)
"""

from __future__ import annotations

from flow_xray.autodiff.debugger import GraphDebugger, TwoStepDebugger, iter_backward_steps
from flow_xray.autodiff.demo import DEMOS, demo_graph, expression_graph
from flow_xray.autodiff.export import value_graph_to_dot, write_dot
from flow_xray.autodiff.ir import graph_from_ir, graph_to_ir, ir_from_json, ir_to_json
from flow_xray.autodiff.value import (
    IdScheme,
    Value,
    backward_from,
    export_ids,
    position_ids,
    topological_order,
    zero_grad,
)
from flow_xray.autodiff.viewer import (
    standalone_viewer_html,
    value_viewer_html,
    write_standalone_viewer_html,
    write_value_viewer_html,
)

__all__ = [
    "DEMOS",
    "GraphDebugger",
    "IdScheme",
    "TwoStepDebugger",
    "Value",
    "backward_from",
    "demo_graph",
    "export_ids",
    "expression_graph",
    "graph_from_ir",
    "graph_to_ir",
    "ir_from_json",
    "ir_to_json",
    "iter_backward_steps",
    "position_ids",
    "standalone_viewer_html",
    "topological_order",
    "value_graph_to_dot",
    "value_viewer_html",
    "write_dot",
    "write_standalone_viewer_html",
    "write_value_viewer_html",
    "zero_grad",
]
