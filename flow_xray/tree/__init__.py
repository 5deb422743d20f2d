"""The trace as plain data: span records, the `TraceNode` tree, building it, reading files.

No OpenTelemetry here. `spans` is the one shape every span source is reduced
to; `build` turns records into a tree (a pure function); `model` holds
`TraceNode` / `TraceResult` and the versioned JSON envelope; `load` is the one
loader for trace files, with the OTLP JSON reader in `otlp_json`.
"""

from __future__ import annotations

from flow_xray.tree.build import build_result
from flow_xray.tree.load import load_trace
from flow_xray.tree.model import Totals, TraceNode, TraceResult
from flow_xray.tree.otlp_json import read_otlp_json
from flow_xray.tree.spans import EventRecord, SpanRecord, SpanStore

__all__ = [
    "EventRecord",
    "SpanRecord",
    "SpanStore",
    "Totals",
    "TraceNode",
    "TraceResult",
    "build_result",
    "load_trace",
    "read_otlp_json",
]
