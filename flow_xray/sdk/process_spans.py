"""A child process's span message, and the SDK span the parent exports from it.

The child sends ``(capture tags, wire)`` where *wire* is the plain tuple of
`flow_xray.sdk.rows.to_wire` (which also turns it into the `SpanRecord` the
tree reads, `wire_record`): ids as ints, the name, clocks, status,
attributes, events, span kind and instrumentation scope. Here: making any
message marshal-able (`plain`), reading a received one (`message_parts`), and
the `ReadableSpan` for the parent's exporters (`to_readable`), with the
child's ``process.pid``. Messages come from another process: anything
malformed is skipped, never raised.
"""

from __future__ import annotations

import marshal
from typing import Any

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode, TraceFlags

from flow_xray import attributes as attr
from flow_xray.sdk.rows import Wire

_SAMPLED = TraceFlags(TraceFlags.SAMPLED)


def plain(value: Any) -> Any:
    """``value`` with anything marshal cannot write replaced by its text."""
    if isinstance(value, tuple):
        return tuple(plain(v) for v in value)
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    try:
        marshal.dumps(value, 4)
    except ValueError:
        return _text(value)
    return value


def _text(value: object) -> str:
    try:
        return str(value)
    except Exception:
        return f"<unprintable {type(value).__name__}>"


def message_parts(message: Any) -> tuple[tuple[str, ...], Wire] | None:
    """(capture tags, wire) of a decoded span frame; None for anything else."""
    if not (isinstance(message, tuple) and len(message) == 2 and isinstance(message[1], tuple)):
        return None
    tags = message[0]
    if not tags or not isinstance(tags, tuple):
        return (), message[1]
    return tuple(t for t in tags if isinstance(t, str)), message[1]


def pid_resource(resource: Resource, pid: int) -> Resource:
    """``resource`` (the parent's) with the child's ``process.pid``."""
    return resource.merge(Resource({attr.PROCESS_PID: pid}))


def to_readable(pid: int, wire: Wire, resource: Resource) -> ReadableSpan:
    """The finished span as the SDK's exporters take it.

    Raises:
        TypeError, ValueError, KeyError: the wire tuple is not what a child sends.
    """
    (trace_id, span_id, parent_id, name, start, end, status, message, attrs, events, kind) = wire[
        :11
    ]
    scope_name, scope_version = wire[11:13]
    code = StatusCode[status] if status in StatusCode.__members__ else StatusCode.UNSET
    return ReadableSpan(
        name=name,
        context=SpanContext(trace_id, span_id, is_remote=False, trace_flags=_SAMPLED),
        parent=SpanContext(trace_id, parent_id, is_remote=False, trace_flags=_SAMPLED)
        if parent_id
        else None,
        resource=resource,
        attributes={**attrs, attr.PROCESS_PID: pid},
        events=[Event(n, a, timestamp=t) for n, t, a in events],
        kind=SpanKind[kind] if kind in SpanKind.__members__ else SpanKind.INTERNAL,
        instrumentation_scope=InstrumentationScope(scope_name, scope_version),
        status=Status(code, message if code is StatusCode.ERROR else None),
        start_time=start,
        end_time=end,
    )
