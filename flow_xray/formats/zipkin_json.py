"""Zipkin v2 JSON: a list of spans, as Zipkin's ``/api/v2/trace/<id>`` and OpenTelemetry's
Zipkin exporter write it. No OpenTelemetry here.

A span is ``{"traceId", "id", "parentId", "name", "timestamp", "duration",
"kind", "localEndpoint", "tags", "annotations"}``: times in microseconds, every
tag a string. OpenTelemetry's exporter keeps the status in tags
(``otel.status_code``, ``error`` with the description) and the instrumentation
scope as ``otel.scope.name`` / ``otel.library.name``; they become the record's
status and scope again. An annotation is an event: its value is the event's
name, or (as that exporter writes it) ``{"name": {attributes}}`` JSON text.
Token counts arrive as text (``"13"``); the tree reads decimal text as numbers.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from flow_xray import attributes as attr, jsontext
from flow_xray.analysis.accounting import build_result
from flow_xray.errors import TraceFileError
from flow_xray.formats.parsed import Parsed
from flow_xray.tree.model import TraceResult
from flow_xray.tree.spans import EventRecord, SpanRecord

__all__ = ["read", "read_zipkin_json", "recognises"]

_ERROR_TAG = "error"
_SCOPE_TAGS = (attr.OTEL_SCOPE_NAME, attr.OTEL_LIBRARY_NAME)
_FIELD_TAGS = frozenset(
    {
        attr.OTEL_STATUS_CODE,
        attr.OTEL_STATUS_DESCRIPTION,
        attr.OTEL_SCOPE_VERSION,
        attr.OTEL_LIBRARY_NAME,
        attr.OTEL_LIBRARY_VERSION,
    }
)


def _spans(document: Any) -> list[Any] | None:
    if isinstance(document, list) and document and all(isinstance(s, Mapping) for s in document):
        return document
    return None


def recognises(parsed: Parsed) -> bool:
    """A JSON array of Zipkin spans (``traceId``, ``id`` and a ``timestamp`` or endpoint)."""
    spans = _spans(parsed.first)
    if spans is None:
        return False
    sample = spans[0]
    return {"traceId", "id"} <= sample.keys() and (
        "timestamp" in sample or "localEndpoint" in sample
    )


def read(parsed: Parsed) -> TraceResult:
    """The trace of a file `recognises` accepted (several arrays one after another too)."""
    spans = [s for d in parsed.documents or [parsed.first] for s in _spans(d) or ()]
    return build_result(read_zipkin_json(spans))


def read_zipkin_json(spans: list[Any]) -> list[SpanRecord]:
    """Zipkin v2 span objects as `SpanRecord`s.

    Raises:
        TraceFileError: a span lacks its ids or has a malformed time (the message says which).
    """
    records = []
    for number, span in enumerate(spans, start=1):
        try:
            records.append(_span(span))
        except (ValueError, TypeError, AttributeError) as exc:
            raise TraceFileError(f"Zipkin span {number}: {exc}") from None
    return records


def _hex(value: Any, size: int, what: str) -> str:
    """Zipkin ids are 16 or 32 hex digits (64-bit trace ids too): padded to ``size`` bytes."""
    if not isinstance(value, str) or not value or len(value) > size * 2:
        raise ValueError(f"{what} {value!r:.40} is not a hex id of up to {size * 2} digits")
    return f"{int(value, 16):0{size * 2}x}"


def _micros(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{what} {value!r:.40} is not a number of microseconds")
    return int(value)


def _span(span: Mapping[str, Any]) -> SpanRecord:
    tags = span.get("tags") or {}
    if not isinstance(tags, Mapping):
        raise ValueError("'tags' is not an object")
    start = _micros(span.get("timestamp", 0), "timestamp") * 1000
    duration = span.get("duration")
    code = str(tags.get(attr.OTEL_STATUS_CODE, "")).upper()
    failed = code == "ERROR" or (not code and _ERROR_TAG in tags)
    message = tags.get(attr.OTEL_STATUS_DESCRIPTION) or tags.get(_ERROR_TAG)
    attributes: dict[str, Any] = {
        str(k): v for k, v in tags.items() if k not in _FIELD_TAGS and k != _ERROR_TAG
    }
    scope = next((tags[k] for k in _SCOPE_TAGS if isinstance(tags.get(k), str)), None)
    if scope and scope != attr.TRACER_NAME:
        attributes[attr.OTEL_SCOPE_NAME] = scope
    elif attr.OTEL_SCOPE_NAME in attributes:
        del attributes[attr.OTEL_SCOPE_NAME]
    parent = span.get("parentId")
    return SpanRecord(
        trace_id=_hex(span.get("traceId"), 16, "traceId"),
        span_id=_hex(span.get("id"), 8, "id"),
        parent_id=_hex(parent, 8, "parentId") if parent else None,
        name=str(span.get("name") or ""),
        start_ns=start,
        end_ns=None if duration is None else start + _micros(duration, "duration") * 1000,
        status="ERROR" if failed else ("OK" if code == "OK" else "UNSET"),
        status_message=message if failed and isinstance(message, str) and message else None,
        attributes=attributes,
        events=tuple(_events(span.get("annotations"))),
    )


def _events(annotations: Any) -> Iterator[EventRecord]:
    for note in annotations or ():
        if not isinstance(note, Mapping):
            raise ValueError("an annotation is not an object")
        value = str(note.get("value", ""))
        name, attributes = value, {}
        if value[:1] == "{":
            try:
                data = jsontext.loads(value)
            except ValueError:
                data = None
            if isinstance(data, Mapping) and len(data) == 1:
                ((name, inner),) = data.items()
                attributes = dict(inner) if isinstance(inner, Mapping) else {}
        time_ns = _micros(note.get("timestamp", 0), "annotation timestamp") * 1000
        yield EventRecord(str(name), time_ns, attributes)
