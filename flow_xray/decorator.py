"""The ``@trace`` wrapper: one call becomes one OpenTelemetry span.

Only the OpenTelemetry *API* is used here, so spans go to whatever provider
the user configured. When no SDK provider is global, `flow_xray.capture`
registers a private provider as the fallback (it is never made global).

Everything done while recording is contained: a failing ``__repr__``, a
cyclic object, an exporter error never reaches user code, and the user's
return value or exception passes through as the same object.
"""

from __future__ import annotations

import functools
import inspect
import logging
import os
import traceback
from collections.abc import AsyncGenerator, Callable, Generator, Mapping, Sequence
from typing import Any, Final

from opentelemetry import context as context_api
from opentelemetry import trace as trace_api
from opentelemetry.trace import NoOpTracer, ProxyTracerProvider, Span, Status, StatusCode

from flow_xray import attributes as attr
from flow_xray.llm import usage_attributes, usage_from_response
from flow_xray.serialize import (
    Limits,
    encode_inputs,
    encode_output,
    get_limits,
    safe_repr,
    to_jsonable,
)

logger = logging.getLogger("flow_xray")

TRACER_NAME: Final = "flow_xray"
_OPERATIONS: Final = {
    "llm": "chat",
    "embedding": "embeddings",
    "tool": "execute_tool",
    "agent": "invoke_agent",
}
_MAX_TRACEBACK_CHARS: Final = 32_768

# --- which tracer ------------------------------------------------------------

_fallback_provider: trace_api.TracerProvider | None = None
# (provider the tracer came from, tracer or None when spans would not record)
_tracer_cache: tuple[object, trace_api.Tracer | None] = (object(), None)


def set_fallback_provider(provider: trace_api.TracerProvider | None) -> None:
    """Use ``provider`` while no provider is set globally (flow-xray's private one)."""
    global _fallback_provider
    _fallback_provider = provider


def current_tracer() -> trace_api.Tracer | None:
    """Return the tracer to use now, or None when no span could record.

    None means: no global provider and no fallback, or a disabled SDK
    (``OTEL_SDK_DISABLED``). Callers then skip all span work, which keeps a
    disabled ``@trace`` under a microsecond.
    """
    global _tracer_cache
    # The API's get_tracer_provider() looks up an environment variable on every
    # call while no provider is set; reading the global directly avoids that on
    # the hot path. A provider named by OTEL_PYTHON_TRACER_PROVIDER is loaded once.
    provider: object = getattr(trace_api, "_TRACER_PROVIDER", _UNKNOWN)
    if provider is _UNKNOWN or (provider is None and _PROVIDER_FROM_ENV):
        provider = trace_api.get_tracer_provider()
    if provider is None or isinstance(provider, ProxyTracerProvider):
        provider = _fallback_provider
    cached_provider, tracer = _tracer_cache
    if provider is cached_provider:
        return tracer
    if provider is None:
        tracer = None
    else:
        from flow_xray import __version__

        tracer = provider.get_tracer(TRACER_NAME, __version__)  # type: ignore[attr-defined]
        if isinstance(tracer, NoOpTracer):
            tracer = None
    _tracer_cache = (provider, tracer)
    return tracer


_UNKNOWN: Final = object()
_PROVIDER_FROM_ENV: Final = "OTEL_PYTHON_TRACER_PROVIDER" in os.environ


# --- recording helpers (never raise) -----------------------------------------


def _contained(what: str) -> None:
    logger.debug("flow-xray could not record %s", what, exc_info=True)


def record_usage_from(span: Span, value: Any) -> None:
    """Record tokens, model and cost when ``value`` looks like an LLM response."""
    try:
        usage = usage_from_response(value)
        if usage is not None:
            span.set_attributes(usage_attributes(usage))
    except Exception:
        _contained("LLM usage")


