"""The local recorder: an OpenTelemetry API provider whose spans go straight to the captures.

When nothing but a capture will ever read a span (no provider is global, so
nothing exports), building a full SDK span for every traced call is most of
what a call costs: ``Span.__init__``, attribute containers that re-check every
value, locks, an id generator, a sampler, a multi-processor and a second
read-only copy of the span at its end. `LocalProvider` is the private provider
in that case (`flow_xray.runtime.tracer` hands its tracer to ``@trace`` inside
captures, and to other instrumentations' proxy tracers): its `LocalSpan` is
the API's `Span` with the SDK's behaviour and nothing else.

What stays exactly as on the SDK path:

- span contexts: W3C ids from ``random.getrandbits`` (as the SDK's default id
  generator; a forked child reseeds), the parent's trace id, sampled flags as
  the SDK's default sampler ``ParentBased(ALWAYS_ON)`` decides: a child of an
  unsampled parent is a `NonRecordingSpan`;
- attributes: the SDK's limits (``OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT`` and the
  others, read as the SDK reads them), and any value that is not a plain
  ``str``, ``bool``, ``int`` or ``float`` is cleaned by the API's own
  `BoundedAttributes`; events and exceptions as the SDK records them; status
  rules (OK is final, UNSET ignored); nothing changes once a span ended;
- the spans reach the same collecting processor (``on_start`` / ``on_end``),
  so captures, ``max_spans``, child-process streaming, LLM usage hand-up and
  the counting rule behave the same;
- ``OTEL_SDK_DISABLED`` gives no-op tracers.

The SDK path is kept whenever something could tell the difference: a custom
sampler or id generator named in the environment (`local_recording_allowed`),
and ``FLOW_XRAY_RECORDER=sdk`` (a switch to compare the two paths). Once a
provider is global, spans go through it as before (`flow_xray.runtime.tracer`).
"""

from __future__ import annotations

import logging
import os
import random
import threading
import traceback
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from time import time_ns
from types import TracebackType
from typing import TYPE_CHECKING, Any, Final

from opentelemetry import context as context_api, trace as trace_api
from opentelemetry.attributes import BoundedAttributes
from opentelemetry.sdk.trace import Event, SpanLimits
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import (
    INVALID_SPAN,
    NonRecordingSpan,
    SpanContext,
    SpanKind,
    Status,
    StatusCode,
    TraceFlags,
)
from opentelemetry.util import types

try:  # the API's context manager that also decorates async functions (as the SDK's tracer uses)
    from opentelemetry.util._decorator import _agnosticcontextmanager as _contextmanager
except ImportError:  # pragma: no cover - older APIs
    from contextlib import contextmanager as _contextmanager  # type: ignore[assignment]

from flow_xray import attributes as attr

if TYPE_CHECKING:
    from flow_xray.sdk.processor import FlowXrayProcessor

logger = logging.getLogger("flow_xray")

RECORDER_ENV: Final = "FLOW_XRAY_RECORDER"
# Environment variables that change how the SDK samples or makes ids: the SDK path then.
_SDK_CHOICES: Final = ("OTEL_TRACES_SAMPLER", "OTEL_PYTHON_ID_GENERATOR")

_SAMPLED: Final = TraceFlags(TraceFlags.SAMPLED | getattr(TraceFlags, "RANDOM_TRACE_ID", 0))
_UNSET: Final = Status(StatusCode.UNSET)
_PLAIN: Final = frozenset({str, bool, int, float})
_TEXT: Final = frozenset({str})
_getrandbits: Final = random.getrandbits


def local_recording_allowed() -> bool:
    """Whether captures may use the local recorder here (see the module's docstring)."""
    if os.environ.get(RECORDER_ENV, "").strip().lower() == "sdk":
        return False
    return not any(os.environ.get(name, "").strip() for name in _SDK_CHOICES)


