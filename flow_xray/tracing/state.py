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

Other instrumentations (OpenInference, the official OpenAI instrumentation,
a provider SDK's own spans) usually take their tracer from the global API
before any provider exists, and get a `ProxyTracer`, which records nothing
until a provider is set globally. So that their spans are in a capture's tree
whether or not a provider is configured or export asked for, the fallback also
serves proxy tracers: while no provider is global and a capture listens, a
proxy tracer starts its spans on the fallback provider (see
`install_proxy_fallback`). It never binds the proxy to it: once the program sets
a global provider, proxies bind to that one as the API intends, the provider's
exporters get every span from then on, and it is joined like any other.

It also keeps the *usage reports*: which LLM usage figures the spans that
ended inside a still-open span carried (fed by the SDK side's processor), so
that ``@trace`` writing a figure a child span already reported for the same
request writes it as a duplicate (see `flow_xray.llm.usage.duplicate_usage_attributes`)
and backends adding up token counts count the request once.

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
from opentelemetry.trace import NoOpTracer, ProxyTracer, ProxyTracerProvider

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


def forget_after_fork() -> None:
    """In a forked child: the captures open at the fork are the parent's, so close them here.

    Their spans so far are the parent's to report; a child that kept
    collecting into its copies would report them a second time. Registered
    with `os.register_at_fork`; a processes capture's child side opens its
    own capture again afterwards (see `flow_xray.sdk.processes`).
    """
    global _process_wide, _open_count, _lock
    _lock = threading.Lock()  # another thread may have held it at the fork
    for listener in (*_ACTIVE.get(), *_process_wide):
        listener.closed = True
    _ACTIVE.set(())
    _process_wide = ()
    _open_count = 0


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=forget_after_fork)


# --- which tracer -------------------------------------------------------------

_fallback: object | None = None  # a TracerProvider, registered by the SDK side
_join_hook: Callable[[object], object] | None = None
_UNKNOWN: Final = object()
_PROVIDER_FROM_ENV: Final = "OTEL_PYTHON_TRACER_PROVIDER" in os.environ
# (global provider seen, fallback seen, tracer or None, tracer comes from the fallback)
_cache: tuple[object, object, trace_api.Tracer | None, bool] = (_UNKNOWN, None, None, False)


def set_fallback_provider(provider: object | None) -> None:
    """Use ``provider`` (flow-xray's private SDK provider) inside captures when none is global.

    Proxy tracers handed out by the API before a provider existed use it too
    (`install_proxy_fallback`).
    """
    global _fallback
    _fallback = provider
    if provider is not None:
        install_proxy_fallback()


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


# --- other instrumentations' tracers ------------------------------------------

_FALLBACK_SLOT: Final = "_flow_xray_fallback"
_proxy_installed = False


def install_proxy_fallback() -> bool:
    """Let the API's `ProxyTracer` start spans on the fallback provider inside captures.

    A `ProxyTracer` is what ``trace.get_tracer()`` returns while no provider is
    global; it delegates to the global provider once one is set and to a no-op
    tracer until then. This keeps that behaviour and changes only the no-op
    case: while a capture listens in the current context and the fallback
    provider is registered, the proxy's spans go to the fallback (without
    binding the proxy to it). When a proxy first binds to a global provider
    during a capture, that provider is joined. Idempotent; returns False when
    this OpenTelemetry API has no such hook (spans then stay untraced, as before).
    """
    global _proxy_installed
    if _proxy_installed:
        return True
    original = ProxyTracer.__dict__.get("_tracer")
    if not isinstance(original, property) or original.fget is None:
        logger.debug("flow-xray: ProxyTracer has no _tracer property; foreign spans not captured")
        return False
    resolve = original.fget

    def _tracer(proxy: ProxyTracer) -> trace_api.Tracer:
        bound = getattr(proxy, "_real_tracer", None) is not None
        tracer: trace_api.Tracer = resolve(proxy)
        if not isinstance(tracer, NoOpTracer):
            if not bound and _join_hook is not None and capturing():
                _join_global(tracer)
            return tracer
        fallback = _fallback
        if fallback is None or not (_process_wide or _ACTIVE.get()):
            return tracer
        cached = proxy.__dict__.get(_FALLBACK_SLOT)
        if cached is None or cached[0] is not fallback:
            cached = (fallback, _fallback_tracer(proxy, fallback))
            proxy.__dict__[_FALLBACK_SLOT] = cached
        return cached[1] or tracer

    ProxyTracer._tracer = property(_tracer)  # type: ignore[method-assign,assignment]
    _proxy_installed = True
    return True


def _fallback_tracer(proxy: ProxyTracer, provider: object) -> trace_api.Tracer | None:
    try:
        tracer = provider.get_tracer(  # type: ignore[attr-defined]
            getattr(proxy, "_instrumenting_module_name", "unknown"),
            getattr(proxy, "_instrumenting_library_version", None),
            getattr(proxy, "_schema_url", None),
            getattr(proxy, "_attributes", None),
        )
    except Exception:
        logger.debug("flow-xray could not get a fallback tracer", exc_info=True)
        return None
    return None if isinstance(tracer, NoOpTracer) else tracer


def _join_global(tracer: trace_api.Tracer) -> None:
    provider = getattr(trace_api, "_TRACER_PROVIDER", None)
    if provider is None or _join_hook is None:
        return
    try:
        _join_hook(provider)
    except Exception:
        logger.debug("flow-xray could not join a new provider", exc_info=True)


# --- usage reported below open spans -----------------------------------------

# span id -> usage figures of spans that ended inside it. Bounded: a parent that
# never ends here (remote, or dropped) must not keep its entry forever.
_reports: dict[int, list[Any]] = {}
_reports_lock = threading.Lock()
_MAX_REPORTED_SPANS: Final = 4096


#: Whether usage reports wait for their parents (a C-level call: it runs once per span).
usage_pending: Callable[[], int] = _reports.__len__


def span_ended(span_id: int, parent_id: int | None, report: Any | None) -> None:
    """A span ended: hand its own usage report (if any) and those below it to its parent."""
    if not _reports and report is None:
        return
    with _reports_lock:
        below = _reports.pop(span_id, None)
        if parent_id is None or (below is None and report is None):
            return
        reports = _reports.get(parent_id)
        if reports is None:
            if len(_reports) >= _MAX_REPORTED_SPANS:
                del _reports[next(iter(_reports))]
            reports = _reports[parent_id] = []
        if below:
            reports.extend(below)
        if report is not None:
            reports.append(report)


def reported_below(span_id: int) -> tuple[Any, ...]:
    """The usage reports of spans that ended inside span ``span_id`` so far."""
    if not _reports:
        return ()
    with _reports_lock:
        return tuple(_reports.get(span_id, ()))
