"""The span processor that collects spans into open captures.

It follows the SDK's SpanProcessor contract: hooks never block on I/O and
never raise, shared state sits behind one lock, and readers get immutable
snapshots. It only *collects*: each finished span becomes a compact row of
plain data in the capture's `SpanStore` (read back as `SpanRecord`s);
building the tree is `flow_xray.tree`'s job.

A span belongs to every capture active in the context that started it
(``trace.capture()``), plus every process-wide capture
(``trace.capture(all_threads=True)``); that registry is owned by
`flow_xray.runtime.captures`. Spans of other instrumentations are collected the
same way as ours.

A collector can also stream instead of keeping: one with a `SpanSink` hands
each span to the sink as it starts and as it ends (a child process sends its
spans to the parent this way, see `flow_xray.sdk.processes`). After
``os.fork()`` the child forgets every span and capture it inherited.
"""

from __future__ import annotations

import logging
import threading
from types import MappingProxyType
from typing import Any, Final, Protocol, cast

from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor, TracerProvider

from flow_xray import attributes as attr
from flow_xray.interrupts import let_signals_through
from flow_xray.llm.requests import REPORT_KEYS, report_from_attributes
from flow_xray.runtime import captures, patches, tracer, usage
from flow_xray.runtime.sdk_state import COLLECTING
from flow_xray.sdk.local import LocalProvider, local_recording_allowed
from flow_xray.sdk.rows import row_record, to_row
from flow_xray.tree.spans import SpanStore

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

    __slots__ = (
        "__weakref__",
        "closed",
        "drained",
        "draining",
        "finished",
        "open",
        "pending",
        "process_tag",
        "sink",
        "streaming",
    )

    def __init__(self, max_spans: int | None = None, sink: SpanSink | None = None) -> None:
        self.finished = SpanStore(max_spans)
        self.open: dict[int, ReadableSpan] = {}
        # Ended spans not yet in ``finished`` (see `_compact_slice`): the newest in
        # ``pending``; a full batch in ``draining``, its first ``drained`` already stored.
        self.pending: list[ReadableSpan] = []
        self.draining: list[ReadableSpan | None] = []
        self.drained = 0
        self.streaming = False  # past the first batch: the backlog drains, then no span waits
        self.closed = False
        self.process_tag: str | None = None
        self.sink = sink


# Ended spans wait in a collector's ``pending`` list, as an in-memory exporter
# keeps them: a capture of up to `_BATCH` calls does no compaction while they
# run (it is done when the capture closes). A full batch moves to ``draining``
# and goes into the compact store `_SLICE` spans per span end, so no traced
# call pays for others (the time would show as its caller's own) and memory
# stays bounded by the store. Past the first batch the capture streams: what
# ended meanwhile drains the same way (halving the backlog each round), and
# once nothing waits each span is stored as it ends. Spans are let go of young,
# so the garbage collector's full passes (pauses of tens of ms in whichever
# call runs) stay rare; see tests/benchmarks/bench_pauses.py.
_BATCH = 4096
_SLICE = 2


def _compact_slice(collector: Collector) -> None:
    """Store the next `_SLICE` spans of the batch being drained (under the lock).

    What is ``pending`` starts draining once the previous batch is done; each
    stored span is let go of at once, so no call frees a whole batch either.
    """
    draining, done = collector.draining, collector.drained
    if not draining:
        draining = collector.draining = cast("list[ReadableSpan | None]", collector.pending)
        collector.pending, done, collector.streaming = [], 0, True
    stop = min(done + _SLICE, len(draining))
    add = collector.finished.add
    for index in range(done, stop):
        span = draining[index]
        draining[index] = None
        if span is not None:
            add(*to_row(span))
    if stop == len(draining):
        collector.draining, collector.drained = [], 0
    else:
        collector.drained = stop


