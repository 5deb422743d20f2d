"""The one loader for saved traces: every format `flow-xray view` and `TraceResult.load` read.

A file is read once, parsed as JSON (a whole document, or one document per
line), and handed to the first format in `FORMATS` that recognises it. Adding
a format means adding one `TraceFormat` entry. No OpenTelemetry here: reading
a trace never loads the SDK or protobuf.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flow_xray import jsontext
from flow_xray.errors import TraceFileError
from flow_xray.tree.build import build_result
from flow_xray.tree.jaeger_json import is_jaeger_json, read_jaeger_json
from flow_xray.tree.model import TraceResult
from flow_xray.tree.otlp_json import read_otlp_documents, read_otlp_spans
from flow_xray.tree.span_json import is_span_json, read_span_json, span_list, unsupported_format


@dataclass(frozen=True)
class Parsed:
    """A trace file read once: its first JSON document, whether it is the whole file, the lines.

    ``documents`` holds every top-level JSON value of the file in order: one per
    line (JSON lines), pretty-printed objects one after another (``jq .``
    output, ``ConsoleSpanExporter``), or the single document.
    """

    first: Any
    whole: bool
    lines: Sequence[str]
    documents: Sequence[Any] = ()


@dataclass(frozen=True)
class TraceFormat:
    """One file format: a name and a hint for messages, a test on the parsed file, a reader."""

    name: str
    hint: str
    recognises: Callable[[Parsed], bool]
    read: Callable[[Parsed], TraceResult]


def _is_flow_xray(parsed: Parsed) -> bool:
    return parsed.whole and isinstance(parsed.first, Mapping) and "nodes" in parsed.first


def _is_otlp(parsed: Parsed) -> bool:
    first = parsed.first
    return isinstance(first, Mapping) and ("resourceSpans" in first or "resource_spans" in first)


def _read_flow_xray(parsed: Parsed) -> TraceResult:
    return TraceResult.from_dict(parsed.first)


def _read_otlp(parsed: Parsed) -> TraceResult:
    # One object per line, several pretty-printed objects, or a single one.
    return build_result(read_otlp_documents(parsed.documents or [parsed.first]))


def _is_phoenix_otlp(parsed: Parsed) -> bool:
    spans = span_list(parsed.first) if parsed.whole else None
    return bool(spans) and isinstance(parsed.first, Mapping) and _looks_otlp_span(spans[0])  # type: ignore[index]


def _looks_otlp_span(span: Mapping[str, Any]) -> bool:
    return ("span_id" in span or "spanId" in span) and (
        "start_time_unix_nano" in span or "startTimeUnixNano" in span
    )


def _read_phoenix_otlp(parsed: Parsed) -> TraceResult:
    return build_result(read_otlp_spans(span_list(parsed.first) or ()))


def _is_span_objects(parsed: Parsed) -> bool:
    first = parsed.first
    spans = span_list(first) if isinstance(first, Mapping) else None
    return is_span_json(spans[0] if spans else first)


def _read_span_objects(parsed: Parsed) -> TraceResult:
    first = parsed.first
    spans = span_list(first) if parsed.whole and isinstance(first, Mapping) else None
    return build_result(read_span_json(spans or parsed.documents))


def _is_jaeger(parsed: Parsed) -> bool:
    return parsed.whole and is_jaeger_json(parsed.first)


def _read_jaeger(parsed: Parsed) -> TraceResult:
    return build_result(read_jaeger_json(parsed.first))


FORMATS: tuple[TraceFormat, ...] = (
    TraceFormat("flow-xray JSON", "an object with 'nodes'", _is_flow_xray, _read_flow_xray),
    TraceFormat("OTLP JSON", "'resourceSpans' objects, one per line", _is_otlp, _read_otlp),
    TraceFormat("Jaeger JSON", "the query API's {'data': [traces]}", _is_jaeger, _read_jaeger),
    TraceFormat(
        "Phoenix OTLP span export",
        "GET /v1/projects/<p>/spans/otlpv1",
        _is_phoenix_otlp,
        _read_phoenix_otlp,
    ),
    TraceFormat(
        "span objects",
        "the SDK's ConsoleSpanExporter output, or Phoenix's GET /v1/projects/<p>/spans",
        _is_span_objects,
        _read_span_objects,
    ),
)


def load_trace(path: str | os.PathLike[str]) -> TraceResult:
    """Read a saved trace in any format flow-xray knows, telling formats apart by content.

    Formats: flow-xray JSON (``TraceResult.save``, ``flow-xray run --json``);
    OTLP JSON, one object per line as the Collector's ``file`` exporter writes
    (``flow-xray run --otlp-json``), a single object or several one after another
    (``jq .`` output), with camelCase or snake_case keys; Jaeger JSON, what
    Jaeger's UI and query API return for a trace (``GET /api/traces/ID``);
    Phoenix's span exports (``/v1/projects/<p>/spans`` and ``/spans/otlpv1``);
    and the SDK's ``ConsoleSpanExporter`` output. Zipkin v2 and Chrome
    trace-event files get an error naming their format.

    Raises:
        TraceFileError: the file cannot be read or is in no known format.
    """
    label = os.fspath(path)
    try:
        text = Path(path).read_text(encoding="utf-8-sig")  # tolerate a BOM
    except (OSError, UnicodeDecodeError) as exc:
        raise TraceFileError(f"cannot read {label}: {exc}") from None
    if not text.strip():
        raise TraceFileError(f"{label} is empty, not a trace")
    lines = text.splitlines()
    documents = _documents(text, label)
    parsed = Parsed(documents[0], len(documents) == 1, lines, documents)
    for fmt in FORMATS:
        if fmt.recognises(parsed):
            try:
                return fmt.read(parsed)
            except TraceFileError as exc:
                raise TraceFileError(f"{label}: {exc}") from None
    known = unsupported_format(documents)
    if known is not None:
        raise TraceFileError(f"{label} is {known}")
    names = " or ".join(f"{fmt.name} ({fmt.hint})" for fmt in FORMATS)
    raise TraceFileError(f"{label} is not a trace: not {names}")


def _documents(text: str, label: str) -> list[Any]:
    """Every top-level JSON value in ``text``, in order (JSON lines and concatenated objects)."""
    documents: list[Any] = []
    index, end = 0, len(text)
    while True:
        while index < end and text[index] in " \t\r\n":
            index += 1
        if index >= end:
            return documents
        try:
            document, index = jsontext.raw_decode(text, index)  # any nesting depth
        except ValueError as exc:
            line = text.count("\n", 0, index) + 1
            where = "" if not documents else f" (line {line}, after {len(documents)} documents)"
            raise TraceFileError(f"{label} is not a trace: not JSON{where} ({exc})") from None
        documents.append(document)
