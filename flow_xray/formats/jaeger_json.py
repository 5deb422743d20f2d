"""Jaeger JSON: read the traces Jaeger's UI and query API return, so they open offline.

``GET /api/traces/ID`` (and the UI's "Download JSON") answer
``{"data": [{"traceID", "spans": [...], "processes": {...}}]}``; a single trace
object (the UI's trace JSON view) is read too, as is a search result holding
several traces. Times are microseconds; a tag is ``{"key", "type", "value"}``
with type ``string``, ``bool``, ``int64``, ``float64`` or ``binary``.

Jaeger stores an OTLP span's status, kind and instrumentation scope as tags
(``otel.status_code``, ``otel.status_description``, ``error``, ``span.kind``,
``otel.scope.*``); they become the record's status again and are not
attributes, so a span reads the same from Jaeger as from an OTLP file. An
event is a log whose ``event`` field is its name. The parent is the first
``CHILD_OF`` reference (else the first ``FOLLOWS_FROM``, as the Jaeger UI
nests them). No OpenTelemetry here: a pure function from parsed JSON to
`SpanRecord`s.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import suppress
from typing import Any

from flow_xray import attributes as attr
from flow_xray.analysis.accounting import build_result
from flow_xray.errors import TraceFileError
from flow_xray.formats.parsed import MAX_UNIX_NANOS, Parsed, shown, time_problem
from flow_xray.tree.model import TraceResult
from flow_xray.tree.spans import EventRecord, SpanRecord

# Tags that hold OTLP span fields rather than attributes.
_STATUS_CODE = attr.OTEL_STATUS_CODE
_STATUS_DESCRIPTION = attr.OTEL_STATUS_DESCRIPTION
_ERROR = "error"
_FIELD_TAGS = frozenset(
    {
        _STATUS_CODE,
        _STATUS_DESCRIPTION,
        attr.SPAN_KIND_TAG,
        attr.OTEL_SCOPE_NAME,  # kept as an attribute for other instrumentations' spans
        attr.OTEL_SCOPE_VERSION,
        attr.OTEL_LIBRARY_NAME,
        attr.OTEL_LIBRARY_VERSION,
        attr.W3C_TRACESTATE_TAG,
    }
)
_EVENT_FIELD = "event"
_SCOPE_NAME = attr.OTEL_SCOPE_NAME
_OWN_SCOPE = attr.TRACER_NAME


class _BadSpan(ValueError):
    """Raised inside the reader; becomes a TraceFileError naming the span."""


def is_jaeger_json(document: Any) -> bool:
    """Whether ``document`` looks like Jaeger JSON: ``{"data": [trace...]}`` or one trace."""
    if not isinstance(document, Mapping):
        return False
    data = document.get("data")
    if isinstance(data, list):
        return all(_is_trace(item) for item in data) and (bool(data) or "errors" in document)
    return _is_trace(document)


def _is_trace(item: Any) -> bool:
    return isinstance(item, Mapping) and "traceID" in item and isinstance(item.get("spans"), list)


def recognises(parsed: Parsed) -> bool:
    """A single document that `is_jaeger_json`."""
    return parsed.whole and is_jaeger_json(parsed.first)


def read(parsed: Parsed) -> TraceResult:
    """The trace of a file `recognises` accepted."""
    return build_result(read_jaeger_json(parsed.first))


def read_jaeger_json(document: Any) -> list[SpanRecord]:
    """The spans of every trace in a parsed Jaeger JSON document, in document order.

    Raises:
        TraceFileError: the document holds no trace (an API error answer, for
            one), or a span is malformed (the message names trace and span).
    """
    if not is_jaeger_json(document):
        raise TraceFileError("not Jaeger JSON: expected {'data': [traces]} or one trace object")
    traces = document["data"] if isinstance(document.get("data"), list) else [document]
    if not traces:
        errors = document.get("errors") or []
        detail = "; ".join(
            str(error.get("msg", error) if isinstance(error, Mapping) else error)
            for error in (errors if isinstance(errors, list) else [errors])
            if error
        )
        if len(detail) > 120:
            detail = f"{detail[:119]}…"
        raise TraceFileError(f"Jaeger JSON holds no trace{': ' + detail if detail else ''}")
    records: list[SpanRecord] = []
    for t_index, trace in enumerate(traces):
        processes = trace.get("processes") or {}
        for s_index, span in enumerate(trace["spans"]):
            try:
                records.append(_read_span(span, trace, processes))
            except (_BadSpan, AttributeError, TypeError) as exc:
                raise TraceFileError(
                    f"Jaeger JSON: trace {t_index} span {s_index}: {exc}"
                ) from None
    return records


def _read_span(span: Any, trace: Mapping[str, Any], processes: Any) -> SpanRecord:
    if not isinstance(span, Mapping):
        raise _BadSpan("not an object")
    name = span.get("operationName")
    if not isinstance(name, str):
        raise _BadSpan("no string 'operationName'")
    if not isinstance(processes, Mapping):
        raise _BadSpan("'processes' is not an object")
    trace_id = _hex_id(span.get("traceID", trace.get("traceID")), 16, "traceID")
    span_id = _hex_id(span.get("spanID"), 8, "spanID")
    start_ns = _time(span.get("startTime"), "startTime")
    duration = span.get("duration")
    end_ns = None if duration is None else _end(start_ns, duration)
    tags = _tags(span.get("tags"), "tags")
    status, message = _status(tags)
    attributes = {key: value for key, value in tags.items() if key not in _FIELD_TAGS}
    scope = tags.get(_SCOPE_NAME)
    if isinstance(scope, str) and scope and scope != _OWN_SCOPE:
        # Another instrumentation's span, marked as the processor marks one (so it is
        # scrubbed and counted as such).
        attributes[attr.OTEL_SCOPE_NAME] = scope
    if status == "ERROR" and attributes.get(_ERROR) is True:
        del attributes[_ERROR]  # what Jaeger adds for an ERROR status
    return SpanRecord(
        trace_id=trace_id,
        span_id=span_id,
        parent_id=_parent(span, trace_id),
        name=name,
        start_ns=start_ns,
        end_ns=end_ns,
        status=status,
        status_message=message,
        attributes=attributes,
        events=tuple(_events(span.get("logs"))),
    )


def _hex_id(value: Any, size: int, what: str) -> str:
    """Jaeger writes ids as hex without the zero high half of a 64-bit trace id: pad them."""
    if not isinstance(value, str) or not value or len(value) > size * 2:
        raise _BadSpan(f"{what} {shown(value)} is not a hex id of up to {size * 2} digits")
    try:
        number = int(value, 16)
    except ValueError:
        raise _BadSpan(f"{what} {shown(value)} is not hex") from None
    return f"{number:0{size * 2}x}"


def _micros(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise _BadSpan(f"{what} {shown(value)} is not a number of microseconds")
    try:
        return int(value)
    except (ValueError, OverflowError):  # not a number, NaN, infinity, past 4,300 digits
        raise _BadSpan(f"{what} {shown(value)} is not a number of microseconds") from None


def _time(value: Any, what: str) -> int:
    """Microseconds since 1970 as nanoseconds, within OTLP's unsigned 64-bit range."""
    nanos = _micros(value, what) * 1000
    problem = time_problem(nanos, what, value)
    if problem is not None:
        raise _BadSpan(problem)
    return nanos