class LocalProvider(trace_api.TracerProvider):
    """Hands out `LocalTracer`s whose spans go to ``processor`` (never made global)."""

    def __init__(self, processor: FlowXrayProcessor) -> None:
        self.processor = processor
        limits = SpanLimits()  # reads OTEL_*_LIMIT as the SDK's provider does
        self.max_attributes = limits.max_span_attributes
        self.max_value_length = limits.max_span_attribute_length
        self.max_events = limits.max_events
        self.max_event_attributes = limits.max_event_attributes
        self.max_links = limits.max_links
        self.max_link_attributes = limits.max_link_attributes
        self.max_attribute_length = limits.max_attribute_length
        self._disabled = os.environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true"

    def plain(self, held: int, attributes: types.Attributes) -> bool:
        """Whether ``attributes`` can be stored as they are beside ``held`` others: non-empty
        text keys, plain values (``str``, ``bool``, ``int``, ``float``) within the length
        limit, room for all. Set operations over the types: no Python loop per attribute."""
        room, longest = self.max_attributes, self.max_value_length
        return (
            type(attributes) is dict
            and _PLAIN.issuperset(map(type, attributes.values()))
            and _TEXT.issuperset(map(type, attributes))
            and "" not in attributes
            and (room is None or held + len(attributes) <= room)
            and (
                longest is None
                or all(len(v) <= longest for v in attributes.values() if type(v) is str)
            )
        )

    def get_tracer(
        self,
        instrumenting_module_name: str,
        instrumenting_library_version: str | None = None,
        schema_url: str | None = None,
        attributes: types.Attributes | None = None,
    ) -> trace_api.Tracer:
        if self._disabled:
            return trace_api.NoOpTracer()
        if not instrumenting_module_name:  # the SDK's provider says so too, and carries on
            logger.error("get_tracer called with missing module name.")
        scope = InstrumentationScope(
            instrumenting_module_name, instrumenting_library_version, schema_url, attributes
        )
        return LocalTracer(self, scope)


class LocalTracer(trace_api.Tracer):
    """Starts `LocalSpan`s (see `LocalProvider`)."""

    def __init__(self, provider: LocalProvider, scope: InstrumentationScope) -> None:
        self.provider = provider
        self.scope = scope

    def start_span(
        self,
        name: str,
        context: context_api.Context | None = None,
        kind: SpanKind = SpanKind.INTERNAL,
        attributes: types.Attributes = None,
        links: Sequence[trace_api.Link] | None = (),
        start_time: int | None = None,
        record_exception: bool = True,
        set_status_on_exception: bool = True,
    ) -> trace_api.Span:
        parent: SpanContext | None = trace_api.get_current_span(context).get_span_context()
        if parent is not None and not isinstance(parent, SpanContext):
            raise TypeError("parent_span_context must be a SpanContext or None.")
        flags, state = _SAMPLED, None
        if parent is None or not parent.is_valid:
            parent = None
            trace_id = _getrandbits(128) or 1
        else:
            trace_id, state = parent.trace_id, parent.trace_state
            inherited = parent.trace_flags
            if inherited != _SAMPLED:  # (a local parent's flags are ours: nothing to decide)
                if not inherited.sampled:  # ParentBased: an unsampled parent's child
                    return NonRecordingSpan(
                        SpanContext(
                            trace_id,
                            _getrandbits(64) or 1,
                            False,
                            TraceFlags(inherited & ~TraceFlags.SAMPLED),
                            state,
                        )
                    )
                if not getattr(inherited, "random_trace_id", True):
                    flags = TraceFlags(TraceFlags.SAMPLED)
        span = LocalSpan(
            name,
            SpanContext(trace_id, _getrandbits(64) or 1, False, flags, state),
            parent,
            self,
            kind,
            record_exception,
            set_status_on_exception,
        )
        if attributes:
            if self.provider.plain(0, attributes):  # the common case: stored as they are
                span._attributes = dict(attributes)
            else:
                span.set_attributes(attributes)
        if links:
            for link in links:
                if link:
                    span.add_link(link.context, link.attributes)
        span._start_time = start_time if start_time is not None else time_ns()
        self.provider.processor.on_start(span, context)  # type: ignore[arg-type]
        return span

    @_contextmanager
    def start_as_current_span(
        self,
        name: str,
        context: context_api.Context | None = None,
        kind: SpanKind = SpanKind.INTERNAL,
        attributes: types.Attributes = None,
        links: Sequence[trace_api.Link] | None = (),
        start_time: int | None = None,
        record_exception: bool = True,
        set_status_on_exception: bool = True,
        end_on_exit: bool = True,
    ) -> Iterator[trace_api.Span]:
        span = self.start_span(
            name, context, kind, attributes, links, start_time, record_exception,
            set_status_on_exception,
        )  # fmt: skip
        with trace_api.use_span(
            span,
            end_on_exit=end_on_exit,
            record_exception=record_exception,
            set_status_on_exception=set_status_on_exception,
        ) as current:
            yield current


