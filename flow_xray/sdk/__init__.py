"""The OpenTelemetry SDK side: the collecting processor, captures, provider set-up and export.

`processor` only collects finished spans into open captures; `capture` turns
them into a `TraceResult` (via the pure `flow_xray.tree.build`); `configure`
installs a provider and exporters when asked; `otlp` and `otlp_json_export`
are the export plumbing. ``configure``, ``flush`` and ``shutdown`` are also
importable from ``flow_xray``.
"""

from __future__ import annotations

from flow_xray.sdk.capture import Capture
from flow_xray.sdk.otlp_json_export import OtlpJsonFileExporter
from flow_xray.sdk.processor import FlowXrayProcessor
from flow_xray.sdk.provider import configure, flush, shutdown

__all__ = [
    "Capture",
    "FlowXrayProcessor",
    "OtlpJsonFileExporter",
    "configure",
    "flush",
    "shutdown",
]