def record_error(span: Span, exc: BaseException) -> None:
    """Mark ``span`` failed: status ERROR ``Type: message``, ``error.type``, an exception event."""
    try:
        type_name = type(exc).__qualname__
        try:
            message = str(exc)[:2048]
        except Exception:
            message = safe_repr(exc, 2048)
        module = type(exc).__module__
        full_type = type_name if module == "builtins" else f"{module}.{type_name}"
        try:
            stack = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        except Exception:
            stack = f"{type_name}: {message}"
        if len(stack) > _MAX_TRACEBACK_CHARS:
            stack = "…[truncated]\n" + stack[-_MAX_TRACEBACK_CHARS:]
        span.set_attribute(attr.ERROR_TYPE, full_type)
        span.add_event(
            attr.EXCEPTION_EVENT,
            {
                attr.EXCEPTION_TYPE: full_type,
                attr.EXCEPTION_MESSAGE: message,
                attr.EXCEPTION_STACKTRACE: stack,
                "exception.escaped": True,
            },
        )
        span.set_status(
            Status(StatusCode.ERROR, f"{type_name}: {message}" if message else type_name)
        )
    except Exception:
        _contained("an exception")


def _is_failure(exc: BaseException) -> bool:
    """Whether an exception leaving a call means the call failed."""
    if isinstance(exc, GeneratorExit):
        return False
    if isinstance(exc, SystemExit):
        return exc.code not in (None, 0)
    return True


# --- argument binding ---------------------------------------------------------

Binder = Callable[[tuple[Any, ...], dict[str, Any]], dict[str, Any]]


