"""The one owner of tracer state: which tracer ``@trace`` uses, and which captures are open.

Why the API side holds this. The decorator uses only the OpenTelemetry API,
so it works under whatever provider the user configured. But a span started
inside ``trace.capture()`` must reach flow-xray's collecting processor, which
lives on the SDK side (`flow_xray.sdk`), even when the user configured no
provider at all. So the SDK side registers two things here when a capture
first opens, and this module never imports the SDK:

- the *fallback provider*: a private SDK provider (never made global) whose
  tracer ``@trace`` uses while no provider is global **and** a capture is
  listening in the current context (or process-wide). Outside every capture,
  with no provider configured, `current_tracer` returns None and a traced call
  costs well under a microsecond, however many captures came and went before;
- the *join hook*: called once per newly seen global provider while a capture
  is open, so a provider a program installs mid-capture (a script under
  ``flow-xray run`` that sets up its own OpenTelemetry) is joined, not replaced.

It also keeps the open-capture registry, read by the processor's ``on_start``:
the captures active in the current context (a ContextVar, so threads and
asyncio tasks are isolated) plus the process-wide ones (``all_threads=True``).
"""

from __future__ import annotations

import contextvars
import logging
import os
import threading
from collections.abc import Callable
from typing import Any, Final, Protocol

from opentelemetry import trace as trace_api
from opentelemetry.trace import NoOpTracer, ProxyTracerProvider

logger = logging.getLogger("flow_xray")

TRACER_NAME: Final = "flow_xray"


class Listener(Protocol):
    """What the registry holds for one open capture (the SDK side's collector)."""

    closed: bool


# --- open captures ----------------------------------------------------------

_ACTIVE: contextvars.ContextVar[tuple[Listener, ...]] = contextvars.ContextVar(
    "flow_xray_captures", default=()
)
_process_wide: tuple[Listener, ...] = ()
_open_count = 0
_lock = threading.Lock()


def listeners() -> tuple[Listener, ...]:
    """The captures a span started now belongs to: this context's, then the process-wide ones."""
    return _ACTIVE.get() + _process_wide


def capturing() -> bool:
    """Whether any capture is open, in any thread."""
    return _open_count > 0


def open_capture(listener: Listener, all_threads: bool) -> contextvars.Token[Any] | None:
    """Register an open capture; returns the token `close_capture` needs (None if process-wide)."""
    global _process_wide, _open_count
    with _lock:
        _open_count += 1
        if all_threads:
            _process_wide = (*_process_wide, listener)
            return None
    return _ACTIVE.set((*_ACTIVE.get(), listener))


def close_capture(listener: Listener, token: contextvars.Token[Any] | None) -> bool:
    """Unregister a capture; False when it was closed already (nothing changes then)."""
    global _process_wide, _open_count
    if token is not None:
        # Removed by identity rather than ``_ACTIVE.reset(token)``: a reset would
        # also drop captures opened after this one and still open, and closing
        # those later would re-activate this one.
        _ACTIVE.set(tuple(c for c in _ACTIVE.get() if c is not listener))
    with _lock:
        if listener.closed:
            return False
        listener.closed = True
        _open_count -= 1
        _process_wide = tuple(c for c in _process_wide if c is not listener)
    return True


# --- which tracer -------------------------------------------------------------

_fallback: object | None = None  # a TracerProvider, registered by the SDK side
_join_hook: Callable[[object], object] | None = None
_UNKNOWN: Final = object()
_PROVIDER_FROM_ENV: Final = "OTEL_PYTHON_TRACER_PROVIDER" in os.environ
# (global provider seen, fallback seen, tracer or None, tracer comes from the fallback)
_cache: tuple[object, object, trace_api.Tracer | None, bool] = (_UNKNOWN, None, None, False)


def set_fallback_provider(provider: object | None) -> None:
    """Use ``provider`` (flow-xray's private SDK provider) inside captures when none is global."""
    global _fallback
    _fallback = provider


def set_join_hook(hook: Callable[[object], object] | None) -> None:
    """Call ``hook(provider)`` when a newly set global provider is first seen during a capture."""
    global _join_hook
    _join_hook = hook


def current_tracer() -> trace_api.Tracer | None:
    """Return the tracer for a call starting now, or None when no span would be collected.

    None means: no global provider and no capture listening here, or a disabled
    SDK (``OTEL_SDK_DISABLED``). Callers then skip all span work.
    """
    global _cache
    # The API's get_tracer_provider() looks up an environment variable on every
    # call while no provider is set; reading the global directly avoids that.
    provider: object = getattr(trace_api, "_TRACER_PROVIDER", _UNKNOWN)
    seen, fallback_seen, tracer, private = _cache
    if provider is not seen or _fallback is not fallback_seen:
        tracer, private = _resolve(provider)
        _cache = (provider, _fallback, tracer, private)
    if private and not (_process_wide or _ACTIVE.get()):
        return None  # the private provider serves captures only
    return tracer


def _resolve(provider: object) -> tuple[trace_api.Tracer | None, bool]:
    if provider is _UNKNOWN or (provider is None and _PROVIDER_FROM_ENV):
        # A provider named by OTEL_PYTHON_TRACER_PROVIDER is loaded once, here.
        provider = trace_api.get_tracer_provider()
    private = provider is None or isinstance(provider, ProxyTracerProvider)
    if private:
        provider = _fallback
    elif _join_hook is not None and capturing():
        try:
            _join_hook(provider)
        except Exception:
            logger.debug("flow-xray could not join a new provider", exc_info=True)
    if provider is None:
        return None, private
    from flow_xray import __version__

    tracer = provider.get_tracer(TRACER_NAME, __version__)  # type: ignore[attr-defined]
    return (None if isinstance(tracer, NoOpTracer) else tracer), private
