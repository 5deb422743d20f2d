"""The patches where work leaves for another process: each hands it the current call.

Installed on first need by a processes capture (`flow_xray.sdk.processes`),
inert unless its `Handover` says collection is on in this process. What each
hook adds is the handover's to decide (`flow_xray.sdk.process_handover`: the
carrier of the current context and the collection channel); the hooks change
nothing else:

- ``subprocess.Popen.__init__``: the child's environment (``env=``, or this
  process's) as `Handover.child_env` gives it;
- ``multiprocessing.process.BaseProcess.start``: the process object takes
  the handover's carrier along (pickled for spawn and forkserver), and its
  ``_bootstrap`` runs the target inside it;
- ``multiprocessing.pool.Pool`` (``apply_async``, ``map``/``starmap`` and
  their async forms, ``imap``, ``imap_unordered``) and
  ``concurrent.futures.ProcessPoolExecutor.submit`` (and so ``map``): the
  callable is wrapped by `Handover.propagated`, so each task runs under the
  call that submitted it.

Other ways of starting a process (``os.system``, ``os.exec*``, ``os.spawn*``)
inherit the process environment: they are collected, as children of the
call the capture itself continues (an incoming ``TRACEPARENT``), or as roots.

In a child, the bootstrap ``sitecustomize`` wraps
``opentelemetry.trace.set_tracer_provider`` before flow-xray can load (it is
standard library only and runs at start-up); `PROVIDER_WATCH` adopts that
wrapper into the registry once flow-xray loads, so shutdown undoes it too.
"""

from __future__ import annotations

import functools
import inspect
import logging
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Final, Protocol

from opentelemetry import trace as trace_api

from flow_xray.runtime import patches

if TYPE_CHECKING:
    import multiprocessing.process
    import subprocess

logger = logging.getLogger("flow_xray")

_CARRIER_SLOT: Final = "_flow_xray_carrier"


class Handover(Protocol):
    """What the hooks do, decided by the SDK side; no method may raise."""

    def active(self) -> bool:
        """Whether work leaving now is handed the current call."""

    def child_env(self, env: Mapping[Any, Any] | None) -> Mapping[Any, Any] | None:
        """The environment for a child started now with ``env`` (None: this process's)."""

    def process_carrier(self) -> object | None:
        """What a `multiprocessing` process takes along (picklable), None for nothing."""

    def attached(self, carrier: object) -> AbstractContextManager[object]:
        """Run the block as a continuation of ``carrier``'s call."""

    def propagated(self, fn: Any) -> Any:
        """``fn`` bound to the current call (``fn`` itself when there is nothing to bind)."""


class _Inert:
    """The handover before the SDK side sets one: hand nothing over."""

    def active(self) -> bool:
        return False


_handover: Handover = _Inert()  # type: ignore[assignment]  # only `active` is ever asked of it


def install(handover: Handover) -> None:
    """Let the hooks act as ``handover`` says, and install them (once; again after shutdown)."""
    global _handover
    _handover = handover
    for patch in (POPEN, PROCESS_START, POOL, PROCESS_POOL_EXECUTOR):
        patches.install(patch)


def _popen_init(original: Callable[..., None]) -> Callable[..., None]:
    # Positional index of ``env`` (after self), read from this Python's signature.
    env_index = list(inspect.signature(original).parameters).index("env") - 1

    @functools.wraps(original)
    def __init__(self: subprocess.Popen[Any], *args: Any, **kwargs: Any) -> None:
        handover = _handover
        if handover.active():
            try:
                if len(args) > env_index:
                    env = handover.child_env(args[env_index])
                    args = (*args[:env_index], env, *args[env_index + 1 :])
                else:
                    kwargs["env"] = handover.child_env(kwargs.get("env"))
            except Exception:  # never stop a program from starting its child
                logger.debug("flow-xray: could not pass the trace context on", exc_info=True)
        original(self, *args, **kwargs)

    return __init__


def _process_start(original: Callable[[Any], None]) -> Callable[[Any], None]:
    @functools.wraps(original)
    def start(self: multiprocessing.process.BaseProcess) -> None:
        handover = _handover
        if handover.active():
            carrier = handover.process_carrier()
            if carrier:
                # An attribute of ours on the process object, pickled with it for spawn.
                setattr(self, _CARRIER_SLOT, carrier)
        original(self)

    return start


def _process_bootstrap(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def _bootstrap(self: multiprocessing.process.BaseProcess, *args: Any, **kwargs: Any) -> Any:
        carrier = getattr(self, _CARRIER_SLOT, None)
        if not carrier:
            return original(self, *args, **kwargs)
        with _handover.attached(carrier):
            return original(self, *args, **kwargs)

    return _bootstrap


def _callable_argument(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def method(self: Any, func: Any, *args: Any, **kwargs: Any) -> Any:
        handover = _handover
        return original(
            self, handover.propagated(func) if handover.active() else func, *args, **kwargs
        )

    return method


# The patched modules load when a processes capture installs the hooks, not before:
# `multiprocessing.pool` and `concurrent.futures.process` alone take milliseconds.


def _popen() -> type:
    import subprocess  # noqa: PLC0415  # loaded on install (see above)

    return subprocess.Popen


def _base_process() -> type:
    from multiprocessing import process  # noqa: PLC0415  # loaded on install (see above)

    return process.BaseProcess


def _pool() -> type:
    from multiprocessing import pool  # noqa: PLC0415  # loaded on install (see above)

    return pool.Pool


def _process_pool_executor() -> type:
    from concurrent.futures import process  # noqa: PLC0415  # loaded on install (see above)

    return process.ProcessPoolExecutor


# The marker the bootstrap sets on its wrapper (flow_xray/sdk/_bootstrap/sitecustomize.py).
_BOOTSTRAP_MARKER: Final = "_flow_xray_bootstrap"
PROVIDER_WATCH: Final = patches.AdoptedWrapper(
    "opentelemetry.trace.set_tracer_provider",
    lambda: trace_api,
    "set_tracer_provider",
    _BOOTSTRAP_MARKER,
)
POPEN: Final = patches.AttributePatch("subprocess.Popen", _popen, {"__init__": _popen_init})
PROCESS_START: Final = patches.AttributePatch(
    "multiprocessing.Process",
    _base_process,
    {"start": _process_start, "_bootstrap": _process_bootstrap},
)
# ``map`` and ``starmap`` (and their async forms) go through ``_map_async``.
POOL: Final = patches.AttributePatch(
    "multiprocessing.Pool",
    _pool,
    dict.fromkeys(("apply_async", "_map_async", "imap", "imap_unordered"), _callable_argument),
)
PROCESS_POOL_EXECUTOR: Final = patches.AttributePatch(
    "ProcessPoolExecutor", _process_pool_executor, {"submit": _callable_argument}
)
