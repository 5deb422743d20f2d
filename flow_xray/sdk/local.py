"""The local recorder: an OpenTelemetry API provider whose spans go straight to the captures.

When nothing but a capture will ever read a span (no provider is global, so
nothing exports), building a full SDK span for every traced call is most of
what a call costs: ``Span.__init__``, attribute containers that re-check every
value, locks, an id generator, a sampler, a multi-processor and a second
read-only copy of the span at its end. `LocalProvider` is the private provider
in that case (`flow_xray.runtime.tracer` hands its tracer to ``@trace`` inside
captures, and to other instrumentations' proxy tracers): its `LocalSpan`
(`flow_xray.sdk.local_span`) is the API's `Span` with the SDK's behaviour and
nothing else. ``@trace`` starts and ends its calls through
`LocalTracer.call_recorder`: the span with its attributes, made current, in one
step; the output, the status and the end in another, as the API's calls would.

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
from collections.abc import Iterator, Mapping, Sequence
from time import time_ns
from typing import TYPE_CHECKING, Any, Final

from opentelemetry import context as context_api, trace as trace_api
from opentelemetry.context import Context
from opentelemetry.sdk.trace import SpanLimits
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import (
    INVALID_SPAN,
    NonRecordingSpan,
    SpanContext,
    SpanKind,
    TraceFlags,
)
from opentelemetry.util import types

try:  # the API's context manager that also decorates async functions (as the SDK's tracer uses)
    from opentelemetry.util._decorator import _agnosticcontextmanager as _contextmanager
except ImportError:  # pragma: no cover - older APIs
    from contextlib import contextmanager as _contextmanager  # type: ignore[assignment]

from flow_xray.runtime import patches
from flow_xray.runtime.context import current_context
from flow_xray.runtime.tracer import EndCall, StartCall
from flow_xray.sdk.local_span import _DEFAULT_STATE, LocalSpan, renew_locks
from flow_xray.tracing.recording import end_span, end_stopped

if TYPE_CHECKING:
    from flow_xray.sdk.processor import FlowXrayProcessor

logger = logging.getLogger("flow_xray")

RECORDER_ENV: Final = "FLOW_XRAY_RECORDER"
# Environment variables that change how the SDK samples or makes ids: the SDK path then.
_SDK_CHOICES: Final = ("OTEL_TRACES_SAMPLER", "OTEL_PYTHON_ID_GENERATOR")

_SAMPLED: Final = TraceFlags(TraceFlags.SAMPLED | getattr(TraceFlags, "RANDOM_TRACE_ID", 0))
_PLAIN: Final = frozenset({str, bool, int, float})
_getrandbits: Final = random.getrandbits


def _api_layout() -> bool:
    """Whether a `SpanContext` is the 6-tuple this API version's constructor builds:
    ``(trace id, span id, is remote, flags, state, is valid)``. The local recorder builds
    and reads span contexts as such tuples (no range checks, no property calls: a third of
    what starting a span costs); with any other layout captures take the SDK path."""
    probe = SpanContext(3, 5, False, _SAMPLED, None)
    return tuple(probe) == (3, 5, False, _SAMPLED, _DEFAULT_STATE, True) and probe.is_valid


_API_LAYOUT: Final = _api_layout()
# The key under which the API keeps the current span in a `Context`, as its own
# ``set_span_in_context`` writes it.
(_SPAN_KEY,) = trace_api.set_span_in_context(INVALID_SPAN, Context()).keys()


def local_recording_allowed() -> bool:
    """Whether captures may use the local recorder here (see the module's docstring)."""
    if not _API_LAYOUT or os.environ.get(RECORDER_ENV, "").strip().lower() == "sdk":
        return False
    return not any(os.environ.get(name, "").strip() for name in _SDK_CHOICES)


# Local spans share their locks (`flow_xray.sdk.local_span.LOCKS`): a forked child renews them.
_NEW_LOCKS_AT_FORK: Final = patches.ForkHook("local span locks", after_in_child=renew_locks)


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
        patches.install(_NEW_LOCKS_AT_FORK)

    def plain(self, held: int, attributes: types.Attributes) -> bool:
        """Whether ``attributes`` can be stored as they are beside ``held`` others: non-empty
        text keys, plain values (``str``, ``bool``, ``int``, ``float``) within the length
        limit, room for all. One pass, exact types (a span has a handful)."""
        if type(attributes) is not dict or "" in attributes:
            return False
        room, longest = self.max_attributes, self.max_value_length
        if room is not None and held + len(attributes) > room:
            return False
        for key, value in attributes.items():
            kind = type(value)
            if type(key) is not str or kind not in _PLAIN:
                return False
            if kind is str and longest is not None and len(value) > longest:
                return False
        return True

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
        self.scope_name = scope.name  # (read for every span stored: `flow_xray.sdk.rows.to_row`)

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
        parent = trace_api.get_current_span(context).get_span_context()
        span = self._new_span(name, parent, kind, record_exception, set_status_on_exception)
        if type(span) is not LocalSpan:
            return span
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
        self.provider.processor.on_start(span, context, span._span_id)  # type: ignore[arg-type]
        return span

    def _new_span(
        self,
        name: str,
        parent: SpanContext | None,
        kind: SpanKind = SpanKind.INTERNAL,
        record_exception: bool = True,
        set_status_on_exception: bool = True,
    ) -> LocalSpan | NonRecordingSpan:
        """A span under ``parent`` (the current span's context): a `LocalSpan` with new ids,
        not yet started, or for an unsampled parent the `NonRecordingSpan` the SDK gives."""
        if parent is not None and not isinstance(parent, SpanContext):
            raise TypeError("parent_span_context must be a SpanContext or None.")
        flags, state = _SAMPLED, None
        # (fields read as the tuple they are, see `_api_layout`: properties cost a call each)
        if parent is None or not parent[5]:
            parent = None
            trace_id = _getrandbits(128) or 1
        else:
            trace_id, _, _, inherited, state, _ = parent
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
        return LocalSpan(
            name,
            trace_id,
            _getrandbits(64) or 1,
            flags,
            state,
            parent,
            self,
            kind,
            record_exception,
            set_status_on_exception,
        )

    def call_recorder(self, name: str, static: Mapping[str, Any]) -> tuple[StartCall, EndCall]:
        """``@trace``'s start and end of one function's calls, each in one step
        (`flow_xray.runtime.tracer.call_recorder_of`): what ``start_span`` with the static
        and input attributes, then ``set_span_in_context``, do; and `end_call`.

        The static attributes are checked against the span limits once, here; a call's
        input attributes are checked as they come.
        """
        static = dict(static)
        provider = self.provider
        held = len(static) if provider.plain(0, static) else -1
        get_current, span_key = current_context, _SPAN_KEY

        def start(inputs: Mapping[str, Any] | None) -> tuple[trace_api.Span, Context]:
            current = get_current()
            found = current.get(span_key)
            parent: SpanContext | None
            if type(found) is LocalSpan:  # (the common parent: no ABC check)
                parent = found.get_span_context()
            elif found is None:
                parent = None
            else:  # as ``get_current_span``: anything but a span counts as none
                parent = found.get_span_context() if isinstance(found, trace_api.Span) else None
            span = self._new_span(name, parent)
            made = current.copy()  # what ``set_span_in_context`` does
            made[span_key] = span
            context = Context(made)
            if type(span) is LocalSpan:
                if held >= 0 and (not inputs or provider.plain(held, inputs)):
                    attributes = static.copy()
                    if inputs:
                        attributes.update(inputs)
                    span._attributes = attributes
                else:  # limits or values the SDK's container must handle
                    span.set_attributes({**static, **inputs} if inputs else static)
                span._start_time = time_ns()
                try:  # (last: nothing after it to leave the span open)
                    provider.processor.on_start(span, None, span._span_id)  # type: ignore[arg-type]
                except BaseException as exc:  # a signal's, maybe once it joined: the call is over
                    end_stopped(span, exc)
                    raise
            return span, context

        return start, self.end_call

    def end_call(
        self, span: trace_api.Span, attributes: Mapping[str, Any] | None, ok: bool
    ) -> None:
        """``@trace``'s end of a call in one step: ``attributes`` set, the status OK when
        ``ok``, the span ended; the same as ``set_attributes``, ``set_status(OK)`` and
        ``end()``, under one lock (the end of `call_recorder`)."""
        if type(span) is LocalSpan:
            span._end_call(attributes, ok)
            return
        end_span(span, attributes, ok)  # one it did not record (an unsampled parent's child)

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


__all__ = [
    "INVALID_SPAN",
    "LocalProvider",
    "LocalTracer",
    "local_recording_allowed",
]
