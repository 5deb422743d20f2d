"""flow-xray: an execution-graph debugger for Python.

``@trace`` turns calls into OpenTelemetry spans; ``trace.capture()`` collects
them into a `TraceResult` that renders as an offline HTML viewer or DOT. The
autodiff names (`Value` and friends) live in an OpenTelemetry-free module.

The package is a folder per layer, each with an import rule (see the README's
"Architecture"): ``tracing`` (the decorator, OpenTelemetry API only), ``sdk``
(collecting and exporting), ``tree`` (the trace model), ``formats`` (trace
files), ``analysis``, ``serialize``, ``llm``, ``render``, ``autodiff``,
``integrations`` (pytest and notebooks) and ``cli``. Exports are lazy so that
``from flow_xray import Value`` never loads OpenTelemetry: each name is imported
from its module on first access.

PYTEST_DONT_REWRITE: the package ships a pytest plugin, so pytest would rewrite
its asserts, and warn (an error under ``-W error``) when it was imported before
pytest started, as under ``flow-xray run -m pytest``; this marker stops both.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.4.0"

_EXPORTS: dict[str, str] = {
    # tracing (tracing/: OpenTelemetry API only)
    "trace": "flow_xray.tracing.api",
    "propagate": "flow_xray.tracing.api",
    # collecting and exporting (sdk/)
    "configure": "flow_xray.sdk.provider",
    "flush": "flow_xray.sdk.provider",
    "shutdown": "flow_xray.sdk.provider",
    "FlowXrayProcessor": "flow_xray.sdk.processor",
    "OtlpJsonFileExporter": "flow_xray.sdk.otlp_json_export",
    # the trace as plain data (tree/) and its files (formats/)
    "TraceNode": "flow_xray.tree.model",
    "TraceResult": "flow_xray.tree.model",
    "Totals": "flow_xray.tree.model",
    "load_trace": "flow_xray.formats.registry",
    # values, limits and secrets (serialize/)
    "Limits": "flow_xray.serialize.limits",
    "get_limits": "flow_xray.serialize.limits",
    "set_limits": "flow_xray.serialize.limits",
    "set_redaction": "flow_xray.serialize.limits",
    # prices (llm/)
    "register_prices": "flow_xray.llm.pricing",
    # errors
    "FlowXrayError": "flow_xray.errors",
    "TraceFileError": "flow_xray.errors",
    "ConfigurationError": "flow_xray.errors",
    # autodiff (autodiff/: never loads OpenTelemetry)
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
    # notebooks: IPython's ``%load_ext flow_xray`` calls this on the package
    "load_ipython_extension": "flow_xray.integrations.notebook",
}

__all__ = ["__version__"]
__all__ += list(_EXPORTS)

if TYPE_CHECKING:
    # ``import x as x`` marks explicit re-exports for type checkers.
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
        ConfigurationError as ConfigurationError,
        FlowXrayError as FlowXrayError,
        TraceFileError as TraceFileError,
    )
    from flow_xray.formats.registry import load_trace as load_trace
    from flow_xray.integrations.notebook import (
        load_ipython_extension as load_ipython_extension,
    )
    from flow_xray.llm.pricing import register_prices as register_prices
    from flow_xray.sdk.otlp_json_export import OtlpJsonFileExporter as OtlpJsonFileExporter
    from flow_xray.sdk.processor import FlowXrayProcessor as FlowXrayProcessor
    from flow_xray.sdk.provider import (
        configure as configure,
        flush as flush,
        shutdown as shutdown,
    )
    from flow_xray.serialize.limits import (
        Limits as Limits,
        get_limits as get_limits,
        set_limits as set_limits,
        set_redaction as set_redaction,
    )
    from flow_xray.tracing.api import (
        propagate as propagate,
        trace as trace,
    )
    from flow_xray.tree.model import (
        Totals as Totals,
        TraceNode as TraceNode,
        TraceResult as TraceResult,
    )


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'flow_xray' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip this hook
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
