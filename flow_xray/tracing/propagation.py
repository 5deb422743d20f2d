"""Carry the current call, and the captures listening to it, into other threads and processes.

A *carrier* is a small ``dict[str, str]``: the W3C trace context
(``traceparent``, ``tracestate``) of the current span, plus
``flow-xray-captures``, the tags of the ``trace.capture(processes=True)``
blocks a span started here would belong to. A child process that runs its
work inside a carrier (`attached`) starts its spans under the call that
handed the work over, and they are merged into the right capture.

`propagate` is the public face: in a thread pool it runs the callable in a
copy of the caller's context; pickled for a process pool, it takes a carrier
along. Only the OpenTelemetry API is used here.
"""

from __future__ import annotations

import contextvars
import functools
import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from types import MappingProxyType
from typing import Any, Final, Generic, ParamSpec, TypeVar

from opentelemetry import context as otel_context
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from flow_xray.runtime import captures

P = ParamSpec("P")
R = TypeVar("R")

TRACEPARENT: Final = "traceparent"
TRACESTATE: Final = "tracestate"
CAPTURES: Final = "flow-xray-captures"
# The same three in a process environment (the first two as OpenTelemetry names them).
ENVIRONMENT: Final = MappingProxyType(
    {
        TRACEPARENT: "TRACEPARENT",
        TRACESTATE: "TRACESTATE",
        CAPTURES: "FLOW_XRAY_CAPTURES",
    }
)

_W3C: Final = TraceContextTextMapPropagator()


def capture_tags() -> tuple[str, ...]:
    """Tags of the processes captures a span started now belongs to: inherited, then local."""
    tags = captures.inherited_tags()
    for listener in captures.listeners():
        tag = getattr(listener, "process_tag", None)
        if tag is not None and not listener.closed and tag not in tags:
            tags = (*tags, tag)
    return tags


def current_carrier(context: contextvars.Context | None = None) -> dict[str, str]:
    """The carrier of the current context (or of ``context``, a copied one); ``{}`` when empty."""
    if context is not None:
        # A copy: the same Context cannot be entered by two threads at once.
        return context.copy().run(current_carrier)
    carrier: dict[str, str] = {}
    _W3C.inject(carrier)
    tags = capture_tags()
    if tags:
        carrier[CAPTURES] = ",".join(tags)
    return carrier


def environ_carrier(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The carrier a process environment holds (``os.environ`` by default); ``{}`` if none.

    ``TRACEPARENT`` / ``TRACESTATE`` are how a traced service hands its call
    to a script it starts, as OpenTelemetry's environment-carrier spec has it.
    """
    env = os.environ if environ is None else environ
    carrier: dict[str, str] = {}
    for key, name in ENVIRONMENT.items():
        value = env.get(name, "").strip()
        if value:
            carrier[key] = value
    return carrier


def parse_tags(text: str | None) -> tuple[str, ...]:
    """The tags of a ``flow-xray-captures`` value (empty for None or garbage)."""
    if not text:
        return ()
    return tuple(tag for tag in text.split(",") if tag and tag.isalnum())


@contextmanager
def attached(carrier: Mapping[str, str]) -> Iterator[None]:
    """Run the block as a continuation of the carrier's call (and in its captures)."""
    tokens = attach(carrier)
    try:
        yield
    finally:
        detach(tokens)


_Prepared = tuple[otel_context.Context | None, tuple[str, ...] | None]


def _prepare(carrier: Mapping[str, str]) -> _Prepared:
    """The carrier read once: the OpenTelemetry context to attach, and the capture tags."""
    context = _W3C.extract(dict(carrier)) if carrier.get(TRACEPARENT) else None
    tags = parse_tags(carrier[CAPTURES]) if CAPTURES in carrier else None
    return context, tags


def attach(
    carrier: Mapping[str, str], prepared: _Prepared | None = None
) -> tuple[object | None, object | None]:
    """Make the carrier's call current; returns what `detach` needs to undo it.

    A process that starts from a carrier (its environment) attaches it once
    and never detaches.
    """
    context, tags = _prepare(carrier) if prepared is None else prepared
    trace_token = None if context is None else otel_context.attach(context)
    tags_token = None if tags is None else captures.inherit_tags(tags)
    return trace_token, tags_token


def detach(tokens: tuple[object | None, object | None]) -> None:
    """Undo `attach`."""
    trace_token, tags_token = tokens
    if tags_token is not None:
        captures.uninherit(tags_token)  # type: ignore[arg-type]  # the Token attach returned
    if trace_token is not None:
        otel_context.detach(trace_token)  # type: ignore[arg-type]  # the Token attach returned


class ProcessCarrier(dict[str, str]):
    """A carrier stored on a `multiprocessing.Process` before it starts.

    Unpickling it in a spawned child imports flow-xray first, so the child is
    collecting before the process's target runs.
    """

    def __reduce__(self) -> tuple[Any, ...]:
        return (ProcessCarrier, (dict(self),))


class Propagated(Generic[P, R]):
    """``fn`` bound to the context it was wrapped in (see `propagate`); picklable when ``fn`` is."""

    __wrapped__: Callable[P, R]

    def __init__(
        self,
        fn: Callable[P, R],
        context: contextvars.Context | None,
        carrier: Mapping[str, str] | None = None,
    ) -> None:
        functools.update_wrapper(self, fn)
        self._context = context
        self._carrier = carrier
        self._prepared: _Prepared | None = None

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        if self._context is not None:
            # One Context cannot be entered by two threads at once: run in a copy.
            return self._context.copy().run(self.__wrapped__, *args, **kwargs)
        if self._prepared is None:  # once per worker process, not once per item
            self._prepared = _prepare(self._carrier or {})
        # In a copy of the worker's context, so what `attach` sets goes with the copy: a
        # ``KeyboardInterrupt`` (a pool worker outlives its task's) landing as it attaches
        # or detaches cannot leave the carrier's call current for the worker's next task.
        return contextvars.copy_context().run(self._run_attached, args, kwargs)

    def _run_attached(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> R:
        attach(self._carrier or {}, self._prepared)  # (undone by leaving the copy)
        return self.__wrapped__(*args, **kwargs)

    def __reduce__(self) -> tuple[Any, ...]:
        # The carrier is taken from the wrapping context now: pickling runs in a
        # pool's feeder thread, whose own context knows nothing of the caller.
        carrier = self._carrier
        if carrier is None and self._context is not None:
            carrier = current_carrier(self._context)
        return (Propagated, (self.__wrapped__, None, carrier or {}))

    def __repr__(self) -> str:
        return f"propagate({self.__wrapped__!r})"


def propagate(fn: Callable[P, R]) -> Callable[P, R]:
    """Wrap ``fn`` to run as part of the current call, in whatever thread or process runs it.

    Spans ``fn`` starts get the current span as their parent and land in the
    captures open here. In a thread pool the wrapper runs ``fn`` in a copy of
    the caller's context; sent to a process pool (it pickles whenever ``fn``
    pickles) it carries the W3C trace context and the capture tags along, so
    the worker's spans join this trace::

        with ThreadPoolExecutor() as pool:
            pool.map(propagate(fetch), urls)

        with ProcessPoolExecutor() as pool:
            pool.map(propagate(score), rows)

    Under ``flow-xray run`` and ``trace.capture(processes=True)`` work sent to
    ``multiprocessing.Pool`` and ``ProcessPoolExecutor`` is wrapped for you.
    """
    return Propagated(fn, contextvars.copy_context())