class LocalSpan(trace_api.Span):
    """A recording span of the local recorder: the API's `Span`, the SDK's rules.

    It also reads like the SDK's `ReadableSpan` (``name``, ``context``,
    ``parent``, ``attributes``, ``events``, ``status``, times, ``kind``,
    ``instrumentation_scope``), which is all the collecting processor and a
    child process's span stream read.
    """

    __slots__ = (
        "_attributes",
        "_end_time",
        "_events",
        "_kind",
        "_links",
        "_lock",
        "_name",
        "_options",
        "_parent",
        "_span_context",
        "_start_time",
        "_status",
        "_tracer",
    )

    def __init__(
        self,
        name: str,
        span_context: SpanContext,
        parent: SpanContext | None,
        tracer: LocalTracer,
        kind: SpanKind = SpanKind.INTERNAL,
        record_exception: bool = True,
        set_status_on_exception: bool = True,
    ) -> None:
        self._name = name
        self._span_context = span_context
        self._parent = parent
        self._tracer = tracer
        self._kind = kind
        self._options = (record_exception, set_status_on_exception)
        self._attributes: dict[str, Any] | BoundedAttributes = {}
        self._events: deque[Event] | None = None
        self._links: list[trace_api.Link] | None = None
        self._status = _UNSET
        self._start_time = 0
        self._end_time: int | None = None
        self._lock = threading.Lock()

    # --- the API's Span -------------------------------------------------------

    def get_span_context(self) -> SpanContext:
        return self._span_context

    def is_recording(self) -> bool:
        return self._end_time is None

    def set_attribute(self, key: str, value: types.AnyValue) -> None:
        self.set_attributes({key: value})

    def set_attributes(self, attributes: Mapping[str, types.AnyValue]) -> None:
        """As the SDK: plain values are stored as they are; anything else, and anything past
        the limits, goes through the API's `BoundedAttributes` (the SDK's own container)."""
        with self._lock:
            if self._end_time is not None:
                logger.warning("Setting attribute on ended span.")
                return
            stored = self._attributes
            if type(stored) is dict and self._tracer.provider.plain(len(stored), attributes):
                if stored.keys().isdisjoint(attributes):
                    stored.update(attributes)
                else:  # a key set again moves last, as in the SDK
                    for key, value in attributes.items():
                        stored.pop(key, None)
                        stored[key] = value
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
            if self._end_time is not None:
                logger.warning("Calling add_event on an ended span.")
                return
            if self._events is None:
                self._events = deque(maxlen=provider.max_events)
            self._events.append(Event(name, bounded, timestamp))

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
            if self._end_time is not None:
                logger.warning("Calling add_link on an ended span.")
                return
            links = self._links
            if links is None:
                links = self._links = []
            if provider.max_links is None or len(links) < provider.max_links:
                links.append(trace_api.Link(context, bounded))

    def update_name(self, name: str) -> None:
        with self._lock:
            if self._end_time is not None:
                logger.warning("Calling update_name on an ended span.")
                return
            self._name = name

    def set_status(self, status: Status | StatusCode, description: str | None = None) -> None:
        """OK is final and UNSET is ignored, as in the SDK."""
        with self._lock:
            if self._end_time is not None:
                logger.warning("Calling set_status on an ended span.")
                return
            if self._status.status_code is StatusCode.OK:
                return
            if isinstance(status, Status):
                if status.status_code is StatusCode.UNSET:
                    return
                if description is not None:
                    logger.warning(
                        "Description %s ignored. Use either `Status` or "
                        "`(StatusCode, Description)`",
                        description,
                    )
                self._status = status
            elif isinstance(status, StatusCode) and status is not StatusCode.UNSET:
                self._status = Status(status, description)

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
            if self._end_time is not None:
                logger.warning("Calling end() on an ended span.")
                return
            self._end_time = end_time if end_time is not None else time_ns()
        self._tracer.provider.processor.on_end(self)  # type: ignore[arg-type]

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
        return self._span_context

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
        return f'LocalSpan(name="{self._name}", context={self._span_context})'


__all__ = [
    "INVALID_SPAN",
    "LocalProvider",
    "LocalSpan",
    "LocalTracer",
    "local_recording_allowed",
]
