"""OTLP/JSON in every spelling: what the Collector's ``file`` exporter or ``run --otlp-json``
wrote, and Phoenix's OTLP span export.

Each line is one ``{"resourceSpans": [...]}`` object (or several pretty-printed
ones follow each other, or there is one); Phoenix's ``/spans/otlpv1`` holds bare
OTLP spans in ``{"data": [...]}``. The reader is lenient where producers differ
(snake_case keys, base64 ids, integer nanos, every AnyValue field written) and
strict where the data would be wrong. No OpenTelemetry here: reading a trace
file never loads the SDK or protobuf.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from flow_xray import attributes as attr, jsontext
from flow_xray.analysis.accounting import build_result
from flow_xray.errors import TraceFileError
from flow_xray.files import read_text
from flow_xray.formats.parsed import Parsed, shown, time_problem
from flow_xray.formats.span_json import span_list
from flow_xray.tree.model import TraceResult
from flow_xray.tree.spans import EventRecord, SpanRecord

_OWN_SCOPE = attr.TRACER_NAME

_STATUS_NAMES = {0: "UNSET", 1: "OK", 2: "ERROR"}
_STATUS_ALIASES = {
    "STATUS_CODE_UNSET": "UNSET",
    "STATUS_CODE_OK": "OK",
    "STATUS_CODE_ERROR": "ERROR",
    "UNSET": "UNSET",
    "OK": "OK",
    "ERROR": "ERROR",
}


class _BadLine(ValueError):
    """Raised inside the reader; becomes a TraceFileError naming the line."""


def _get(obj: Mapping[str, Any], camel: str, snake: str, default: Any = None) -> Any:
    if camel in obj:
        return obj[camel]
    return obj.get(snake, default)


def _read_id(value: Any, size: int, what: str, *, optional: bool = False) -> str | None:
    """Accept a lowercase/uppercase hex id or a base64 one; all-zero or empty means absent."""
    if value in (None, "") and optional:
        return None
    if not isinstance(value, str):
        raise _BadLine(f"{what} must be a string, got {shown(value)}")
    if len(value) > size * 4:  # longer than any hex or base64 spelling: not an id
        raise _BadLine(f"{what} {shown(value)} is not a {size}-byte hex or base64 id")
    if len(value) == size * 2:
        try:
            raw = bytes.fromhex(value)
        except ValueError:
            raw = b""
    else:
        raw = b""
    if not raw:
        try:
            raw = base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            raw = b""
    if len(raw) != size:
        raise _BadLine(f"{what} {shown(value)} is not a {size}-byte hex or base64 id")
    if optional and not any(raw):
        return None
    return raw.hex()


def _read_int(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise _BadLine(f"{what} must be an integer or a decimal string, got {shown(value)}")
    try:
        return int(value)
    except ValueError as exc:  # not decimal, or past Python's 4,300-digit limit
        raise _BadLine(f"{what} {shown(value)} is not an integer") from exc


def _read_time(value: Any, what: str) -> int:
    """Nanoseconds since 1970 as OTLP holds them: an unsigned 64-bit integer."""
    nanos = _read_int(value, what)
    problem = time_problem(nanos, what, value)
    if problem is not None:
        raise _BadLine(problem)
    return nanos


def _read_double(value: Any) -> float:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)  # protobuf JSON spells non-finite doubles "NaN", "Infinity"
        except ValueError:
            pass
    raise _BadLine(f"doubleValue {shown(value)} is not a number")


_ANY_KINDS = (
    ("stringValue", "string_value"),
    ("boolValue", "bool_value"),
    ("intValue", "int_value"),
    ("doubleValue", "double_value"),
    ("arrayValue", "array_value"),
    ("kvlistValue", "kvlist_value"),
    ("bytesValue", "bytes_value"),
)


def _read_any(value: Any) -> Any:
    """Decode an OTLP AnyValue: kvlistValue becomes a dict, arrayValue a tuple.

    The kind is the first field present *with a value*: some exporters (Phoenix's
    span export, protobuf-to-dict converters) write every field of the oneof,
    the unused ones as null. Iterative, so any nesting depth reads.
    """
    root: list[Any] = [None]
    # (AnyValue, where its result goes: a list and a position, or a dict and a key)
    pending: list[tuple[Any, Any, Any]] = [(value, root, 0)]
    # Arrays are filled as lists and turned into tuples once complete, innermost first.
    arrays: list[tuple[Any, Any, list[Any]]] = []
    while pending:
        item, holder, slot = pending.pop()
        kind, found = _any_kind(item)
        if kind == "arrayValue":
            items = found.get("values") or ()
            values: list[Any] = [None] * len(items)
            arrays.append((holder, slot, values))
            pending.extend((v, values, i) for i, v in enumerate(items))
        elif kind == "kvlistValue":
            members = dict(_attribute_items(found, "values"))  # a repeated key: the last wins
            mapping: dict[str, Any] = dict.fromkeys(members)
            holder[slot] = mapping
            pending.extend((member, mapping, key) for key, member in members.items())
        else:
            holder[slot] = found
    for holder, slot, values in reversed(arrays):
        holder[slot] = tuple(values)
    return root[0]


def _any_kind(value: Any) -> tuple[str | None, Any]:
    """The AnyValue's kind and its decoded scalar (containers: the raw array/kvlist object)."""
    if not isinstance(value, Mapping):
        raise _BadLine(f"attribute value {shown(value)} is not an AnyValue object")
    for camel, snake in _ANY_KINDS:
        found = value.get(camel)
        if found is None:
            found = value.get(snake)
        if found is None:
            continue
        if camel in ("stringValue", "bytesValue"):
            return camel, str(found)
        if camel == "boolValue":
            if not isinstance(found, bool):
                raise _BadLine(f"boolValue {shown(found)} is not a boolean")
            return camel, found
        if camel == "intValue":
            return camel, _read_int(found, "intValue")
        if camel == "doubleValue":
            return camel, _read_double(found)
        if not isinstance(found, Mapping):
            raise _BadLine(f"{camel} {shown(found)} is not an object")
        return camel, found
    return None, None  # an empty AnyValue is OTLP's null


