"""Which provider is in use, and which tracer ``@trace`` uses (OpenTelemetry API only).

The decorator uses only the OpenTelemetry API, so it works under whatever
provider the user configured. But a span started inside ``trace.capture()``
must reach flow-xray's collecting processor, which lives on the SDK side
(`flow_xray.sdk`), even when the user configured no provider at all. So the
SDK side registers two things here when a capture first opens, and this
module never imports the SDK:

- the *private provider*: an SDK provider (never made global) whose tracer
  ``@trace`` uses while no provider is global **and** a capture is listening
  in the current context (or process-wide). Outside every capture, with no
  provider configured, `current_tracer` returns None and a traced call costs
  well under a microsecond, however many captures came and went before;
- the *join hook*: called once per newly seen global provider while a capture
  is open, so a provider a program installs mid-capture (a script under
  ``flow-xray run`` that sets up its own OpenTelemetry) is joined, not replaced.

`provider_in_use` is the one answer to "which provider do spans started now
go through": the global one once one is set, else the private one.

Other instrumentations (OpenInference, the official OpenAI instrumentation,
a provider SDK's own spans) usually take their tracer from the global API
before any provider exists, and get a `ProxyTracer`, which records nothing
until a provider is set globally. So that their spans are in a capture's tree
whether or not a provider is configured or export asked for, the private
provider also serves proxy tracers: while no provider is global and a capture
listens, a proxy tracer starts its spans on it (the `PROXY_FALLBACK` patch).
It never binds the proxy to it: once the program sets a global provider,
proxies bind to that one as the API intends, the provider's exporters get
every span from then on, and it is joined like any other.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping
from typing import Any, Final

from opentelemetry import trace as trace_api
from opentelemetry.context import Context
from opentelemetry.trace import NoOpTracer, ProxyTracer, ProxyTracerProvider

from flow_xray import __version__, attributes as attr
from flow_xray.interrupts import let_signals_through
from flow_xray.runtime import captures, patches
from flow_xray.runtime.captures import _ACTIVE, capturing, listening

logger = logging.getLogger("flow_xray")

TRACER_NAME: Final = attr.TRACER_NAME

_private: object | None = None  # a TracerProvider, registered by the SDK side
_join_hook: Callable[[object], object] | None = None
_UNKNOWN: Final = object()
_PROVIDER_FROM_ENV: Final = "OTEL_PYTHON_TRACER_PROVIDER" in os.environ
# (global provider seen, private provider seen, tracer or None, tracer comes from the private one)
_cache: tuple[object, object, trace_api.Tracer | None, bool] = (_UNKNOWN, None, None, False)
# The current context's captures, read on every traced call: a bound method called
# directly is quicker than looking ``get`` up on an imported name each time.
_active_captures: Final = _ACTIVE.get


def set_private_provider(provider: object | None) -> None:
    """Use ``provider`` (flow-xray's private SDK provider) inside captures when none is global.

    Proxy tracers handed out by the API before a provider existed use it too
    (`PROXY_FALLBACK`, installed here).
    """
    global _private
    _private = provider
    if provider is not None:
        patches.install(PROXY_FALLBACK)


def private_provider() -> object | None:
    """The private provider the SDK side registered (None before the first capture)."""
    return _private


def set_join_hook(hook: Callable[[object], object] | None) -> None:
    """Call ``hook(provider)`` when a newly set global provider is first seen during a capture."""
    global _join_hook
    _join_hook = hook


def provider_in_use(seen: object = _UNKNOWN) -> tuple[object | None, bool]:
    """The provider spans started now go through, and whether it is flow-xray's private one.

    The provider set globally once one is (the API's proxy provider does not
    count; one named by ``OTEL_PYTHON_TRACER_PROVIDER`` is loaded here); else
    the private provider, which is None before the first capture. ``seen`` is
    the API's global as the caller already read it.
    """
    provider = getattr(trace_api, "_TRACER_PROVIDER", _UNKNOWN) if seen is _UNKNOWN else seen
    if provider is _UNKNOWN or (provider is None and _PROVIDER_FROM_ENV):
        provider = trace_api.get_tracer_provider()
    if provider is None or isinstance(provider, ProxyTracerProvider):
        return _private, True
    return provider, False


# How ``@trace`` starts a call's span: given the call's input attributes (or None), the span
# started with the function's static attributes and those, and the context that makes it
# current (for the caller to attach). May raise: the call then runs untraced.
StartCall = Callable[["Mapping[str, Any] | None"], "tuple[trace_api.Span, Context]"]
# How ``@trace`` ends a call's span: attributes set, status OK when asked, ended; never raises.
EndCall = Callable[[trace_api.Span, "Mapping[str, Any] | None", bool], None]


def call_recorder_of(
    tracer: object, name: str, static: Mapping[str, Any]
) -> tuple[StartCall, EndCall] | None:
    """The tracer's own one-step start and end of ``@trace``'s calls of one function (its
    ``call_recorder(name, static)``: the local recorder has one, see `flow_xray.sdk.local`),
    or None: then the API's calls (`flow_xray.tracing.recording.api_call_recorder`).
    ``static`` are the function's attributes, the same for each of its calls."""
    # Looked up on the class: a test double (``unittest.mock``) answers any attribute.
    make = getattr(type(tracer), "call_recorder", None)
    return make(tracer, name, static) if callable(make) else None


def current_tracer() -> trace_api.Tracer | None:
    """Return the tracer for a call starting now, or None when no span would be collected.

    None means: no global provider and no capture listening here, or a disabled
    SDK (``OTEL_SDK_DISABLED``). Callers then skip all span work.
    """
    global _cache, _resolving
    # The API's get_tracer_provider() looks up an environment variable on every
    # call while no provider is set; reading the global directly avoids that.
    provider: object = getattr(trace_api, "_TRACER_PROVIDER", _UNKNOWN)
    seen, private_seen, tracer, private = _cache
    if provider is not seen or _private is not private_seen:
        if _resolving:  # asked again from inside (see `_resolve`): untraced
            return None
        try:  # (set inside: the finally resets it whatever is raised where)
            _resolving = True
            tracer, private = _resolve(provider)
        finally:
            _resolving = False
        _cache = (provider, _private, tracer, private)
    # `captures.listening()`, inlined: this runs on every traced call.
    if private and not (captures._process_wide or _active_captures()):
        return None  # the private provider serves captures only
    return tracer


# Whether `_resolve` is running (process-wide: another thread's traced call made meanwhile
# runs untraced too; it runs once per provider change).
_resolving = False


def _resolve(seen: object) -> tuple[trace_api.Tracer | None, bool]:
    """The tracer for ``seen`` (the global provider) and whether it is the private one.

    A traced call made while this runs -- by a finalizer the garbage collector runs
    inside the SDK's ``get_tracer``, which holds its lock while it allocates -- runs
    untraced (`current_tracer`) instead of waiting for that lock forever.
    """
    provider, private = provider_in_use(seen)
    if not private and _join_hook is not None and capturing():
        try:
            _join_hook(provider)
        except Exception:
            let_signals_through()
            logger.debug("flow-xray could not join a new provider", exc_info=True)
    if provider is None:
        return None, private
    tracer = provider.get_tracer(TRACER_NAME, __version__)  # type: ignore[attr-defined]
    return (None if isinstance(tracer, NoOpTracer) else tracer), private


# --- other instrumentations' tracers ------------------------------------------

_FALLBACK_SLOT: Final = "_flow_xray_fallback"


def _proxy_fallback(original: Any) -> property | None:
    """``ProxyTracer._tracer`` starting spans on the private provider inside captures.

    A `ProxyTracer` is what ``trace.get_tracer()`` returns while no provider is
    global; it delegates to the global provider once one is set and to a no-op
    tracer until then. This keeps that behaviour and changes only the no-op
    case: while a capture listens in the current context and the private
    provider is registered, the proxy's spans go to it (without binding the
    proxy to it). When a proxy first binds to a global provider during a
    capture, that provider is joined. None when this OpenTelemetry API has no
    such property (spans then stay untraced, as before).
    """
    if not isinstance(original, property) or original.fget is None:
        return None
    resolve = original.fget

    def _tracer(proxy: ProxyTracer) -> trace_api.Tracer:
        bound = getattr(proxy, "_real_tracer", None) is not None
        tracer: trace_api.Tracer = resolve(proxy)
        if not isinstance(tracer, NoOpTracer):
            if not bound and _join_hook is not None and capturing():
                _join_global()
            return tracer
        private = _private
        if private is None or not listening():
            return tracer
        cached = proxy.__dict__.get(_FALLBACK_SLOT)
        if cached is None or cached[0] is not private:
            cached = (private, _fallback_tracer(proxy, private))
            proxy.__dict__[_FALLBACK_SLOT] = cached
        return cached[1] or tracer

    return property(_tracer)


PROXY_FALLBACK: Final = patches.AttributePatch(
    "ProxyTracer._tracer", lambda: ProxyTracer, {"_tracer": _proxy_fallback}
)


def _fallback_tracer(proxy: ProxyTracer, provider: object) -> trace_api.Tracer | None:
    try:
        tracer = provider.get_tracer(  # type: ignore[attr-defined]
            getattr(proxy, "_instrumenting_module_name", "unknown"),
            getattr(proxy, "_instrumenting_library_version", None),
            getattr(proxy, "_schema_url", None),
            getattr(proxy, "_attributes", None),
        )
    except Exception:
        let_signals_through()
        logger.debug("flow-xray could not get a fallback tracer", exc_info=True)
        return None
    return None if isinstance(tracer, NoOpTracer) else tracer


def _join_global() -> None:
    provider, private = provider_in_use()
    if private or _join_hook is None:
        return
    try:
        _join_hook(provider)
    except Exception:
        let_signals_through()
        logger.debug("flow-xray could not join a new provider", exc_info=True)
