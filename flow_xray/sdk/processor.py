"""The span processor that collects spans into open captures.

It follows the SDK's SpanProcessor contract: hooks never block on I/O and
never raise, shared state sits behind one lock, and readers get immutable
snapshots. It only *collects*: each finished span becomes a compact row of
plain data in the capture's `SpanStore` (read back as `SpanRecord`s);
building the tree is `flow_xray.tree`'s job.

A span belongs to every capture active in the context that started it
(``trace.capture()``), plus every process-wide capture
(``trace.capture(all_threads=True)``); that registry is owned by
`flow_xray.tracing.state`. Spans of other instrumentations are collected the
same way as ours.

A collector can also stream instead of keeping: one with a `SpanSink` hands
each span to the sink as it starts and as it ends (a child process sends its
spans to the parent this way, see `flow_xray.sdk.processes`). After
``os.fork()`` the child forgets every span and capture it inherited.
"""

from __future__ import annotations

import logging
import os
import threading
import weakref
from dataclasses import replace
from typing import Any, Protocol

from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor, TracerProvider
from opentelemetry.trace import StatusCode

from flow_xray import attributes as attr
from flow_xray.llm.requests import REPORT_KEYS, report_from_attributes
from flow_xray.sdk.span_text import bounded_ints
from flow_xray.tracing import state
from flow_xray.tree.spans import EventRecord, SpanRecord, SpanStore

logger = logging.getLogger("flow_xray")


class SpanSink(Protocol):
    """Where a streaming collector sends its spans; both calls must be quick and never raise."""

    def started(self, span: ReadableSpan) -> None:
        """A span began (its attributes so far)."""

    def ended(self, span: ReadableSpan) -> None:
        """A span that `started` here ended."""


class Collector:
    """The spans of one capture: finished records and still-open spans.

    ``closed`` is set when the capture ends. A context copied while it was
    open (an asyncio task, a `propagate`d callable, a background thread) can
    outlive it; spans started there must not pile up in a collector nobody reads.
    ``max_spans`` bounds what ``finished`` keeps (see `SpanStore`).
    ``process_tag`` names a ``processes=True`` capture to other processes;
    ``sink``, when set, receives the spans instead of this collector keeping them.
    """

    __slots__ = ("__weakref__", "closed", "finished", "open", "pending", "process_tag", "sink")

    def __init__(self, max_spans: int | None = None, sink: SpanSink | None = None) -> None:
        self.finished = SpanStore(max_spans)
        self.open: dict[int, ReadableSpan] = {}
        # Ended spans not yet in ``finished``: added a batch at a time (`_compact`).
        self.pending: list[ReadableSpan] = []
        self.closed = False
        self.process_tag: str | None = None
        self.sink = sink


def to_record(span: ReadableSpan, *, ended: bool = True) -> SpanRecord:
    """Convert an SDK span to plain data (``ended=False`` for a snapshot of an open span)."""
    ctx = span.context
    parent = span.parent
    status = span.status
    attributes = dict(span.attributes or {})
    scope = _foreign_scope(span)
    if scope is not None:
        bounded = bounded_ints(tuple(attributes.values()))
        attributes = dict(zip(attributes, bounded, strict=True))
        attributes[attr.OTEL_SCOPE_NAME] = scope
    return SpanRecord(
        trace_id=format(ctx.trace_id, "032x") if ctx else "",
        span_id=format(ctx.span_id, "016x") if ctx else "",
        parent_id=format(parent.span_id, "016x") if parent else None,
        name=span.name,
        start_ns=span.start_time or 0,
        end_ns=span.end_time if ended else None,
        status=status.status_code.name,
        status_message=status.description,
        attributes=attributes,
        events=_events(span.events),
    )


def _foreign_scope(span: ReadableSpan) -> str | None:
    """The tracer name of another instrumentation's span (None for flow-xray's own).

    Kept as the ``otel.scope.name`` attribute: the accounting tells two
    instrumentors reporting one request apart by it.
    """
    scope = span.instrumentation_scope
    name = scope.name if scope is not None else None
    return name if name and name != state.TRACER_NAME else None