def _end(start_ns: int, duration: Any) -> int:
    """The end of a span of ``duration`` microseconds (never negative, never past the range)."""
    micros = _micros(duration, "duration")
    if micros < 0 or start_ns + micros * 1000 > MAX_UNIX_NANOS:
        raise _BadSpan(f"duration {shown(duration)} is not a span's length in microseconds")
    return start_ns + micros * 1000


def _parent(span: Mapping[str, Any], trace_id: str) -> str | None:
    references = span.get("references") or []
    if not isinstance(references, list):
        raise _BadSpan("'references' is not a list")
    same_trace = [
        ref
        for ref in references
        if isinstance(ref, Mapping)
        and ref.get("spanID")
        and _hex_id(ref.get("traceID", trace_id), 16, "reference traceID") == trace_id
    ]
    for kind in ("CHILD_OF", "FOLLOWS_FROM"):
        for ref in same_trace:
            if ref.get("refType", "CHILD_OF") == kind:
                return _hex_id(ref["spanID"], 8, "reference spanID")
    legacy = span.get("parentSpanID")  # the deprecated field of older Jaeger JSON
    if legacy:
        parent = _hex_id(legacy, 8, "parentSpanID")
        return None if parent == "0" * 16 else parent
    return None


def _status(tags: Mapping[str, Any]) -> tuple[str, str | None]:
    code = tags.get(_STATUS_CODE)
    if isinstance(code, str) and code.upper() in ("OK", "ERROR", "UNSET"):
        status = code.upper()
    else:
        # A span from a Jaeger client marks failure with the tag error=true.
        status = "ERROR" if tags.get(_ERROR) in (True, "true") else "UNSET"
    message = tags.get(_STATUS_DESCRIPTION)
    return status, message if isinstance(message, str) and message else None


def _events(logs: Any) -> Iterator[EventRecord]:
    if logs is None:
        return
    if not isinstance(logs, list):
        raise _BadSpan("'logs' is not a list")
    for log in logs:
        if not isinstance(log, Mapping):
            raise _BadSpan("a log is not an object")
        fields = _tags(log.get("fields"), "log fields")
        name = fields.pop(_EVENT_FIELD, "log")
        yield EventRecord(
            name=str(name),
            time_ns=_time(log.get("timestamp", 0), "log timestamp"),
            attributes=fields,
        )


def _tags(items: Any, what: str) -> dict[str, Any]:
    if items is None:
        return {}
    if not isinstance(items, list):
        raise _BadSpan(f"{what} is not a list")
    result: dict[str, Any] = {}
    for item in items:
        if not isinstance(item, Mapping) or not isinstance(item.get("key"), str):
            raise _BadSpan(f"{what}: {shown(item)} has no string 'key'")
        result[item["key"]] = _tag_value(item)
    return result


def _tag_value(tag: Mapping[str, Any]) -> Any:
    """A tag's value by its type; numbers and booleans may come as text (an int64 past
    2**53, the embedded-process form). Binary stays as Jaeger encoded it (base64)."""
    kind, value = tag.get("type", "string"), tag.get("value")
    if kind in ("string", "binary"):
        if isinstance(value, str):
            return value
    elif kind == "bool":
        if isinstance(value, bool):
            return value
        if value in ("true", "false"):
            return value == "true"
    elif kind == "int64":
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, str):
            with suppress(ValueError):
                return int(value)
    elif kind == "float64":
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        if isinstance(value, str):
            with suppress(ValueError):
                return float(value)
    else:
        return value  # a type this reader does not know: keep the value as given
    raise _BadSpan(f"tag {shown(tag.get('key'))}: {shown(value)} is not a valid {kind}")
