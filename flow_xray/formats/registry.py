"""The one loader for saved traces: every format `flow-xray view` and `TraceResult.load` read.

A file is read once, parsed as JSON (a whole document, or one document per
line), and handed to the first format in `FORMATS` that recognises it. Each
format is a module of this package with a test and a reader of the `Parsed`
file; adding a format means adding its module and one `TraceFormat` entry.
A file no format recognises is one error naming every format read.
No OpenTelemetry here: reading a trace never loads the SDK or protobuf.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

from flow_xray import jsontext
from flow_xray.errors import TraceFileError
from flow_xray.files import read_bytes
from flow_xray.formats import (
    backend_api,
    chrome_trace,
    compact,
    compact_read,
    flow_xray_json,
    jaeger_json,
    otlp_json,
    span_json,
    zipkin_json,
)
from flow_xray.formats.parsed import Parsed, TraceFormat
from flow_xray.tree.model import TraceResult

FORMATS: tuple[TraceFormat, ...] = (
    TraceFormat(
        "flow-xray JSON", "an object with 'nodes'", flow_xray_json.recognises, flow_xray_json.read
    ),
    TraceFormat(
        "OTLP JSON", "'resourceSpans' objects, one per line", otlp_json.recognises, otlp_json.read
    ),
    TraceFormat(
        "Jaeger JSON",
        "the query API's {'data': [traces]}",
        jaeger_json.recognises,
        jaeger_json.read,
    ),
    TraceFormat(
        "Phoenix OTLP span export",
        "GET /v1/projects/<p>/spans/otlpv1",
        otlp_json.recognises_spans,
        otlp_json.read_spans,
    ),
    TraceFormat(
        "span objects",
        "the SDK's ConsoleSpanExporter output, or Phoenix's GET /v1/projects/<p>/spans",
        span_json.recognises,
        span_json.read,
    ),
    TraceFormat(
        "Tempo / Jaeger v3 API answer",
        "Tempo's GET /api/traces/<id> or /api/v2/traces/<id>, Jaeger's /api/v3/traces/<id>",
        backend_api.recognises,
        backend_api.read,
    ),
    TraceFormat(
        "Zipkin v2 JSON", "a JSON array of Zipkin spans", zipkin_json.recognises, zipkin_json.read
    ),
    TraceFormat(
        "Chrome trace events",
        "viztracer, chrome://tracing: {'traceEvents': [...]} or a bare array of events",
        chrome_trace.recognises,
        chrome_trace.read,
    ),
)


def load_trace(path: str | os.PathLike[str]) -> TraceResult:
    """Read a saved trace in any format flow-xray knows, telling formats apart by content.

    Formats: flow-xray JSON (``TraceResult.save``, ``flow-xray run --json``); the compact
    flow-xray file (``TraceResult.save("t.fxr")``, told by its first bytes, whatever its name);
    OTLP JSON, one object per line as the Collector's ``file`` exporter writes
    (``flow-xray run --otlp-json``), a single object or several one after another
    (``jq .`` output), with camelCase or snake_case keys; Jaeger JSON, what
    Jaeger's UI and query API return for a trace (``GET /api/traces/ID``);
    Phoenix's span exports (``/v1/projects/<p>/spans`` and ``/spans/otlpv1``);
    the SDK's ``ConsoleSpanExporter`` output; Tempo's ``/api/traces/<id>`` and
    ``/api/v2/traces/<id>`` and Jaeger's ``/api/v3/traces/<id>`` answers; Zipkin
    v2 JSON; and Chrome trace-event files (viztracer) as a call tree.

    Only a regular file is read, or standard input for ``-``: a FIFO, a device
    or a directory is refused at once (`flow_xray.files.read_text`), never waited on.

    Raises:
        TraceFileError: the file cannot be read, is not a regular file, or is in
            no known format (or holds times or ids out of range).
    """
    label = "standard input" if os.fspath(path) == "-" else os.fspath(path)
    try:
        data = read_bytes(path)
    except OSError as exc:
        raise TraceFileError(f"cannot read {label}: {exc.strerror or exc}") from None
    if compact_read.is_compact(data):
        try:
            return compact_read.read_compact(data)
        except TraceFileError as exc:
            raise TraceFileError(f"{label}: {exc}") from None
    try:
        text = data.decode("utf-8-sig")  # tolerates a BOM
    except UnicodeDecodeError as exc:
        raise TraceFileError(
            f"cannot read {label}: not UTF-8 text (byte {exc.start}: {exc.reason})"
        ) from None
    if not text.strip():
        raise TraceFileError(f"{label} is empty, not a trace")
    del data  # (the text from here on: a million-call file's bytes are ~600 MB)
    # Millions of new objects and no cycles: without the collector's passes over them
    # the parse and the build take about half the time.
    with jsontext.gc_paused():
        documents = Documents(text, label)
        del text
        parsed = Parsed(documents.first, documents.whole, documents)
        for fmt in FORMATS:
            if fmt.recognises(parsed):
                try:
                    result = fmt.read(parsed)
                except _NotJson:
                    raise
                except TraceFileError as exc:
                    raise TraceFileError(f"{label}: {exc}") from None
                # Freed before the collector runs again: it then looks at the trace only.
                del parsed, documents
                return result
    # Names only past the first, flow-xray's own: the line must stay short (each
    # format's hint is in its module).
    first, *others = FORMATS
    names = ", ".join([f"{first.name} ({first.hint})", *(f.name for f in others[:-1])])
    names += f" or {others[-1].name}"
    raise TraceFileError(f"{label} is not a trace: not {names}")


class _NotJson(TraceFileError):
    """A file's text stops being JSON (the message names the file)."""


