"""The ``@trace`` wrapper: one call becomes one OpenTelemetry span (OpenTelemetry API only).

The user's return value or exception passes through as the same object, and
nothing flow-xray does while recording reaches user code: if a span cannot
even be started (a broken processor), the function simply runs untraced.
Generators are driven by hand so the span's context is attached only while
their body runs, never across a ``yield``. A signal's exception (Ctrl-C) can
be raised between any two of the wrapper's own steps: whichever it came out
of, `_Call.rescue` puts the caller's context back and ends the span.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
from collections.abc import AsyncGenerator, Callable, Generator
from types import MappingProxyType, TracebackType
from typing import Any, Final

from opentelemetry import trace as trace_api
from opentelemetry.context import Context
from opentelemetry.trace import Span

from flow_xray import attributes as attr
from flow_xray.llm.usage import Usage
from flow_xray.runtime import context as runtime_context
from flow_xray.runtime.tracer import EndCall, StartCall, call_recorder_of, current_tracer
from flow_xray.serialize.exceptions import FrameText, source_path
from flow_xray.serialize.limits import Limits, get_limits
from flow_xray.serialize.reprs import Reprs
from flow_xray.serialize.secrets import name_pattern
from flow_xray.serialize.text import writable
from flow_xray.tracing.binding import Binder, make_binder
from flow_xray.tracing.options import TraceOptions
from flow_xray.tracing.recording import (
    api_call_recorder,
    contained,
    input_attributes,
    is_failure,
    output_attributes,
    record_error,
    record_result,
    record_stopped,
    stopped_outcome,
    user_attributes,
)
from flow_xray.tracing.yielded import Yielded

_OPERATIONS: Final = MappingProxyType(
    {
        "llm": "chat",
        "embedding": "embeddings",
        "tool": "execute_tool",
        "agent": "invoke_agent",
    }
)


class _Spec:
    """Everything fixed at decoration time for one traced function."""

    __slots__ = (
        "binder",
        "capture_output",
        "is_llm",
        "name",
        "recorder",
        "redact",
        "redacting",
        "static_attributes",
    )

    def __init__(self, func: Callable[..., Any], options: TraceOptions) -> None:
        self.name = writable(options.name or _default_name(func))
        self.redact = options.redact
        # (the process's limits, the same with ``redact`` names added), made when they change.
        self.redacting: tuple[Limits, Limits] | None = None
        self.capture_output = options.capture_output
        self.is_llm = options.kind == "llm"
        self.binder: Binder | None = (
            make_binder(func, options.exclude) if options.capture_input else None
        )
        static: dict[str, Any] = {
            attr.SPAN_KIND: options.kind.upper(),
            attr.CODE_FUNCTION: writable(str(getattr(func, "__qualname__", self.name))),
        }
        code = getattr(inspect.unwrap(func), "__code__", None)
        if code is not None:
            static[attr.CODE_FILE] = writable(source_path(code.co_filename))
            static[attr.CODE_LINE] = code.co_firstlineno
        if options.kind in _OPERATIONS:
            static[attr.GEN_AI_OPERATION_NAME] = _OPERATIONS[options.kind]
        static.update(user_attributes(options.attributes))
        self.static_attributes = static
        # (the tracer used last, how it starts and ends this function's calls: `recorder_for`)
        self.recorder: tuple[object, StartCall, EndCall] | None = None

    def begin(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> _Call | None:
        """Start a span for one call; None when tracing is off or the span cannot start.

        The inputs are encoded first and the span starts with them and the
        static attributes in one step (`recorder_for`).
        """
        tracer = current_tracer()
        if tracer is None:
            return None
        used = 0
        reprs: Reprs = {}
        limits = self.limits() if self.redact else None
        inputs = None
        if self.binder is not None:
            inputs = input_attributes(self.binder, args, kwargs, self.is_llm, reprs, limits)
            if inputs is not None:
                used = len(inputs[attr.INPUT_VALUE])
        try:
            recorder = self.recorder
            if recorder is None or recorder[0] is not tracer:
                recorder = self.recorder = self.recorder_for(tracer)
            # (made first: nothing can be raised between the span's start and `_Call.rescue`)
            call = _Call(self, used, reprs, limits, recorder[2])
            call.span, call.context = recorder[1](inputs)
        except BaseException:
            contained("a span start")
            return None
        return call

    def recorder_for(self, tracer: trace_api.Tracer) -> tuple[object, StartCall, EndCall]:
        """How this function's calls start and end on ``tracer``: the tracer's own one-step
        start and end where it has them (the local recorder's), else the API's calls."""
        name, static = self.name, self.static_attributes
        own = call_recorder_of(tracer, name, static)
        return (tracer, *(own or api_call_recorder(tracer, name, static)))

    def limits(self) -> Limits:
        """The process's limits with this function's ``redact=`` names added (kept until the
        process's limits change)."""
        base = get_limits()
        pair = self.redacting
        if pair is None or pair[0] is not base:
            patterns = (*base.redact_patterns, *map(name_pattern, self.redact))
            pair = self.redacting = (base, dataclasses.replace(base, redact_patterns=patterns))
        return pair[1]


class _Call:
    """One traced call in flight. Each finishing method ends the span exactly once."""

    __slots__ = ("context", "end_call", "frames", "limits", "reprs", "span", "spec", "used")
    span: Span
    context: Context  # the caller's context with the span current

    def __init__(
        self, spec: _Spec, used: int, reprs: Reprs, limits: Limits | None, end_call: EndCall
    ) -> None:
        self.spec = spec
        self.end_call = end_call  # the tracer's one-step end, or the API's (`end_span`)
        self.limits = limits  # the function's own (``redact=``); None: the process's
        self.used = used  # bytes of the span's content budget taken by the inputs
        # The call's repr cache: inputs, output and error share it (see `Reprs`).
        self.reprs = reprs

    def enter(self) -> object:
        return _attach(self.context)

    @staticmethod
    def exit(token: object) -> None:
        _detach(token)  # type: ignore[arg-type]

    def succeed(self, value: Any, usage: Usage | None = None) -> None:
        """Record usage first (so it survives size limits), then the output; end, OK.

        ``usage`` is what a generator's yielded stream events added up to. A
        returned LLM stream ends the span later, when its reader finishes it.
        """
        span = self.span
        output = None
        recording = span.is_recording()  # not when the function ended its own span
        if recording:
            ends_later = record_result(span, value, usage, self.spec.is_llm)
            if self.spec.capture_output:
                output = output_attributes(value, self.used, self.reprs, self.limits)
            if ends_later:
                if output:
                    try:
                        span.set_attributes(output)
                    except BaseException:
                        contained("output")
                return
        try:  # (`_end`, inline: every call ends here)
            self.end_call(span, output, recording)
        except BaseException:
            contained("a span end")

    def fail(self, exc: BaseException) -> None:
        outcome = stopped_outcome(exc)
        if outcome is not None:  # cancelled or interrupted: not a failure, and incomplete
            record_stopped(self.span, exc, outcome)
        elif is_failure(exc):
            # Kept for the traced calls further out (`_formatted_below`): set only on failure.
            self.frames = record_error(self.span, exc, self.reprs, _formatted_below)
        self._end()

    def abandon(self, partial_output: Any) -> None:
        """A generator closed before exhaustion: incomplete, with what it yielded so far."""
        output: dict[str, Any] = {attr.INCOMPLETE: True}
        if self.spec.capture_output and self.span.is_recording():
            output.update(
                output_attributes(partial_output, self.used, self.reprs, self.limits) or ()
            )
        self._end(output)

    def _end(self, attributes: dict[str, Any] | None = None, ok: bool = False) -> None:
        try:
            self.end_call(self.span, attributes, ok)
        except BaseException:
            contained("a span end")

    def rescue(self, token: object, exc: BaseException) -> None:
        """``exc`` is leaving the wrapper: what its own steps left undone if it was raised
        in one of them rather than in the function (a signal's: Ctrl-C lands anywhere) —
        the caller's context back, the span ended as stopped. After the function's own
        exception (already recorded) there is nothing left."""
        if token is not None:
            _restore(token, self.context)  # type: ignore[arg-type]
        if self.span.is_recording():
            self.fail(exc)


class _Untraced(_Call):
    """Stands in for a call when tracing is off: every hook does nothing."""

    def __init__(self) -> None:
        pass

    def enter(self) -> object:
        return None

    @staticmethod
    def exit(token: object) -> None:
        pass

    def succeed(self, value: Any, usage: Usage | None = None) -> None:
        pass

    def fail(self, exc: BaseException) -> None:
        pass

    def abandon(self, partial_output: Any) -> None:
        pass

    def rescue(self, token: object, exc: BaseException) -> None:
        pass


_UNTRACED: Final = _Untraced()
# (module globals: a traced call attaches and detaches its context without a method call)
_attach: Final = runtime_context.attach
_detach: Final = runtime_context.detach
_restore: Final = runtime_context.restore
_WRAPPER_FILE: Final = __file__


def _formatted_below(entry: TracebackType) -> FrameText | None:
    """The frames an inner traced call formatted for this exception, when ``entry`` is its
    wrapper's frame; else None.

    The inner call keeps them on its `_Call` (a local of its wrapper frame,
    which the traceback keeps alive exactly as long as the exception), so the
    frames below are never formatted twice and nothing outlives the traceback.
    """
    frame = entry.tb_frame
    code = frame.f_code
    if code.co_name != "traced" or code.co_filename != _WRAPPER_FILE:
        return None
    call = frame.f_locals.get("call")
    found = getattr(call, "frames", None) if isinstance(call, _Call) else None
    return found if isinstance(found, FrameText) and found.head == id(entry) else None


def _default_name(func: Callable[..., Any]) -> str:
    qualname = getattr(func, "__qualname__", None) or getattr(func, "__name__", None) or repr(func)
    return str(qualname)


def wrap(func: Callable[..., Any], options: TraceOptions) -> Callable[..., Any]:
    """Return ``func`` wrapped so that each call is a span (see `flow_xray.tracing.api.Trace`)."""
    if isinstance(func, (classmethod, staticmethod)):
        return type(func)(wrap(func.__func__, options))
    spec = _Spec(func, options)
    if inspect.isasyncgenfunction(func):
        wrapper = _wrap_async_generator(func, spec)
    elif inspect.isgeneratorfunction(func):
        wrapper = _wrap_generator(func, spec)
    elif inspect.iscoroutinefunction(func):
        wrapper = _wrap_coroutine(func, spec)
    else:
        wrapper = _wrap_function(func, spec)
    return functools.wraps(func)(wrapper)


def _wrap_function(func: Callable[..., Any], spec: _Spec) -> Callable[..., Any]:
    def traced(*args: Any, **kwargs: Any) -> Any:
        call = spec.begin(args, kwargs)
        if call is None:
            return func(*args, **kwargs)
        token = None
        try:  # (see `_Call.rescue`)
            token = _attach(call.context)
            try:
                value = func(*args, **kwargs)
            except BaseException as exc:
                _detach(token)
                call.fail(exc)
                raise
            _detach(token)
            call.succeed(value)
        except BaseException as exc:
            call.rescue(token, exc)
            raise
        return value

    return traced


def _wrap_coroutine(func: Callable[..., Any], spec: _Spec) -> Callable[..., Any]:
    async def traced(*args: Any, **kwargs: Any) -> Any:
        call = spec.begin(args, kwargs)
        if call is None:
            return await func(*args, **kwargs)
        token = None
        try:  # (see `_Call.rescue`)
            token = _attach(call.context)
            try:
                value = await func(*args, **kwargs)
            except BaseException as exc:
                _detach(token)
                call.fail(exc)
                raise
            _detach(token)
            call.succeed(value)
        except BaseException as exc:
            call.rescue(token, exc)
            raise
        return value

    return traced


def _wrap_generator(func: Callable[..., Any], spec: _Spec) -> Callable[..., Any]:
    def traced(*args: Any, **kwargs: Any) -> Generator[Any, Any, Any]:
        call = spec.begin(args, kwargs)
        if call is None:
            return (yield from func(*args, **kwargs))
        token = None
        try:  # (see `_Call.rescue`)
            gen = func(*args, **kwargs)
            yielded = Yielded(spec.capture_output, True, call.limits, call.reprs)
            send: Callable[[Any], Any] = gen.send
            arg: Any = None
            while True:
                token = call.enter()
                try:
                    held = [send(arg)]
                except StopIteration as stop:
                    call.exit(token)
                    call.succeed(yielded.output(stop.value), usage=yielded.usage())
                    return stop.value
                except BaseException as exc:
                    call.exit(token)
                    call.fail(exc)
                    raise
                call.exit(token)
                yielded.add(held[0])
                try:
                    arg = yield held.pop()  # no local keeps the item while suspended
                except GeneratorExit:
                    token = call.enter()
                    try:
                        gen.close()
                    except BaseException as exc:
                        call.exit(token)
                        call.fail(exc)
                        raise
                    call.exit(token)
                    call.abandon(yielded.output())
                    raise
                except BaseException as exc:  # thrown in by the consumer: pass it on
                    send, arg = gen.throw, exc
                else:
                    send = gen.send
        except BaseException as exc:
            call.rescue(token, exc)
            raise

    return traced


def _wrap_async_generator(func: Callable[..., Any], spec: _Spec) -> Callable[..., Any]:
    async def traced(*args: Any, **kwargs: Any) -> AsyncGenerator[Any, Any]:
        # Untraced, the same loop runs with a no-op call so asend/athrow still pass through.
        call = spec.begin(args, kwargs) or _UNTRACED
        token = None
        try:  # (see `_Call.rescue`)
            agen = func(*args, **kwargs)
            traced_call = call is not _UNTRACED
            limits, reprs = (call.limits, call.reprs) if traced_call else (None, None)
            yielded = Yielded(spec.capture_output and traced_call, traced_call, limits, reprs)
            send: Callable[[Any], Any] = agen.asend
            arg: Any = None
            while True:
                token = call.enter()
                try:
                    held = [await send(arg)]
                except StopAsyncIteration:
                    call.exit(token)
                    call.succeed(yielded.output(), usage=yielded.usage())
                    return
                except BaseException as exc:
                    call.exit(token)
                    call.fail(exc)
                    raise
                call.exit(token)
                yielded.add(held[0])
                try:
                    arg = yield held.pop()  # no local keeps the item while suspended
                except GeneratorExit:
                    token = call.enter()
                    try:
                        await agen.aclose()
                    except BaseException as exc:
                        call.exit(token)
                        call.fail(exc)
                        raise
                    call.exit(token)
                    call.abandon(yielded.output())
                    raise
                except BaseException as exc:
                    send, arg = agen.athrow, exc
                else:
                    send = agen.asend
        except BaseException as exc:
            call.rescue(token, exc)
            raise

    return traced
