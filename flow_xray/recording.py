"""What ``@trace`` records on a span, and which tracer it uses — OpenTelemetry API only.

Spans go to whatever provider the user configured. When no SDK provider is
global, `flow_xray.capture` registers a private provider as the fallback
(it is never made global). Every ``record_*`` helper contains its own
failures: recording never raises into user code.
"""

from __future__ import annotations

import inspect
import logging
import os
import traceback
from collections.abc import Callable, Sequence
from typing import Any, Final

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
)

logger = logging.getLogger("flow_xray")

TRACER_NAME: Final = "flow_xray"
_MAX_TRACEBACK_CHARS: Final = 32_768

# --- which tracer ------------------------------------------------------------

_fallback_provider: trace_api.TracerProvider | None = None
# (global provider, fallback provider, tracer or None when spans would not record)
_tracer_cache: tuple[object, object, trace_api.Tracer | None] = (object(), object(), None)


_new_provider_hook: Callable[[object], object] | None = None


def set_new_provider_hook(hook: Callable[[object], object] | None) -> None:
    """Call ``hook(provider)`` when ``@trace`` first sees a newly set global provider.

    `flow_xray.capture` uses it to join a provider the user installs while a
    capture is open (e.g. a script run by ``flow-xray run`` that sets up its
    own OpenTelemetry), instead of replacing it.
    """
    global _new_provider_hook
    _new_provider_hook = hook


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
    global_provider: object = getattr(trace_api, "_TRACER_PROVIDER", _UNKNOWN)
    cached_global, cached_fallback, tracer = _tracer_cache
    if global_provider is cached_global and _fallback_provider is cached_fallback:
        return tracer
    if global_provider is _UNKNOWN or (global_provider is None and _PROVIDER_FROM_ENV):
        global_provider = trace_api.get_tracer_provider()
    provider: object = global_provider
    if provider is None or isinstance(provider, ProxyTracerProvider):
        provider = _fallback_provider
    elif _new_provider_hook is not None:
        try:
            _new_provider_hook(provider)
        except Exception:
            contained("a new provider")
    tracer = None
    if provider is not None:
        from flow_xray import __version__

        tracer = provider.get_tracer(TRACER_NAME, __version__)  # type: ignore[attr-defined]
        if isinstance(tracer, NoOpTracer):
            tracer = None
    _tracer_cache = (global_provider, _fallback_provider, tracer)
    return tracer


_UNKNOWN: Final = object()
_PROVIDER_FROM_ENV: Final = "OTEL_PYTHON_TRACER_PROVIDER" in os.environ


# --- recording helpers (never raise) -----------------------------------------


def contained(what: str) -> None:
    """Log (at debug level) a recording failure that was kept away from user code."""
    logger.debug("flow-xray could not record %s", what, exc_info=True)


def record_usage_from(span: Span, value: Any) -> None:
    """Record tokens, model and cost when ``value`` looks like an LLM response."""
    try:
        usage = usage_from_response(value)
        if usage is not None:
            span.set_attributes(usage_attributes(usage))
    except Exception:
        contained("LLM usage")


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
        contained("an exception")


def is_failure(exc: BaseException) -> bool:
    """Whether an exception leaving a call means the call failed."""
    if isinstance(exc, GeneratorExit):
        return False
    if isinstance(exc, SystemExit):
        return exc.code not in (None, 0)
    return True


Binder = Callable[[tuple[Any, ...], dict[str, Any]], dict[str, Any]]


def record_inputs(span: Span, binder: Binder, args: tuple[Any, ...], kwargs: dict[str, Any]) -> int:
    """Write ``input.value`` (JSON of the bound arguments); return the bytes used."""
    try:
        limits = get_limits()
        text = encode_inputs(binder(args, kwargs), limits, limits.max_value_bytes)
        span.set_attribute(attr.INPUT_VALUE, text)
        span.set_attribute(attr.INPUT_MIME_TYPE, attr.MIME_JSON)
        return len(text)
    except Exception:
        contained("inputs")
        return 0


def record_output(span: Span, value: Any, used: int) -> None:
    """Write ``output.value`` within the per-value cap and what is left of the span budget."""
    try:
        limits: Limits = get_limits()
        budget = max(256, min(limits.max_value_bytes, limits.max_span_bytes - used))
        text, mime = encode_output(value, limits, budget)
        span.set_attribute(attr.OUTPUT_VALUE, text)
        span.set_attribute(attr.OUTPUT_MIME_TYPE, mime)
    except Exception:
        contained("output")


def attribute_value(value: Any) -> Any:
    """A user-supplied static attribute as a valid OpenTelemetry value (JSON text if need be)."""
    if isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, (list, tuple)) and all(
        isinstance(v, (str, bool, int, float)) for v in value
    ):
        return list(value)
    limits = get_limits()
    return encode_output(value, limits, limits.max_value_bytes)[0]


# --- argument binding ---------------------------------------------------------


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