# Ended spans wait in a collector's ``pending`` list, as an in-memory exporter
# keeps them, and go into its compact store this many at a time (and when the
# capture closes): a capture of up to this many calls does no compaction while
# they run, a bigger one pays it in batches, and memory stays bounded by the store.
_BATCH = 4096


def _compact(collector: Collector) -> None:
    """Move the collector's pending spans into its store as compact rows (under the lock)."""
    batch, collector.pending = collector.pending, []
    add = collector.finished.add
    for span in batch:
        try:
            parts = _fields(span)
        except Exception:  # not laid out as the SDK's ReadableSpan: its public properties
            parts = _fields_by_properties(span)
        add(*parts)


def _fields(span: ReadableSpan) -> tuple[Any, ...]:
    """`SpanStore.add`'s arguments from an ended SDK span, read from its instance fields.

    About five times faster than its properties, which copy the events and wrap
    the attributes on every read. Raises (KeyError, AttributeError) for a span
    laid out otherwise; `_fields_by_properties` reads that one.
    """
    fields = span.__dict__
    ctx = fields["_context"]
    parent = fields["_parent"]
    status = fields["_status"]
    items = fields["_attributes"]._dict
    if type(items) is not dict:
        raise TypeError("attributes are not a plain dict")
    keys, values = tuple(items), tuple(items.values())
    scope = fields["_instrumentation_scope"]
    name = scope.name if scope is not None else None
    if name and name != state.TRACER_NAME:  # another instrumentation's span: keep its scope
        keys, values = (*keys, attr.OTEL_SCOPE_NAME), (*bounded_ints(values), name)
    code = status.status_code
    events = fields["_events"]
    return (
        ctx.trace_id,
        ctx.span_id,
        parent.span_id if parent is not None else 0,
        fields["_name"],
        fields["_start_time"] or 0,
        fields["_end_time"] or 0,
        "UNSET" if code is StatusCode.UNSET else "ERROR" if code is StatusCode.ERROR else "OK",
        status.description,
        keys,
        values,
        _events(events) if events else (),
    )


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


def _fields_by_properties(span: ReadableSpan) -> tuple[Any, ...]:
    """`_fields` through the span's public properties (any `ReadableSpan`)."""
    ctx = span.context
    parent = span.parent
    status = span.status
    attributes = span.attributes or {}
    keys, values = tuple(attributes), tuple(attributes.values())
    scope = _foreign_scope(span)
    if scope is not None:
        keys, values = (*keys, attr.OTEL_SCOPE_NAME), (*bounded_ints(values), scope)
    code = status.status_code
    return (
        ctx.trace_id if ctx else 0,
        ctx.span_id if ctx else 0,
        parent.span_id if parent is not None else 0,
        span.name,
        span.start_time or 0,
        span.end_time or 0,
        "UNSET" if code is StatusCode.UNSET else "ERROR" if code is StatusCode.ERROR else "OK",
        status.description,
        keys,
        values,
        _events(span.events),
    )


def _pass_usage_up(span: ReadableSpan) -> None:
    """Tell `state` which LLM usage this span (and the spans inside it) reported."""
    bounded = getattr(span, "_attributes", None)
    attributes = getattr(bounded, "_dict", None)
    if type(attributes) is not dict:
        attributes = span.attributes
    if not attributes or REPORT_KEYS.isdisjoint(attributes):
        if not state.usage_pending():  # the common case: nothing to pass up
            return
        report = None
    else:
        report = report_from_attributes(span.name, attributes)
    ctx, parent = span.context, span.parent
    state.span_ended(ctx.span_id if ctx else 0, parent.span_id if parent else None, report)


