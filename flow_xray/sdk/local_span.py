"""The local recorder's span: the OpenTelemetry API's `Span` with the SDK's rules.

`flow_xray.sdk.local` starts these (its module docstring says what stays
exactly as on the SDK path); here is what a span does once started: its
attributes, events, links, status and end, and the fields the collecting
processor reads, as from the SDK's ``ReadableSpan``.
"""

from __future__ import annotations

import logging
import threading
import traceback
from collections import deque
from collections.abc import Mapping
from time import time_ns
from types import TracebackType
from typing import TYPE_CHECKING, Any, Final

from opentelemetry import trace as trace_api
from opentelemetry.attributes import BoundedAttributes
from opentelemetry.sdk.trace import Event
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode, TraceFlags, TraceState
from opentelemetry.util import types

from flow_xray import attributes as attr

if TYPE_CHECKING:
    from flow_xray.sdk.local import LocalTracer

logger = logging.getLogger("flow_xray")

UNSET: Final = Status(StatusCode.UNSET)
OK: Final = Status(StatusCode.OK)
# ``(record_exception, set_status_on_exception)`` as given to a span, each pair made once.
_OPTIONS: Final = {(a, b): (a, b) for a in (True, False) for b in (True, False)}
# The SDK's warning for a write to an ended span, word for word (with the method's name).
_ENDED: Final = "Tried calling %s on an ended span."


_DEFAULT_STATE: Final = trace_api.INVALID_SPAN.get_span_context().trace_state
_tuple_new: Final = tuple.__new__


def _new_context(trace_id: int, span_id: int, flags: TraceFlags, state: Any) -> SpanContext:
    """The context of a span started here: ids from ``random.getrandbits``, never 0 and
    within their bits, so valid. Built as the API's constructor builds it, without its range
    checks (the tuple layout `flow_xray.sdk.local` checks at import)."""
    fields = (trace_id, span_id, False, flags, _DEFAULT_STATE if state is None else state, True)
    return _tuple_new(SpanContext, fields)


class _Locks:
    """The locks local spans share, picked by span id (one object, replaced whole).

    A lock of its own per span (as the SDK's spans have) would be one more object per
    traced call for the garbage collector to track; spans sharing a lock only take turns.
    A span's own warnings (a call on an ended span) are logged after its lock is let go,
    so a log handler that writes to spans never waits for a lock its own thread holds,
    nor holds one another thread waits for. Reentrant: what the SDK's container logs
    under the lock (an attribute value it drops) cannot deadlock on a shared one. A
    forked child gets new ones (`renew_locks`): a lock another thread held at the fork
    would stay held there. A span looks its lock up each time (`LocalSpan._lock`), so the
    spans open at the fork take the new ones too.
    """

    __slots__ = ("pool",)

    def __init__(self) -> None:
        self.pool = tuple(threading.RLock() for _ in range(_LOCK_COUNT))


_LOCK_COUNT: Final = 64  # (a power of two: a span's is its id's low bits)
_STRIPE: Final = _LOCK_COUNT - 1
LOCKS: Final = _Locks()


def renew_locks() -> None:
    """New shared locks (in a forked child: every span takes them from now on)."""
    LOCKS.pool = _Locks().pool


