"""The OpenTelemetry SDK side: the collecting processor, captures, provider set-up and export.

`processor` only collects finished spans into open captures, each turned
into plain data by `rows` (the one SDK span -> row/record conversion);
`capture` turns them into a `TraceResult` (via the pure `flow_xray.tree.build`);
`provider` (``configure``) installs a provider and exporters when asked;
`otlp_target`, `otlp` and `otlp_json_export` are the export plumbing;
`processes` (with `process_channel`, `process_handover`, `process_spans` and
the `_bootstrap` folder) brings child processes' spans in. The process-wide
state all of them keep is `flow_xray.runtime`'s. ``configure``, ``flush`` and
``shutdown`` are also importable from ``flow_xray``.
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