def _attribute_items(owner: Mapping[str, Any], key: str = "attributes") -> list[tuple[str, Any]]:
    items = []
    for item in owner.get(key) or ():
        if not isinstance(item, Mapping) or not isinstance(item.get("key"), str):
            raise _BadLine(f"attribute {shown(item)} has no string 'key'")
        items.append((item["key"], item.get("value", {})))
    return items


def _read_attributes(owner: Mapping[str, Any], key: str = "attributes") -> dict[str, Any]:
    return {name: _read_any(value) for name, value in _attribute_items(owner, key)}


def _read_status(span: Mapping[str, Any]) -> tuple[str, str | None]:
    status = span.get("status") or {}
    code = status.get("code", 0)
    if isinstance(code, str) and code in _STATUS_ALIASES:
        name = _STATUS_ALIASES[code]
    elif isinstance(code, int) and code in _STATUS_NAMES:
        name = _STATUS_NAMES[code]
    else:
        raise _BadLine(f"status code {shown(code)} is not 0, 1, 2 or a STATUS_CODE_* name")
    return name, status.get("message") or None


def _read_span(span: Any, scope: str = "") -> SpanRecord:
    """One OTLP span; ``scope`` (another instrumentation's tracer name) joins its
    attributes as ``otel.scope.name``, as the processor does."""
    if not isinstance(span, Mapping):
        raise _BadLine("a span is not an object")
    name = span.get("name")
    if not isinstance(name, str):
        raise _BadLine("a span has no string 'name'")
    end = _get(span, "endTimeUnixNano", "end_time_unix_nano")
    end_ns = _read_time(end, "endTimeUnixNano") if end not in (None, "", 0, "0") else None
    status, message = _read_status(span)
    events = tuple(
        EventRecord(
            name=str(event.get("name", "")),
            time_ns=_read_time(_get(event, "timeUnixNano", "time_unix_nano", 0), "timeUnixNano"),
            attributes=_read_attributes(event),
        )
        for event in span.get("events") or ()
    )
    attributes = _read_attributes(span)
    if scope and scope != _OWN_SCOPE:
        attributes[attr.OTEL_SCOPE_NAME] = scope
    return SpanRecord(
        trace_id=str(_read_id(_get(span, "traceId", "trace_id"), 16, "traceId")),
        span_id=str(_read_id(_get(span, "spanId", "span_id"), 8, "spanId")),
        parent_id=_read_id(
            _get(span, "parentSpanId", "parent_span_id"), 8, "parentSpanId", optional=True
        ),
        name=name,
        start_ns=_read_time(
            _get(span, "startTimeUnixNano", "start_time_unix_nano", 0), "startTimeUnixNano"
        ),
        end_ns=end_ns,
        status=status,
        status_message=message,
        attributes=attributes,
        events=events,
    )