class LocalSpan(trace_api.Span):
    """A recording span of the local recorder: the API's `Span`, the SDK's rules.

    It also reads like the SDK's `ReadableSpan` (``name``, ``context``,
    ``parent``, ``attributes``, ``events``, ``status``, times, ``kind``,
    ``instrumentation_scope``), which is all the collecting processor and a
    child process's span stream read.
    """

    __slots__ = (
        "_attributes",
        "_context",
        "_end_time",
        "_events",
        "_flags",
        "_kind",
        "_links",
        "_name",
        "_options",
        "_parent",
        "_span_id",
        "_start_time",
        "_state",
        "_status",
        "_trace_id",
        "_tracer",
    )

    def __init__(
        self,
        name: str,
        trace_id: int,
        span_id: int,
        flags: TraceFlags,
        state: TraceState | None,
        parent: SpanContext | None,
        tracer: LocalTracer,
        kind: SpanKind = SpanKind.INTERNAL,
        record_exception: bool = True,
        set_status_on_exception: bool = True,
    ) -> None:
        self._name = name
        # Its context's fields; the `SpanContext` itself is made when first asked for
        # (`get_span_context`): most spans never are, and it is one more object per call
        # for the garbage collector to track (it holds a `TraceState`).
        self._trace_id = trace_id
        self._span_id = span_id
        self._flags = flags
        self._state = state
        self._context: SpanContext | None = None
        self._parent = parent
        self._tracer = tracer
        self._kind = kind
        # (one of four shared pairs: nothing more per span for the garbage collector to track)
        options = (record_exception, set_status_on_exception)
        self._options = _OPTIONS.get(options, options)
        self._attributes: dict[str, Any] | BoundedAttributes = {}
        self._events: deque[Event] | None = None
        self._links: list[trace_api.Link] | None = None
        self._status = UNSET
        self._start_time = 0
        self._end_time: int | None = None

    @property
    def _lock(self) -> Any:  # (a `threading.RLock`)
        """The shared lock of this span's stripe, looked up each time: a span started before a
        fork and ended in the child takes the child's new ones (`renew_locks`)."""
        return LOCKS.pool[self._span_id & _STRIPE]

    # --- the API's Span -------------------------------------------------------

    def get_span_context(self) -> SpanContext:
        context = self._context
        if context is None:
            context = self._context = _new_context(
                self._trace_id, self._span_id, self._flags, self._state
            )
        return context

    def is_recording(self) -> bool:
        return self._end_time is None

    def set_attribute(self, key: str, value: types.AnyValue) -> None:
        self.set_attributes({key: value})

    def set_attributes(self, attributes: Mapping[str, types.AnyValue]) -> None:
        with self._lock:
            ended = self._end_time is not None
            if not ended:
                self._set_locked(attributes)
        if ended:
            logger.warning("Setting attribute on ended span.")

    def _set_locked(self, attributes: Mapping[str, types.AnyValue]) -> None:
        """As the SDK: plain values are stored as they are; anything else, and anything past
        the limits, goes through the API's `BoundedAttributes` (the SDK's own container)."""
        stored = self._attributes
        if type(stored) is dict and self._tracer.provider.plain(len(stored), attributes):
            if stored.keys().isdisjoint(attributes):
                stored.update(attributes)  # (one C call: all or none, whatever a signal does)
            else:  # a key set again moves last, as in the SDK; built aside, stored in one step
                kept = {key: value for key, value in stored.items() if key not in attributes}
                kept.update(attributes)
                self._attributes = kept
            return
        bounded = stored if isinstance(stored, BoundedAttributes) else self._bounded(stored)
        bounded._set_items(attributes)

    def _bounded(self, plain: dict[str, Any]) -> BoundedAttributes:
        """From now on the SDK's own container: its cleaning, eviction and dropped count."""
        provider = self._tracer.provider
        bounded = BoundedAttributes(
            provider.max_attributes, None, immutable=False, max_value_len=provider.max_value_length
        )
        bounded._dict = plain  # already clean, in order
        self._attributes = bounded
        return bounded

    def add_event(
        self, name: str, attributes: types.Attributes = None, timestamp: int | None = None
    ) -> None:
        provider = self._tracer.provider
        bounded = BoundedAttributes(
            provider.max_event_attributes,
            attributes,
            max_value_len=provider.max_attribute_length,
            immutable=True,
        )
        with self._lock:
            ended = self._end_time is not None
            if not ended:
                if self._events is None:
                    self._events = deque(maxlen=provider.max_events)
                self._events.append(Event(name, bounded, timestamp))
        if ended:
            logger.warning(_ENDED, "_add_event")

    def add_link(self, context: SpanContext, attributes: types.Attributes = None) -> None:
        if context is None or (not context.is_valid and not attributes and not context.trace_state):
            return  # the SDK keeps only links that say something
        provider = self._tracer.provider
        bounded = BoundedAttributes(
            provider.max_link_attributes,
            attributes,
            max_value_len=provider.max_attribute_length,
            immutable=True,
        )
        with self._lock:
            ended = self._end_time is not None
            if not ended:
                links = self._links
                if links is None:
                    links = self._links = []
                if provider.max_links is None or len(links) < provider.max_links:
                    links.append(trace_api.Link(context, bounded))
        if ended:
            logger.warning(_ENDED, "_add_link")

    def update_name(self, name: str) -> None:
        with self._lock:
            ended = self._end_time is not None
            if not ended:
                self._name = name
        if ended:
            logger.warning(_ENDED, "update_name")

    def set_status(self, status: Status | StatusCode, description: str | None = None) -> None:
        """OK is final and UNSET is ignored, as in the SDK."""
        ignored = False  # a description beside a `Status`: the SDK warns it is ignored
        with self._lock:
            ended = self._end_time is not None
            if ended or self._status.status_code is StatusCode.OK:
                pass
            elif isinstance(status, Status):
                if status.status_code is not StatusCode.UNSET:
                    ignored = description is not None
                    self._status = status
            elif isinstance(status, StatusCode) and status is not StatusCode.UNSET:
                self._status = Status(status, description)
        if ended:
            logger.warning(_ENDED, "set_status")
        elif ignored:
            logger.warning(
                "Description %s ignored. Use either `Status` or `(StatusCode, Description)`",
                description,
            )

    def record_exception(
        self,
        exception: BaseException,
        attributes: types.Attributes = None,
        timestamp: int | None = None,
        escaped: bool = False,
    ) -> None:
        """An ``exception`` event with the semantic conventions' keys, as the SDK writes it."""
        kind = type(exception)
        module = kind.__module__
        event: dict[str, types.AnyValue] = {
            attr.EXCEPTION_TYPE: (
                f"{module}.{kind.__qualname__}"
                if module and module != "builtins"
                else kind.__qualname__
            ),
            attr.EXCEPTION_MESSAGE: str(exception),
            attr.EXCEPTION_STACKTRACE: "".join(traceback.format_exception(exception)),
            attr.EXCEPTION_ESCAPED: str(escaped),
        }
        if attributes:
            event.update(attributes)
        self.add_event(attr.EXCEPTION_EVENT, event, timestamp)

    def end(self, end_time: int | None = None) -> None:
        with self._lock:
            ended = self._end_time is not None
            if not ended:
                self._end_time = end_time if end_time is not None else time_ns()
        if ended:
            logger.warning("Calling end() on an ended span.")
            return
        self._tracer.provider.processor.on_end(self, self._span_id)  # type: ignore[arg-type]

    def _end_call(self, attributes: Mapping[str, Any] | None, ok: bool) -> None:
        """`LocalTracer.end_call`: what ``set_attributes``, ``set_status(OK)`` and ``end()``
        do, one after the other, under one lock."""
        with LOCKS.pool[self._span_id & _STRIPE]:  # (`_lock`, inline: every call ends here)
            ended = self._end_time is not None
            if not ended:
                if attributes:
                    self._set_locked(attributes)
                if ok and (self._status is UNSET or self._status.status_code is not StatusCode.OK):
                    self._status = OK  # what set_status(OK) does: OK replaces any other
                self._end_time = time_ns()
        if ended:
            if attributes:
                logger.warning("Setting attribute on ended span.")
            if ok:
                logger.warning(_ENDED, "set_status")
            logger.warning("Calling end() on an ended span.")
            return
        self._tracer.provider.processor.on_end(self, self._span_id)  # type: ignore[arg-type]

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> None:
        """Ends the span; an exception leaving the block is recorded first, as in the SDK."""
        if exc_val is not None and self.is_recording():
            record_exception, set_status_on_exception = self._options
            if record_exception:
                self.record_exception(exception=exc_val, escaped=True)
            if set_status_on_exception:
                self.set_status(Status(StatusCode.ERROR, f"{type(exc_val).__name__}: {exc_val}"))
        self.end()

    # --- read like the SDK's ReadableSpan --------------------------------------

    @property
    def name(self) -> str:
        return self._name

    @property
    def context(self) -> SpanContext:
        return self.get_span_context()

    @property
    def parent(self) -> SpanContext | None:
        return self._parent

    @property
    def start_time(self) -> int:
        return self._start_time

    @property
    def end_time(self) -> int | None:
        return self._end_time

    @property
    def status(self) -> Status:
        return self._status

    @property
    def attributes(self) -> Mapping[str, Any]:
        stored = self._attributes
        return stored if type(stored) is dict else stored._dict  # type: ignore[union-attr]

    @property
    def events(self) -> tuple[Event, ...]:
        return tuple(self._events or ())

    @property
    def links(self) -> tuple[trace_api.Link, ...]:
        return tuple(self._links or ())

    @property
    def kind(self) -> SpanKind:
        return self._kind

    @property
    def instrumentation_scope(self) -> InstrumentationScope:
        return self._tracer.scope

    def __repr__(self) -> str:
        return f'LocalSpan(name="{self._name}", context={self.get_span_context()})'


__all__ = ["LOCKS", "OK", "UNSET", "LocalSpan", "renew_locks"]
