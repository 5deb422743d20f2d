"""The one loader for saved traces: every format `flow-xray view` and `TraceResult.load` read.

A file is read once, parsed as JSON (a whole document, or one document per
line), and handed to the first format in `FORMATS` that recognises it. Adding
a format means adding one `TraceFormat` entry. No OpenTelemetry here: reading
a trace never loads the SDK or protobuf.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flow_xray.errors import TraceFileError
from flow_xray.tree.build import build_result
from flow_xray.tree.jaeger_json import is_jaeger_json, read_jaeger_json
from flow_xray.tree.model import TraceResult
from flow_xray.tree.otlp_json import read_otlp_json


@dataclass(frozen=True)
class Parsed:
    """A trace file read once: its first JSON document, whether it is the whole file, the lines."""

    first: Any
    whole: bool
    lines: Sequence[str]


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
    # One (possibly pretty-printed) object, or one object per line.
    lines = [json.dumps(parsed.first)] if parsed.whole else parsed.lines
    return build_result(read_otlp_json(lines))


def _is_jaeger(parsed: Parsed) -> bool:
    return parsed.whole and is_jaeger_json(parsed.first)


def _read_jaeger(parsed: Parsed) -> TraceResult:
    return build_result(read_jaeger_json(parsed.first))


FORMATS: tuple[TraceFormat, ...] = (
    TraceFormat("flow-xray JSON", "an object with 'nodes'", _is_flow_xray, _read_flow_xray),
    TraceFormat("OTLP JSON", "'resourceSpans' objects, one per line", _is_otlp, _read_otlp),
    TraceFormat("Jaeger JSON", "the query API's {'data': [traces]}", _is_jaeger, _read_jaeger),
)


def load_trace(path: str | os.PathLike[str]) -> TraceResult:
    """Read a saved trace in any format flow-xray knows, telling formats apart by content.

    Formats: flow-xray JSON (``TraceResult.save``, ``flow-xray run --json``);
    OTLP JSON, one object per line as the Collector's ``file`` exporter writes
    (``flow-xray run --otlp-json``) or a single object; and Jaeger JSON, what
    Jaeger's UI and query API return for a trace (``GET /api/traces/ID``).

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
    try:
        parsed = Parsed(json.loads(text), True, lines)
    except ValueError:
        # Several lines of JSON: the first line tells the format.
        first = next(line for line in lines if line.strip())
        try:
            parsed = Parsed(json.loads(first), False, lines)
        except ValueError as exc:
            raise TraceFileError(f"{label} is not a trace: not JSON ({exc})") from None
    for fmt in FORMATS:
        if fmt.recognises(parsed):
            try:
                return fmt.read(parsed)
            except TraceFileError as exc:
                raise TraceFileError(f"{label}: {exc}") from None
    names = " or ".join(f"{fmt.name} ({fmt.hint})" for fmt in FORMATS)
    raise TraceFileError(f"{label} is not a trace: not {names}")
