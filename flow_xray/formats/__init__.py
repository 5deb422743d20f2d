"""Trace files: one module per format behind one sniff-and-read registry.

`registry.load_trace` reads a file once and hands it to the first format that
recognises it: flow-xray JSON (`flow_xray_json`, the versioned envelope
``TraceResult.save`` writes), OTLP JSON in every spelling (`otlp_json`), Jaeger
JSON (`jaeger_json`), and span objects (`span_json`: the SDK's console
exporter, Phoenix's REST export). A new format is one new module and one entry
in `registry.FORMATS`. No OpenTelemetry here.
"""

from __future__ import annotations

from flow_xray.formats.registry import load_trace

__all__ = ["load_trace"]
