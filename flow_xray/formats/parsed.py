"""What every format module is handed: a trace file read once, and the shape of an entry.

A format module (`flow_xray.formats.otlp_json`, ...) offers a test on a
`Parsed` file and a reader of it; `flow_xray.formats.registry` lists them as
`TraceFormat` entries. No OpenTelemetry here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from flow_xray.tree.model import TraceResult


@dataclass(frozen=True)
class Parsed:
    """A trace file read once: its first JSON document, whether it is the whole file, and all.

    ``documents`` holds every top-level JSON value of the file in order: one per
    line (JSON lines), pretty-printed objects one after another (``jq .``
    output, ``ConsoleSpanExporter``), or the single document.
    """

    first: Any
    whole: bool
    documents: Sequence[Any] = ()


@dataclass(frozen=True)
class TraceFormat:
    """One file format: a name and a hint for messages, a test on the parsed file, a reader."""

    name: str
    hint: str
    recognises: Callable[[Parsed], bool]
    read: Callable[[Parsed], TraceResult]