def _iter_spans(document: Any) -> Iterator[SpanRecord]:
    if not isinstance(document, Mapping):
        raise _BadLine("not a JSON object")
    resource_spans = _get(document, "resourceSpans", "resource_spans")
    if not isinstance(resource_spans, list):
        raise _BadLine("no 'resourceSpans' list")
    for resource in resource_spans:
        scopes = _get(resource, "scopeSpans", "scope_spans")
        if scopes is None:  # the pre-1.0 name some old exporters still write
            scopes = _get(resource, "instrumentationLibrarySpans", "instrumentation_library_spans")
        for scope in scopes or ():
            info = _get(scope, "scope", "scope") or scope.get("instrumentationLibrary") or {}
            name = info.get("name") if isinstance(info, Mapping) else None
            for span in scope.get("spans") or ():
                yield _read_span(span, name if isinstance(name, str) else "")


def read_otlp_json(source: str | os.PathLike[str] | Iterable[str]) -> list[SpanRecord]:
    """Read OTLP/JSON lines (a path, or an iterable of lines) into `SpanRecord`s.

    Blank lines are skipped; spans keep file order. Accepts camelCase or
    snake_case keys, hex or base64 ids, string or integer nanoseconds, and every
    AnyValue kind (``kvlistValue`` → dict, ``arrayValue`` → tuple).

    Raises:
        TraceFileError: the file cannot be read, or a line is not valid OTLP/JSON
            (the message names the line number).
    """
    label = "OTLP JSON"
    if isinstance(source, (str, os.PathLike)):
        label = os.fspath(source)
        try:
            lines: Iterable[str] = read_text(source).splitlines()  # a regular file only
        except OSError as exc:
            raise TraceFileError(f"{label}: cannot read: {exc.strerror or exc}") from exc
        except UnicodeDecodeError as exc:
            raise TraceFileError(f"{label}: cannot read: not UTF-8 text ({exc.reason})") from exc
    else:
        lines = source
    records: list[SpanRecord] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            records.extend(_iter_spans(jsontext.loads(line)))
        except json.JSONDecodeError as exc:
            raise TraceFileError(f"{label}: line {number}: not JSON ({exc.msg})") from exc
        except (_BadLine, AttributeError, TypeError) as exc:
            raise TraceFileError(f"{label}: line {number}: not OTLP JSON: {exc}") from exc
    return records


def read_otlp_documents(documents: Iterable[Any]) -> list[SpanRecord]:
    """Read parsed OTLP/JSON documents (``{"resourceSpans": ...}`` objects) into records.

    Raises:
        TraceFileError: a document is not OTLP JSON (the message names which one).
    """
    return _each(documents, _iter_spans, "document {}: not OTLP JSON")


def read_otlp_spans(spans: Iterable[Any]) -> list[SpanRecord]:
    """Read bare OTLP/JSON span objects (no resource or scope around them), e.g. Phoenix's export.

    Raises:
        TraceFileError: a span is malformed (the message names which one).
    """
    return _each(spans, lambda span: (_read_span(span),), "span {}: not an OTLP span")


def _each(
    items: Iterable[Any], read: Callable[[Any], Iterable[SpanRecord]], what: str
) -> list[SpanRecord]:
    """The records ``read`` gives for each item, in order; a malformed item is a
    `TraceFileError` saying ``what`` (formatted with its number) and why."""
    records: list[SpanRecord] = []
    for number, item in enumerate(items, start=1):
        try:
            records.extend(read(item))
        except (_BadLine, AttributeError, TypeError) as exc:
            raise TraceFileError(f"{what.format(number)}: {exc}") from exc
    return records


def recognises(parsed: Parsed) -> bool:
    """``{"resourceSpans": ...}`` documents (either spelling)."""
    first = parsed.first
    return isinstance(first, Mapping) and ("resourceSpans" in first or "resource_spans" in first)


def read(parsed: Parsed) -> TraceResult:
    """The trace of a file `recognises` accepted: one object per line, several
    pretty-printed objects, or a single one."""
    return build_result(read_otlp_documents(parsed.documents or [parsed.first]))


def recognises_spans(parsed: Parsed) -> bool:
    """A Phoenix OTLP span export: ``{"data": [...]}`` of bare OTLP spans."""
    spans = span_list(parsed.first) if parsed.whole else None
    return bool(spans) and isinstance(parsed.first, Mapping) and _looks_otlp_span(spans[0])  # type: ignore[index]


def _looks_otlp_span(span: Mapping[str, Any]) -> bool:
    return ("span_id" in span or "spanId" in span) and (
        "start_time_unix_nano" in span or "startTimeUnixNano" in span
    )


def read_spans(parsed: Parsed) -> TraceResult:
    """The trace of a file `recognises_spans` accepted."""
    return build_result(read_otlp_spans(span_list(parsed.first) or ()))
