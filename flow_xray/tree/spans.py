"""Plain span data: the one shape every span source is reduced to.

The span processor turns SDK spans into `SpanRecord`s; the OTLP JSON importer
turns file lines into them; `flow_xray.tree` builds `TraceNode` trees from them.
Nothing here imports OpenTelemetry.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

# str, bool, int, float or a sequence of them, as OpenTelemetry allows; typed
# loosely because readers (OTLP JSON) may also produce nested mappings.
AttributeValue = Any


@dataclass(frozen=True, slots=True)
class EventRecord:
    """A span event: name, wall-clock time (ns since the epoch) and attributes."""

    name: str
    time_ns: int
    attributes: Mapping[str, AttributeValue] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class SpanRecord:
    """One span as plain data.

    Ids are lowercase hex (32 digits for traces, 16 for spans). ``end_ns`` is
    None for a span that never ended (a crash, an interrupt, a capture that
    closed first). ``status`` is ``"UNSET"``, ``"OK"`` or ``"ERROR"``.
    """

    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    start_ns: int
    end_ns: int | None
    status: str = "UNSET"
    status_message: str | None = None
    attributes: Mapping[str, AttributeValue] = field(default_factory=dict)
    events: tuple[EventRecord, ...] = ()