class FlowXrayProcessor(SpanProcessor):
    """Collects spans, ours and other instrumentations', into the captures open when they start.

    Example::

        provider = TracerProvider()
        provider.add_span_processor(FlowXrayProcessor())
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._members: dict[int, tuple[Collector, ...]] = {}

    # --- SpanProcessor hooks ------------------------------------------------

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        collectors: tuple[Collector, ...] = state.listeners()  # type: ignore[assignment]
        if not collectors:
            return
        try:
            span_id = span.context.span_id
            with self._lock:
                for collector in collectors:
                    if collector.closed:  # rare: a context that outlived its capture
                        collectors = tuple(c for c in collectors if not c.closed)
                        if not collectors:
                            return
                        break
                self._members[span_id] = collectors
                for collector in collectors:
                    if collector.sink is None:
                        collector.open[span_id] = span
            for collector in collectors:
                if collector.sink is not None:
                    collector.sink.started(span)
        except Exception:
            logger.debug("flow-xray processor: on_start failed", exc_info=True)

    def on_end(self, span: ReadableSpan) -> None:
        try:
            _pass_usage_up(span)
        except Exception:
            logger.debug("flow-xray processor: usage report failed", exc_info=True)
        if not self._members:
            return
        try:
            span_id = span.context.span_id if span.context else 0
            with self._lock:
                collectors = self._members.pop(span_id, None)
                if collectors is None:
                    return
                # Stored under the lock: `close_capture` reads a store only after
                # taking it, so no row lands in a store being read.
                for collector in collectors:
                    if collector.open.pop(span_id, None) is not None:
                        pending = collector.pending
                        pending.append(span)
                        if len(pending) >= _BATCH:
                            _compact(collector)
            for collector in collectors:
                if collector.sink is not None and not collector.closed:
                    collector.sink.ended(span)
        except Exception:
            logger.debug("flow-xray processor: on_end failed", exc_info=True)

    def shutdown(self) -> None:
        """Nothing to release: collected spans belong to their captures."""

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        """Nothing is buffered for export, so a flush always succeeds at once."""
        return True

    # --- captures -----------------------------------------------------------

    def open_capture(
        self,
        all_threads: bool = False,
        max_spans: int | None = None,
        sink: SpanSink | None = None,
    ) -> tuple[Collector, Any]:
        """Start collecting (at most about ``max_spans``, see `SpanStore`; into ``sink`` if given).

        Returns the collector and a token for `close_capture`.
        """
        collector = Collector(max_spans, sink)
        return collector, state.open_capture(collector, all_threads)

    def close_capture(self, collector: Collector, token: Any) -> SpanStore:
        """Stop collecting; return every finished span plus open ones marked incomplete."""
        if not state.close_capture(collector, token):
            return SpanStore()
        with self._lock:
            still_open = list(collector.open.values())
            for span_id in collector.open:
                members = self._members.get(span_id)
                if members is not None:
                    rest = tuple(c for c in members if c is not collector)
                    if rest:
                        self._members[span_id] = rest
                    else:
                        del self._members[span_id]
            collector.open = {}
            if collector.pending:
                _compact(collector)
            finished, collector.finished = collector.finished, SpanStore()
        for span in still_open:
            try:
                record = to_record(span, ended=False)
                attributes = {**record.attributes, attr.INCOMPLETE: True}
                finished.append(replace(record, attributes=attributes))
            except Exception:
                logger.debug("flow-xray processor: snapshot of an open span failed", exc_info=True)
        return finished.seal()

    def forget_after_fork(self) -> None:
        """In a forked child: the spans open at the fork are the parent's; never report them."""
        self._lock = threading.Lock()  # another thread may have held it at the fork
        self._members = {}


_PROCESSOR = FlowXrayProcessor()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_PROCESSOR.forget_after_fork)
_attached: weakref.WeakSet[Any] = weakref.WeakSet()
_attach_lock = threading.Lock()


def get_processor() -> FlowXrayProcessor:
    """Return the process-wide processor that ``trace.capture()`` reads from."""
    return _PROCESSOR


def attach(provider: object) -> bool:
    """Add the process-wide processor to an SDK ``TracerProvider`` once.

    Returns False (and changes nothing) when ``provider`` is not an SDK
    provider, e.g. the API's proxy or no-op provider.
    """
    if not isinstance(provider, TracerProvider):
        return False
    with _attach_lock:
        if provider not in _attached:
            provider.add_span_processor(_PROCESSOR)
            _attached.add(provider)
    return True