def _compact(collector: Collector) -> None:
    """Store every span still waiting, oldest first (under the lock; at close)."""
    draining, collector.draining = collector.draining[collector.drained :], []
    batch, collector.pending, collector.drained = collector.pending, [], 0
    add = collector.finished.add
    for span in (*draining, *batch):
        if span is not None:
            add(*to_row(span))


_INCOMPLETE: Final = MappingProxyType({attr.INCOMPLETE: True})


def _span_id(span: ReadableSpan) -> int:
    ctx = span.context
    return ctx.span_id if ctx else 0


def _pass_usage_up(span: ReadableSpan) -> None:
    """Report which LLM usage this span and those inside it carried (`flow_xray.runtime.usage`)."""
    attributes = getattr(span, "_attributes", None)  # a local span's plain dict
    if type(attributes) is not dict:
        attributes = getattr(attributes, "_dict", None)  # the SDK's BoundedAttributes
    if type(attributes) is not dict:
        attributes = span.attributes
    if not attributes or REPORT_KEYS.isdisjoint(attributes):
        if not usage.usage_pending():  # the common case: nothing to pass up
            return
        report = None
    else:
        report = report_from_attributes(span.name, attributes)
    ctx, parent = span.context, span.parent
    usage.span_ended(ctx.span_id if ctx else 0, parent.span_id if parent else None, report)


class FlowXrayProcessor(SpanProcessor):
    """Collects spans, ours and other instrumentations', into the captures open when they start.

    Example::

        provider = TracerProvider()
        provider.add_span_processor(FlowXrayProcessor())
    """

    def __init__(self) -> None:
        self._lock = threading.RLock()  # (reentrant: see the hooks' note below)
        self._members: dict[int, tuple[Collector, ...]] = {}

    # --- SpanProcessor hooks ------------------------------------------------

    # (The local recorder calls both hooks with its span's id at hand, ``span_id``:
    # `flow_xray.sdk.local`; the SDK calls them without.)
    #
    # A signal handler, or a finalizer the garbage collector runs at an allocation, runs
    # between two instructions of whatever the thread was doing, this processor's own
    # work under its lock included. Spans its code starts or ends then (a traced clean-up
    # in a SIGTERM handler or a ``__del__``) find the lock held by their own thread: they
    # are not collected, rather than wait forever for it (a plain lock) or change a
    # capture's store half-way through a change (a reentrant one).

    def on_start(
        self, span: Span, parent_context: Context | None = None, span_id: int | None = None
    ) -> None:
        """A span started: it joins the captures listening here."""
        collectors: tuple[Collector, ...] = captures.listeners()  # type: ignore[assignment]
        if not collectors or self._lock._is_owned():  # type: ignore[attr-defined]
            return  # (owned: started from inside this processor's own work, see above)
        try:
            span_id = _span_id(span) if span_id is None else span_id
            streamed = closed = False
            with self._lock:
                for collector in collectors:  # one pass: the common case is one open capture
                    if collector.closed:  # rare: a context that outlived its capture
                        closed = True
                    elif collector.sink is None:
                        collector.open[span_id] = span
                    else:
                        streamed = True
                if closed:
                    collectors = tuple(c for c in collectors if not c.closed)
                    if not collectors:
                        return
                self._members[span_id] = collectors
            if streamed:
                for collector in collectors:
                    if collector.sink is not None:
                        collector.sink.started(span)
        except Exception:
            let_signals_through()
            logger.debug("flow-xray processor: on_start failed", exc_info=True)

    def on_end(self, span: ReadableSpan, span_id: int | None = None) -> None:
        """A span ended: each capture it joined stores it."""
        try:
            _pass_usage_up(span)
        except Exception:
            let_signals_through()
            logger.debug("flow-xray processor: usage report failed", exc_info=True)
        members = self._members
        if not members or self._lock._is_owned():  # type: ignore[attr-defined]
            return  # (owned: started from inside this processor's own work, see above)
        try:
            span_id = _span_id(span) if span_id is None else span_id
            streamed = False
            with self._lock:
                collectors = members.pop(span_id, None)
                if collectors is None:
                    return
                # Stored under the lock: `close_capture` reads a store only after
                # taking it, so no row lands in a store being read.
                for collector in collectors:
                    if collector.open.pop(span_id, None) is not None:
                        pending = collector.pending
                        if collector.streaming and not pending and not collector.draining:
                            collector.finished.add(*to_row(span))  # caught up: stored at once
                            continue
                        pending.append(span)
                        if collector.streaming or len(pending) >= _BATCH:
                            _compact_slice(collector)
                    elif collector.sink is not None:  # (a sink's spans are never in ``open``)
                        streamed = True
            if streamed:
                for collector in collectors:
                    if collector.sink is not None and not collector.closed:
                        collector.sink.ended(span)
        except Exception:
            let_signals_through()
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
        return collector, captures.open_capture(collector, all_threads)

    def close_capture(self, collector: Collector, token: Any) -> SpanStore:
        """Stop collecting; return every finished span plus open ones marked incomplete."""
        if not captures.close_capture(collector, token):
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
            if collector.pending or collector.draining:
                _compact(collector)
            finished, collector.finished = collector.finished, SpanStore()
        for span in still_open:
            try:
                if span.end_time is None:
                    finished.append(row_record(to_row(span), ended=False, extra=_INCOMPLETE))
                else:  # ended, its `on_end` yet to come or cut short (a signal's exception)
                    finished.add(*to_row(span))
            except Exception:
                let_signals_through()
                logger.debug("flow-xray processor: snapshot of an open span failed", exc_info=True)
        return finished.seal()

    def forget_after_fork(self) -> None:
        """In a forked child: the spans open at the fork are the parent's; never report them."""
        self._lock = threading.RLock()  # another thread may have held it at the fork
        self._members = {}


