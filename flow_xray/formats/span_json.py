"""Span JSON that other tools write, read into `SpanRecord`s. No OpenTelemetry.

- The OpenTelemetry SDK's ``ConsoleSpanExporter`` (``ReadableSpan.to_json()``,
  pretty-printed objects one after another): ``context.trace_id`` /
  ``span_id`` as ``0x…`` hex, ISO-8601 times, ``status.status_code``,
  attributes as a plain object.
- Arize Phoenix's span export (``GET /v1/projects/<p>/spans``): the same shape
  inside ``{"data": [...]}``, with ``status_code`` / ``status_message`` and
  ``span_kind`` at the top (kept as the span's ``openinference.span.kind``);
  and its OTLP flavour (``/spans/otlpv1``): OTLP
  spans with snake_case keys and every AnyValue field written, the unused ones
  null, read by the OTLP reader.

"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta, timezone
from typing import Any

from flow_xray import attributes as attr
from flow_xray.analysis.accounting import build_result
from flow_xray.errors import TraceFileError
from flow_xray.formats.parsed import Parsed, shown, time_problem
from flow_xray.tree.model import TraceResult
from flow_xray.tree.spans import EventRecord, SpanRecord

__all__ = ["is_span_json", "read", "read_span_json", "recognises", "span_list"]

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_STATUS = {"UNSET": "UNSET", "OK": "OK", "ERROR": "ERROR"}
_NO_KIND = frozenset({"", "UNKNOWN"})


def span_list(document: Any) -> list[Any] | None:
    """The spans of a Phoenix export (``{"data": [...]}``) or of a bare list, else None."""
    items = document.get("data") if isinstance(document, Mapping) else document
    if isinstance(items, list) and items and all(isinstance(i, Mapping) for i in items):
        return items
    return None


def is_span_json(document: Any) -> bool:
    """A ``ConsoleSpanExporter`` / Phoenix span: ``name`` plus ``context.span_id`` and times."""
    return (
        isinstance(document, Mapping)
        and isinstance(document.get("name"), str)
        and isinstance(document.get("context"), Mapping)
        and "span_id" in document["context"]
        and "start_time" in document
    )


def _hex(value: Any, size: int, what: str, optional: bool = False) -> str | None:
    if value in (None, "") and optional:
        return None
    if not isinstance(value, str):
        raise TraceFileError(f"{what} must be a hex string, got {shown(value)}")
    text = value[2:] if value[:2].lower() == "0x" else value
    if len(text) > size * 2:
        raise TraceFileError(f"{what} {shown(value)} is not a {size}-byte id")
    try:
        raw = bytes.fromhex(text.rjust(size * 2, "0"))
    except ValueError:
        raise TraceFileError(f"{what} {shown(value)} is not hex") from None
    if len(raw) != size:
        raise TraceFileError(f"{what} {shown(value)} is not a {size}-byte id")
    if optional and not any(raw):
        return None
    return raw.hex()


def _nanos(value: Any, what: str) -> int | None:
    """ISO-8601 text (``Z`` or an offset; naive means UTC) or integer nanoseconds."""
    if value is None or value == "":
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        nanos = value
    elif isinstance(value, str) and len(value) <= 64:
        text = value.strip().replace("Z", "+00:00").replace("z", "+00:00")
        try:
            moment = datetime.fromisoformat(text)
        except ValueError:
            raise TraceFileError(f"{what} {shown(value)} is not an ISO-8601 time") from None
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=timezone.utc)
        try:
            nanos = (moment - _EPOCH) // timedelta(microseconds=1) * 1000
        except OverflowError:  # an offset that moves year 1 or 9999 out of range
            raise TraceFileError(f"{what} {shown(value)} is out of range") from None
    else:
        raise TraceFileError(f"{what} {shown(value)} is not a time")
    problem = time_problem(nanos, what, value)
    if problem is not None:
        raise TraceFileError(problem)
    return nanos


def _attributes(value: Any) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        return {}
    return {str(k): tuple(v) if isinstance(v, list) else v for k, v in value.items()}


def _status(span: Mapping[str, Any]) -> tuple[str, str | None]:
    status = span.get("status")
    if isinstance(status, Mapping):  # ConsoleSpanExporter
        code, message = status.get("status_code"), status.get("description")
    else:  # Phoenix
        code, message = span.get("status_code"), span.get("status_message")
    name = _STATUS.get(str(code or "UNSET").upper().removeprefix("STATUSCODE."), "UNSET")
    return name, message if isinstance(message, str) and message else None


def _span(span: Mapping[str, Any]) -> SpanRecord:
    context = span["context"]
    start = _nanos(span.get("start_time"), "start_time")
    events = tuple(
        EventRecord(
            str(event.get("name", "")),
            _nanos(event.get("timestamp"), "event timestamp") or start or 0,
            _attributes(event.get("attributes")),
        )
        for event in span.get("events") or ()
        if isinstance(event, Mapping)
    )
    status, message = _status(span)
    attributes = _attributes(span.get("attributes"))
    kind = span.get("span_kind")  # Phoenix's: the OpenInference kind it recorded or inferred
    if isinstance(kind, str) and kind.upper() not in _NO_KIND and attr.SPAN_KIND not in attributes:
        attributes[attr.SPAN_KIND] = kind.upper()
    scope = span.get("instrumentation_scope") or span.get("instrumentation_info")
    scope_name = scope.get("name") if isinstance(scope, Mapping) else None
    if isinstance(scope_name, str) and scope_name and scope_name != attr.TRACER_NAME:
        attributes[attr.OTEL_SCOPE_NAME] = scope_name
    return SpanRecord(
        trace_id=str(_hex(context.get("trace_id"), 16, "trace_id")),
        span_id=str(_hex(context.get("span_id"), 8, "span_id")),
        parent_id=_hex(span.get("parent_id"), 8, "parent_id", optional=True),
        name=str(span["name"]),
        start_ns=start or 0,
        end_ns=_nanos(span.get("end_time"), "end_time"),
        status=status,
        status_message=message,
        attributes=attributes,
        events=events,
    )


def recognises(parsed: Parsed) -> bool:
    """Span objects one after another, or a Phoenix export's ``{"data": [...]}`` of them."""
    first = parsed.first
    spans = span_list(first) if isinstance(first, Mapping) else None
    return is_span_json(spans[0] if spans else first)


def read(parsed: Parsed) -> TraceResult:
    """The trace of a file `recognises` accepted."""
    first = parsed.first
    spans = span_list(first) if parsed.whole and isinstance(first, Mapping) else None
    return build_result(read_span_json(spans or parsed.documents))


def read_span_json(spans: Iterable[Any]) -> list[SpanRecord]:
    """Read ``ConsoleSpanExporter`` / Phoenix span objects.

    Raises:
        TraceFileError: a span lacks its ids or has a malformed time (the message says which).
    """
    records = []
    for number, span in enumerate(spans, start=1):
        if not is_span_json(span):
            raise TraceFileError(f"span {number} is not a span object (name, context, start_time)")
        try:
            records.append(_span(span))
        except TraceFileError as exc:
            raise TraceFileError(f"span {number} ({shown(span.get('name'))}): {exc}") from None
    return records