class Documents:
    """Every top-level JSON value of a file's text, in order (JSON lines, objects one after
    another, or one document), each parsed as it is read.

    The first is parsed at once (``first``; ``whole``: it is all there is); the others
    each time the documents are iterated, and none is kept: a file of many documents
    (the Collector's JSON lines) never holds them all at once, so reading it costs
    its records, not every line's objects besides. A value that is not JSON is a
    `TraceFileError` saying where, when it is reached.
    """

    def __init__(self, text: str, label: str) -> None:
        self.label = label
        self.text: str | None = text
        self.first, self.after = self._parse(text, self._skip(text, 0), 0)
        self.whole = self._skip(text, self.after) >= len(text)
        if self.whole:
            self.text = None  # (nothing more to read: a one-document file lets go of its text)

    def __iter__(self) -> Iterator[Any]:
        yield self.first
        text, index, count = self.text, self.after, 1
        while text is not None:
            index = self._skip(text, index)
            if index >= len(text):
                return
            document, index = self._parse(text, index, count)
            count += 1
            yield document

    @staticmethod
    def _skip(text: str, index: int) -> int:
        while index < len(text) and text[index] in " \t\r\n":
            index += 1
        return index

    def _parse(self, text: str, index: int, count: int) -> tuple[Any, int]:
        try:
            return jsontext.raw_decode(text, index)  # any nesting depth
        except ValueError as exc:
            line = text.count("\n", 0, index) + 1
            where = "" if not count else f" (line {line}, after {count} documents)"
            raise _NotJson(f"{self.label} is not a trace: not JSON{where} ({exc})") from None


SAVE_FORMATS = ("json", "compact")


def save_trace(
    result: TraceResult, path: str | os.PathLike[str], format: str | None = None
) -> None:
    """Write ``result`` to ``path`` (`TraceResult.save`): ``format`` ``"json"`` (the JSON
    envelope, version 1) or ``"compact"`` (`flow_xray.formats.compact`); None picks compact
    for a name ending ``.fxr``, JSON for any other.

    Raises:
        ValueError: ``format`` is not one of `SAVE_FORMATS`.
    """
    if format is None:
        format = "compact" if os.fspath(path).lower().endswith(compact.SUFFIX) else "json"
    if format == "compact":
        compact.save_compact(result, path)
    elif format == "json":
        flow_xray_json.save(result, path)
    else:
        raise ValueError(f"format must be one of {', '.join(SAVE_FORMATS)}, not {format!r}")
