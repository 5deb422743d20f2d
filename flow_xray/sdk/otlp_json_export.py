"""OTLP/JSON lines on disk: a SpanExporter writing spans as the Collector's ``file`` exporter does.

Each line is one ``{"resourceSpans": [...]}`` object in the OTLP/JSON encoding:
camelCase keys, trace and span ids as lowercase hex, 64-bit integers
(``startTimeUnixNano``, ``intValue``) as strings, ``status.code`` and ``kind``
as integers. `flow_xray.formats.otlp_json` reads them back.
"""

from __future__ import annotations

import base64
import json
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

# protobuf ships no type stubs (types-protobuf is a separate package we do not require).
from google.protobuf.json_format import MessageToDict  # type: ignore[import-untyped,unused-ignore]
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from flow_xray.sdk.span_text import exportable_spans

_ID_KEYS = ("traceId", "spanId", "parentSpanId")


def _hex_id(value: str) -> str:
    """Protobuf JSON writes ``bytes`` as base64; OTLP/JSON wants lowercase hex."""
    return base64.b64decode(value).hex() if value else ""


def spans_to_otlp_json(spans: Sequence[ReadableSpan]) -> dict[str, Any]:
    """Encode SDK spans as one OTLP/JSON ``{"resourceSpans": [...]}`` object."""
    document: dict[str, Any] = MessageToDict(encode_spans(spans), use_integers_for_enums=True)
    for resource_spans in document.get("resourceSpans", ()):
        for scope_spans in resource_spans.get("scopeSpans", ()):
            for span in scope_spans.get("spans", ()):
                for key in _ID_KEYS:
                    if key in span:
                        span[key] = _hex_id(span[key])
                for link in span.get("links", ()):
                    for key in ("traceId", "spanId"):
                        if key in link:
                            link[key] = _hex_id(link[key])
    return document


class OtlpJsonFileExporter(SpanExporter):
    """A SpanExporter appending one OTLP/JSON line per exported batch to ``path``.

    The file is truncated when the exporter is created unless ``append=True``.
    Each line is flushed as it is written, so a crash loses at most the batch
    being encoded. Safe to call from several threads.

    Example::

        provider.add_span_processor(BatchSpanProcessor(OtlpJsonFileExporter("spans.jsonl")))
    """

    def __init__(self, path: str | os.PathLike[str], *, append: bool = False) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._file: IO[str] | None = self.path.open("a" if append else "w", encoding="utf-8")

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        """Write ``spans`` as one line; FAILURE once shut down."""
        if not spans:
            return SpanExportResult.SUCCESS
        document = spans_to_otlp_json(exportable_spans(spans))
        line = json.dumps(document, separators=(",", ":"), allow_nan=True)
        with self._lock:
            if self._file is None:
                return SpanExportResult.FAILURE
            self._file.write(line + "\n")
            self._file.flush()
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        """Close the file; later exports fail."""
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        """Lines are flushed as they are written."""
        return True