def make_binder(func: Callable[..., Any], exclude: Sequence[str]) -> Binder:
    """Return a fast ``(args, kwargs) -> {name: value}`` with defaults applied.

    ``self``/``cls`` and the ``exclude`` names are left out. Plain
    positional-or-keyword signatures (the common case) skip
    ``inspect.Signature.bind``, which costs several microseconds.
    """
    try:
        signature = inspect.signature(func)
    except (TypeError, ValueError):
        return lambda args, kwargs: {"args": list(args), **kwargs}
    params = list(signature.parameters.values())
    skip = set(exclude)
    if (
        params
        and params[0].name in ("self", "cls")
        and params[0].kind
        in (
            inspect.Parameter.POSITIONAL_ONLY,
            inspect.Parameter.POSITIONAL_OR_KEYWORD,
        )
    ):
        skip.add(params[0].name)

    def bind_general(args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
        try:
            bound = signature.bind_partial(*args, **kwargs)
        except TypeError:
            # The call itself is wrong; the function will raise. Record what was passed.
            return {"args": list(args), **kwargs}
        bound.apply_defaults()
        return {k: v for k, v in bound.arguments.items() if k not in skip}

    if not all(p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD for p in params):
        return bind_general

    names = tuple(p.name for p in params)
    defaults = {p.name: p.default for p in params if p.default is not p.empty}
    keep = tuple((i, n) for i, n in enumerate(names) if n not in skip)

    def bind_simple(args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
        n_args = len(args)
        if n_args > len(names):
            return bind_general(args, kwargs)
        out: dict[str, Any] = {}
        for i, name in keep:
            if i < n_args:
                out[name] = args[i]
            elif name in kwargs:
                out[name] = kwargs[name]
            elif name in defaults:
                out[name] = defaults[name]
        return out

    return bind_simple


# --- the wrapper ---------------------------------------------------------------


class _Spec:
    """Everything fixed at decoration time for one traced function."""

    __slots__ = (
        "binder",
        "capture_input",
        "capture_output",
        "is_llm",
        "name",
        "static_attributes",
    )

    def __init__(
        self,
        func: Callable[..., Any],
        name: str | None,
        kind: str,
        capture_input: bool,
        capture_output: bool,
        exclude: Sequence[str],
        attributes: Mapping[str, Any] | None,
    ) -> None:
        self.name = name or _default_name(func)
        self.capture_input = capture_input
        self.capture_output = capture_output
        self.is_llm = kind == "llm"
        self.binder = make_binder(func, exclude) if capture_input else None
        static: dict[str, Any] = {
            attr.SPAN_KIND: kind.upper(),
            attr.CODE_FUNCTION: getattr(func, "__qualname__", self.name),
        }
        code = getattr(inspect.unwrap(func), "__code__", None)
        if code is not None:
            static[attr.CODE_FILE] = code.co_filename
            static[attr.CODE_LINE] = code.co_firstlineno
        if kind in _OPERATIONS:
            static[attr.GEN_AI_OPERATION_NAME] = _OPERATIONS[kind]
        for key, value in (attributes or {}).items():
            static[str(key)] = _attribute_value(value)
        self.static_attributes = static

    def start(
        self, tracer: trace_api.Tracer, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> tuple[Span, int]:
        """Start the span under the current context and record inputs; return (span, bytes used)."""
        span = tracer.start_span(self.name, attributes=self.static_attributes)
        used = 0
        if self.binder is not None and span.is_recording():
            try:
                limits = get_limits()
                text = encode_inputs(self.binder(args, kwargs), limits, limits.max_value_bytes)
                span.set_attribute(attr.INPUT_VALUE, text)
                span.set_attribute(attr.INPUT_MIME_TYPE, attr.MIME_JSON)
                used = len(text)
            except Exception:
                _contained("inputs")
        return span, used

    def finish_ok(self, span: Span, value: Any, used: int) -> None:
        """Record usage (before content, so it survives limits) and the output."""
        if not span.is_recording():
            return
        if self.is_llm:
            record_usage_from(span, value)
        if self.capture_output:
            record_output(span, value, used)


def record_output(span: Span, value: Any, used: int) -> None:
    """Write ``output.value`` within the per-value cap and what is left of the span budget."""
    try:
        limits: Limits = get_limits()
        budget = max(256, min(limits.max_value_bytes, limits.max_span_bytes - used))
        text, mime = encode_output(value, limits, budget)
        span.set_attribute(attr.OUTPUT_VALUE, text)
        span.set_attribute(attr.OUTPUT_MIME_TYPE, mime)
    except Exception:
        _contained("output")


def _default_name(func: Callable[..., Any]) -> str:
    qualname = getattr(func, "__qualname__", None) or getattr(func, "__name__", None) or repr(func)
    return str(qualname).rpartition(".<locals>.")[2]


def _attribute_value(value: Any) -> Any:
    if isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, (list, tuple)) and all(
        isinstance(v, (str, bool, int, float)) for v in value
    ):
        return list(value)
    import json

    return json.dumps(to_jsonable(value, get_limits()), ensure_ascii=False)


def wrap(
    func: Callable[..., Any],
    *,
    name: str | None = None,
    kind: str = "chain",
    capture_input: bool = True,
    capture_output: bool = True,
    exclude: Sequence[str] = (),
    attributes: Mapping[str, Any] | None = None,
) -> Callable[..., Any]:
    """Return ``func`` wrapped so that each call is a span (see `flow_xray.api.trace`)."""
    if isinstance(func, (classmethod, staticmethod)):
        inner = wrap(
            func.__func__,
            name=name,
            kind=kind,
            capture_input=capture_input,
            capture_output=capture_output,
            exclude=exclude,
            attributes=attributes,
        )
        return type(func)(inner)
    spec = _Spec(func, name, kind, capture_input, capture_output, exclude, attributes)
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
        tracer = current_tracer()
        if tracer is None:
            return func(*args, **kwargs)
        span, used = spec.start(tracer, args, kwargs)
        token = context_api.attach(trace_api.set_span_in_context(span))
        try:
            value = func(*args, **kwargs)
        except BaseException as exc:
            if _is_failure(exc):
                record_error(span, exc)
            raise
        else:
            spec.finish_ok(span, value, used)
            return value
        finally:
            context_api.detach(token)
            span.end()

    return traced


def _wrap_coroutine(func: Callable[..., Any], spec: _Spec) -> Callable[..., Any]:
    async def traced(*args: Any, **kwargs: Any) -> Any:
        tracer = current_tracer()
        if tracer is None:
            return await func(*args, **kwargs)
        span, used = spec.start(tracer, args, kwargs)
        token = context_api.attach(trace_api.set_span_in_context(span))
        try:
            value = await func(*args, **kwargs)
        except BaseException as exc:
            if _is_failure(exc):
                record_error(span, exc)
            raise
        else:
            spec.finish_ok(span, value, used)
            return value
        finally:
            context_api.detach(token)
            span.end()

    return traced


class _Yielded:
    """The items a generator yielded, kept up to the container cap for ``output.value``."""

    __slots__ = ("count", "items", "limit")

    def __init__(self) -> None:
        self.items: list[Any] = []
        self.count = 0
        self.limit = get_limits().max_items

    def add(self, item: Any) -> None:
        self.count += 1
        if self.count <= self.limit:
            self.items.append(item)

    def output(self, returned: Any) -> Any:
        out: dict[str, Any] = {"yielded": self.items, "count": self.count}
        if returned is not None:
            out["returned"] = returned
        return out


def _mark_incomplete(span: Span) -> None:
    try:
        span.set_attribute(attr.INCOMPLETE, True)
    except Exception:
        _contained("incompleteness")


def _wrap_generator(func: Callable[..., Any], spec: _Spec) -> Callable[..., Any]:
    def traced(*args: Any, **kwargs: Any) -> Generator[Any, Any, Any]:
        tracer = current_tracer()
        if tracer is None:
            return (yield from func(*args, **kwargs))
        span, used = spec.start(tracer, args, kwargs)
        ctx = trace_api.set_span_in_context(span)
        yielded = _Yielded()
        gen = func(*args, **kwargs)
        # Drive the generator by hand so the span's context is attached only
        # while the generator body runs, never across a yield to the caller.
        send: Callable[[Any], Any] = gen.send
        arg: Any = None
        try:
            while True:
                token = context_api.attach(ctx)
                try:
                    item = send(arg)
                except StopIteration as stop:
                    spec.finish_ok(span, yielded.output(stop.value), used)
                    return stop.value
                finally:
                    context_api.detach(token)
                yielded.add(item)
                try:
                    arg = yield item
                    send = gen.send
                except GeneratorExit:
                    raise
                except BaseException as exc:  # thrown in by the caller: pass it on
                    send, arg = gen.throw, exc
        except GeneratorExit:
            _mark_incomplete(span)
            if spec.capture_output and span.is_recording():
                record_output(span, yielded.output(None), used)
            token = context_api.attach(ctx)
            try:
                gen.close()
            finally:
                context_api.detach(token)
            raise
        except BaseException as exc:
            if _is_failure(exc):
                record_error(span, exc)
            raise
        finally:
            span.end()

    return traced


def _wrap_async_generator(func: Callable[..., Any], spec: _Spec) -> Callable[..., Any]:
    async def traced(*args: Any, **kwargs: Any) -> AsyncGenerator[Any, Any]:
        tracer = current_tracer()
        agen = func(*args, **kwargs)
        if tracer is None:
            async for item in agen:
                yield item
            return
        span, used = spec.start(tracer, args, kwargs)
        ctx = trace_api.set_span_in_context(span)
        yielded = _Yielded()
        send: Callable[[Any], Any] = agen.asend
        arg: Any = None
        try:
            while True:
                token = context_api.attach(ctx)
                try:
                    item = await send(arg)
                except StopAsyncIteration:
                    spec.finish_ok(span, yielded.output(None), used)
                    return
                finally:
                    context_api.detach(token)
                yielded.add(item)
                try:
                    arg = yield item
                    send = agen.asend
                except GeneratorExit:
                    raise
                except BaseException as exc:
                    send, arg = agen.athrow, exc
        except GeneratorExit:
            _mark_incomplete(span)
            if spec.capture_output and span.is_recording():
                record_output(span, yielded.output(None), used)
            token = context_api.attach(ctx)
            try:
                await agen.aclose()
            finally:
                context_api.detach(token)
            raise
        except BaseException as exc:
            if _is_failure(exc):
                record_error(span, exc)
            raise
        finally:
            span.end()

    return traced
