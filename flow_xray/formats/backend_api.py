"""Traces as Tempo's and Jaeger v2's HTTP APIs return them: OTLP JSON inside an envelope.

- Grafana Tempo ``GET /api/traces/<id>``: ``{"batches": [resourceSpans...]}``
  (base64 ids, ``SPAN_KIND_*`` names);
- Tempo ``GET /api/v2/traces/<id>``: ``{"trace": {"resourceSpans": [...]}, "metrics": ...}``;
- Jaeger v2 ``GET /api/v3/traces/<id>``: ``{"result": {"resourceSpans": [...]}}``.

What is inside is read by the OTLP JSON reader (`flow_xray.formats.otlp_json`),
so a span reads the same from any of them as from the Collector's file. No
OpenTelemetry here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from flow_xray.analysis.accounting import build_result
from flow_xray.formats.otlp_json import read_otlp_documents
from flow_xray.formats.parsed import Parsed
from flow_xray.tree.model import TraceResult

__all__ = ["read", "recognises"]

# Envelope key -> how the OTLP document sits inside it.
_WRAPPERS = ("trace", "result")


def _is_otlp(document: Any) -> bool:
    return isinstance(document, Mapping) and isinstance(
        document.get("resourceSpans", document.get("resource_spans")), list
    )


def _otlp_documents(document: Any) -> list[Any] | None:
    """The OTLP ``{"resourceSpans": ...}`` documents an API answer holds, or None."""
    if not isinstance(document, Mapping):
        return None
    batches = document.get("batches")
    if isinstance(batches, list):  # Tempo v1: the resourceSpans list itself
        return [{"resourceSpans": batches}]
    for key in _WRAPPERS:
        inner = document.get(key)
        if _is_otlp(inner):
            return [inner]
        if isinstance(inner, Mapping) and isinstance(inner.get("batches"), list):
            return [{"resourceSpans": inner["batches"]}]  # Tempo v2 on older versions
    return None


def recognises(parsed: Parsed) -> bool:
    """A Tempo ``/api/traces`` or ``/api/v2/traces`` answer, or Jaeger's ``/api/v3/traces``."""
    return all(_otlp_documents(d) is not None for d in parsed.documents or [parsed.first])


def read(parsed: Parsed) -> TraceResult:
    """The trace of a file `recognises` accepted (several answers one after another too)."""
    documents = [
        inner for d in parsed.documents or [parsed.first] for inner in _otlp_documents(d) or ()
    ]
    return build_result(read_otlp_documents(documents))
