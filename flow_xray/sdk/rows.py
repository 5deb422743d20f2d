"""THE conversion of an SDK span to plain data: a store row, a `SpanRecord`, a child's wire tuple.

`to_row` reads an SDK span once into the parts `SpanStore.add` takes (ids as
ints, parent 0 for none, attribute keys and values as two tuples, events as
`EventRecord`s); everything else is made from a row:

- `row_record` / `to_record`: the `SpanRecord` (``ended=False``: a snapshot
  of a span still open, as a capture keeps the spans open when it closes);
- `to_wire`: the plain tuple a child process sends its parent (see
  `flow_xray.sdk.processes`), and `wire_record`, the record the parent reads
  from it.

Another instrumentation's span keeps its tracer name as the
``otel.scope.name`` attribute (the accounting tells two instrumentors
reporting one request apart by it), and its ints beyond 64 bits become text
(`bounded_ints`), wherever the span ran.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import StatusCode

from flow_xray import attributes as attr
from flow_xray.interrupts import let_signals_through
from flow_xray.runtime.tracer import TRACER_NAME
from flow_xray.sdk.local_span import LocalSpan
from flow_xray.sdk.span_text import bounded_ints
from flow_xray.tree.spans import EventRecord, Row, SpanRecord

logger = logging.getLogger("flow_xray")

# A child's span on the wire: (trace id, span id, parent id or 0, name, start, end or None,
# status, status message, attributes, events as (name, time, attributes), span kind name,
# instrumentation scope name, scope version).
Wire = tuple[Any, ...]


def to_row(span: ReadableSpan | LocalSpan) -> Row:
    """An ended SDK span as `SpanStore.add`'s arguments.

    Read from the span's instance fields: about five times faster than its
    properties, which copy the events and wrap the attributes on every read.
    A span laid out otherwise is read through its public properties; a
    `LocalSpan` (the local recorder's) from its own fields.
    """
    if type(span) is LocalSpan:  # the local recorder's: its own fields
        parent = span._parent
        # (its parent's context read as the tuple it is: see `flow_xray.sdk.local._api_layout`)
        trace_id, span_id, parent_id = span._trace_id, span._span_id, parent[1] if parent else 0
        name: Any = span._name
        start: int | None = span._start_time
        end: int | None = span._end_time
        status = span._status
        stored = span._attributes
        items: Mapping[str, Any] = stored if type(stored) is dict else stored._dict  # type: ignore[union-attr]
        events: Any = span._events
        scope_name: str | None = span._tracer.scope_name
    else:
        try:
            fields = span.__dict__
            items = fields["_attributes"]._dict
            if type(items) is not dict:
                raise TypeError("attributes are not a plain dict")
            ctx = fields["_context"]
            parent = fields["_parent"]
            name = fields["_name"]
            start = fields["_start_time"]
            end = fields["_end_time"]
            status = fields["_status"]
            events = fields["_events"]
            scope = fields["_instrumentation_scope"]
        except Exception:  # not laid out as the SDK's ReadableSpan (KeyError, AttributeError...)
            let_signals_through()
            ctx, parent, name, start, end, status = (
                span.context,
                span.parent,
                span.name,
                span.start_time,
                span.end_time,
                span.status,
            )
            items, events, scope = span.attributes or {}, span.events, span.instrumentation_scope
        trace_id, span_id = (ctx.trace_id, ctx.span_id) if ctx else (0, 0)
        parent_id = parent.span_id if parent is not None else 0
        scope_name = scope.name if scope is not None else None
    keys, values = tuple(items), tuple(items.values())
    if scope_name and scope_name != TRACER_NAME:  # another instrumentation's span: keep its scope
        keys, values = (*keys, attr.OTEL_SCOPE_NAME), (*bounded_ints(values), scope_name)
    code = status.status_code
    return (
        trace_id,
        span_id,
        parent_id,
        name,
        start or 0,
        end or 0,
        "UNSET" if code is StatusCode.UNSET else "ERROR" if code is StatusCode.ERROR else "OK",
        status.description,
        keys,
        values,
        _events(events) if events else (),
    )


def _foreign(span: ReadableSpan) -> bool:
    """Whether another instrumentation started the span (`to_row` then adds its scope last)."""
    scope = span.instrumentation_scope
    name = scope.name if scope is not None else None
    return bool(name) and name != TRACER_NAME


def _events(events: Any) -> tuple[EventRecord, ...]:
    """Span events as records, ints beyond 64 bits as text (any tracer's events may hold some)."""
    out = []
    for event in events:
        attributes = event.attributes or {}
        values = tuple(attributes.values())
        bounded = bounded_ints(values)
        if bounded is not values:
            attributes = dict(zip(attributes, bounded, strict=True))
        out.append(EventRecord(event.name, event.timestamp, dict(attributes)))
    return tuple(out)


def row_record(
    row: Row, *, ended: bool = True, extra: Mapping[str, Any] | None = None
) -> SpanRecord:
    """The `SpanRecord` of a row (``ended=False``: no end time); ``extra`` attributes added."""
    trace_id, span_id, parent_id, name, start, end, status, message, keys, values, events = row
    attributes = dict(zip(keys, values, strict=True))
    if extra:
        attributes.update(extra)
    return SpanRecord(
        trace_id=format(trace_id, "032x"),
        span_id=format(span_id, "016x"),
        parent_id=format(parent_id, "016x") if parent_id else None,
        name=name,
        start_ns=start,
        end_ns=end if ended else None,
        status=status,
        status_message=message,
        attributes=attributes,
        events=events,
    )


def to_record(span: ReadableSpan, *, ended: bool = True) -> SpanRecord:
    """An SDK span as plain data (``ended=False`` for a snapshot of an open span)."""
    return row_record(to_row(span), ended=ended)


def to_wire(span: ReadableSpan, *, ended: bool) -> Wire:
    """The span as a child sends it (``ended=False``: as it is now, for the start frame).

    The scope travels apart from the attributes (as ``otel.scope.name`` it would
    reach the parent's exporters as an attribute).
    """
    trace_id, span_id, parent_id, name, start, end, status, message, keys, values, events = to_row(
        span
    )
    if _foreign(span):
        keys, values = keys[:-1], values[:-1]
    scope = span.instrumentation_scope
    return (
        trace_id,
        span_id,
        parent_id,
        name,
        start,
        end if ended else None,
        status if ended else "UNSET",
        message if ended else None,
        dict(zip(keys, values, strict=True)),
        tuple((e.name, e.time_ns, dict(e.attributes)) for e in events) if ended else (),
        span.kind.name,
        scope.name if scope else "",
        scope.version if scope else None,
    )


def wire_record(pid: int, wire: Wire) -> SpanRecord | None:
    """A child's span as the tree reads it, with ``process.pid``; unfinished ones incomplete.

    Another instrumentation's span keeps its tracer name as ``otel.scope.name``,
    as `to_row` records it for this process's spans. The wire comes from
    another process: anything malformed gives None, never raises.
    """
    try:
        trace_id, span_id, parent_id, name, start, end, status, message, attrs, events = wire[:10]
        scope = wire[11] if len(wire) > 11 else None
        attributes = dict(attrs)
        extra: dict[str, Any] = {attr.PROCESS_PID: pid}
        if end is None:
            extra[attr.INCOMPLETE] = True
        if isinstance(scope, str) and scope and scope != TRACER_NAME:
            extra[attr.OTEL_SCOPE_NAME] = scope
        row = (
            trace_id,
            span_id,
            parent_id,
            str(name),
            int(start),
            None if end is None else int(end),
            str(status),
            message if isinstance(message, str) else None,
            tuple(attributes),
            tuple(attributes.values()),
            tuple(EventRecord(str(n), int(t), dict(a)) for n, t, a in events),
        )
        return row_record(row, ended=end is not None, extra=extra)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        logger.debug("flow-xray: a child span could not be read", exc_info=True)
        return None
