"""flow-xray: an execution-graph debugger for Python.

``@trace`` turns calls into OpenTelemetry spans; ``trace.capture()`` collects
them into a `TraceResult` that renders as an offline HTML viewer or DOT. The
autodiff names (`Value` and friends) live in an OpenTelemetry-free module.

Exports are lazy so that ``from flow_xray import Value`` never loads
OpenTelemetry: each name is imported from its module on first access.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.3.0"

_EXPORTS: dict[str, str] = {
    # tracing
    "trace": "flow_xray.api",
    "propagate": "flow_xray.api",
    "configure": "flow_xray.provider",
    "FlowXrayProcessor": "flow_xray.processor",
    "TraceNode": "flow_xray.model",
    "TraceResult": "flow_xray.model",
    "Totals": "flow_xray.model",
    "FlowXrayError": "flow_xray.errors",
    "TraceFileError": "flow_xray.errors",
    # autodiff
    "Value": "flow_xray.autodiff",
    "backward_from": "flow_xray.autodiff",
    "topological_order": "flow_xray.autodiff",
    "zero_grad": "flow_xray.autodiff",
    "value_graph_to_dot": "flow_xray.autodiff",
    "write_dot": "flow_xray.autodiff",
    "graph_to_ir": "flow_xray.autodiff",
    "ir_to_json": "flow_xray.autodiff",
    "TwoStepDebugger": "flow_xray.autodiff",
    "GraphDebugger": "flow_xray.autodiff",
    "iter_backward_steps": "flow_xray.autodiff",
    "standalone_viewer_html": "flow_xray.autodiff",
    "write_standalone_viewer_html": "flow_xray.autodiff",
    "value_viewer_html": "flow_xray.autodiff",
    "write_value_viewer_html": "flow_xray.autodiff",
    "ir_from_json": "flow_xray.autodiff",
}

__all__ = ["__version__", *_EXPORTS]

if TYPE_CHECKING:
    # ``import x as x`` marks explicit re-exports for type checkers.
    from flow_xray.api import (
        propagate as propagate,
        trace as trace,
    )
    from flow_xray.autodiff import (
        GraphDebugger as GraphDebugger,
        TwoStepDebugger as TwoStepDebugger,
        Value as Value,
        backward_from as backward_from,
        graph_to_ir as graph_to_ir,
        ir_from_json as ir_from_json,
        ir_to_json as ir_to_json,
        iter_backward_steps as iter_backward_steps,
        standalone_viewer_html as standalone_viewer_html,
        topological_order as topological_order,
        value_graph_to_dot as value_graph_to_dot,
        value_viewer_html as value_viewer_html,
        write_dot as write_dot,
        write_standalone_viewer_html as write_standalone_viewer_html,
        write_value_viewer_html as write_value_viewer_html,
        zero_grad as zero_grad,
    )
    from flow_xray.errors import (
        FlowXrayError as FlowXrayError,
        TraceFileError as TraceFileError,
    )
    from flow_xray.model import (
        Totals as Totals,
        TraceNode as TraceNode,
        TraceResult as TraceResult,
    )
    from flow_xray.processor import FlowXrayProcessor as FlowXrayProcessor
    from flow_xray.provider import configure as configure


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'flow_xray' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip this hook
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
