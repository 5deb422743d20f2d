"""A child process's span on the wire, and back: to a `SpanRecord`, or an SDK span for export.

The child sends ``(capture tags, wire)`` where *wire* is a plain tuple (see
`to_wire`): ids as ints, the name, clocks, status, attributes, events, span
kind and instrumentation scope. The parent turns it into a `SpanRecord` for
the tree, with ``process.pid``, and into a `ReadableSpan` for its exporters.
Messages come from another process: anything malformed is skipped, never raised.
"""

from __future__ import annotations

import logging
import marshal
from typing import Any

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode, TraceFlags

from flow_xray import attributes as attr
from flow_xray.tracing.state import TRACER_NAME
from flow_xray.tree.spans import EventRecord, SpanRecord

logger = logging.getLogger("flow_xray")

Wire = tuple[Any, ...]
_SAMPLED = TraceFlags(TraceFlags.SAMPLED)


def to_wire(span: ReadableSpan, *, ended: bool) -> Wire:
    """The span as plain data (``ended=False``: as it is now, for the start frame)."""
    ctx = span.context
    parent = span.parent
    scope = span.instrumentation_scope
    status = span.status
    return (
        ctx.trace_id if ctx else 0,
        ctx.span_id if ctx else 0,
        parent.span_id if parent else 0,
        span.name,
        span.start_time or 0,
        span.end_time if ended else None,
        status.status_code.name if ended else "UNSET",
        status.description if ended else None,
        dict(span.attributes or {}),
        tuple((e.name, e.timestamp, dict(e.attributes or {})) for e in span.events)
        if ended
        else (),
        span.kind.name,
        scope.name if scope else "",
        scope.version if scope else None,
    )


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


def to_record(pid: int, wire: Wire) -> SpanRecord | None:
    """The span as the tree reads it, with ``process.pid``; unfinished ones marked incomplete.

    Another instrumentation's span keeps its tracer name as ``otel.scope.name``,
    as the processor records it for this process's spans.
    """
    try:
        trace_id, span_id, parent_id, name, start, end, status, message, attrs, events = wire[:10]
        scope = wire[11] if len(wire) > 11 else None
        attributes = dict(attrs)
        attributes[attr.PROCESS_PID] = pid
        if end is None:
            attributes[attr.INCOMPLETE] = True
        if isinstance(scope, str) and scope and scope != TRACER_NAME:
            attributes[attr.OTEL_SCOPE_NAME] = scope
        return SpanRecord(
            trace_id=format(trace_id, "032x"),
            span_id=format(span_id, "016x"),
            parent_id=format(parent_id, "016x") if parent_id else None,
            name=str(name),
            start_ns=int(start),
            end_ns=None if end is None else int(end),
            status=str(status),
            status_message=message if isinstance(message, str) else None,
            attributes=attributes,
            events=tuple(EventRecord(str(n), int(t), dict(a)) for n, t, a in events),
        )
    except (TypeError, ValueError):
        logger.debug("flow-xray: a child span could not be read", exc_info=True)
        return None


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