def get_processor() -> FlowXrayProcessor:
    """Return the process-wide processor that ``trace.capture()`` reads from.

    A forked child forgets the spans it inherited in it (a fork hook installed here).
    """
    processor: FlowXrayProcessor | None = COLLECTING.processor
    if processor is None:
        with COLLECTING.lock:
            if COLLECTING.processor is None:
                COLLECTING.processor = FlowXrayProcessor()
            processor = COLLECTING.processor
    patches.install(_FORGET_AT_FORK)
    return processor


def _forget_after_fork() -> None:
    if COLLECTING.processor is not None:
        COLLECTING.processor.forget_after_fork()


_FORGET_AT_FORK: Final = patches.ForkHook("collecting processor", after_in_child=_forget_after_fork)


def attach(provider: object) -> bool:
    """Add the process-wide processor to an SDK ``TracerProvider`` once.

    Returns False (and changes nothing) when ``provider`` is not an SDK
    provider, e.g. the API's proxy or no-op provider.
    """
    if not isinstance(provider, TracerProvider):
        return False
    processor = get_processor()
    with COLLECTING.lock:
        if provider not in COLLECTING.attached:
            provider.add_span_processor(processor)
            COLLECTING.attached.add(provider)
    return True


def ensure_collecting() -> None:
    """Make sure spans started now reach the collecting processor.

    The provider in use gets it (`flow_xray.runtime.tracer.provider_in_use`);
    with no SDK provider global, the private provider (made here once, never
    global) serves captures, proxy tracers included: the local recorder
    (`flow_xray.sdk.local`), or an SDK provider where that is not allowed.
    """
    provider, private = tracer.provider_in_use()
    if not private and attach(provider):
        return
    with COLLECTING.lock:
        provider = tracer.private_provider()
        if provider is None:
            if local_recording_allowed():
                provider = LocalProvider(get_processor())
            else:
                provider = TracerProvider()
                attach(provider)
        tracer.set_private_provider(provider)  # (again after shutdown: the proxy patch comes back)


# A provider set globally while a capture is open (say, by a script under
# `flow-xray run`) gets the processor too, so its spans keep being collected.
tracer.set_join_hook(attach)
