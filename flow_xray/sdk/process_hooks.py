"""Where work leaves for another process, hand it the current call (for processes captures).

Installed once, on first need, and inert unless `flow_xray.sdk.processes` says
collection is on in this process. Each hook adds the carrier of the current
context (`flow_xray.tracing.propagation`) to the work and changes nothing else:

- ``subprocess.Popen``: the child's environment gets ``TRACEPARENT`` /
  ``TRACESTATE`` of the current span and the capture tags; an explicit
  ``env=`` also gets the collection channel and the bootstrap ``PYTHONPATH``
  entry, so it is traced like an inherited one;
- ``multiprocessing.Process.start``: the process object takes the carrier
  along (pickled for spawn and forkserver), and its ``_bootstrap`` runs the
  target inside it;
- ``multiprocessing.Pool`` (``apply_async``, ``map``/``starmap`` and their
  async forms, ``imap``, ``imap_unordered``) and
  ``concurrent.futures.ProcessPoolExecutor.submit`` (and so ``map``): the
  callable is wrapped with `propagate`, so each task runs under the call that
  submitted it.

Other ways of starting a process (``os.system``, ``os.exec*``, ``os.spawn*``)
inherit the process environment: they are collected, as children of the
call the capture itself continues (an incoming ``TRACEPARENT``), or as roots.
"""

from __future__ import annotations

import functools
import inspect
import logging
import os
import threading
from collections.abc import Callable, Mapping
from typing import Any, Final

from flow_xray.tracing.propagation import (
    CAPTURES,
    ENVIRONMENT,
    TRACEPARENT,
    TRACESTATE,
    ProcessCarrier,
    Propagated,
    current_carrier,
    propagate,
)

logger = logging.getLogger("flow_xray")

CAPTURES_ENV: Final = ENVIRONMENT[CAPTURES]
TRACEPARENT_ENV: Final = ENVIRONMENT[TRACEPARENT]
TRACESTATE_ENV: Final = ENVIRONMENT[TRACESTATE]

_installed = False
_install_lock = threading.Lock()


def _active() -> bool:
    return False


_inherited_env: Callable[[], Mapping[str, str]] = dict


def install(active: Callable[[], bool], inherited_env: Callable[[], Mapping[str, str]]) -> None:
    """Install the hooks once; ``active()`` says whether they act, ``inherited_env()`` gives the
    variables an explicit ``env=`` must also get (the channel and ``PYTHONPATH``)."""
    global _installed, _active, _inherited_env
    _active, _inherited_env = active, inherited_env
    with _install_lock:
        if _installed:
            return
        _installed = True
        for hook in (_hook_subprocess, _hook_process, _hook_pool, _hook_executor):
            try:
                hook()
            except Exception:  # an unusual stdlib must not stop the rest from working
                logger.debug("flow-xray: could not hook %s", hook.__name__, exc_info=True)


def child_env(env: Mapping[Any, Any] | None) -> Mapping[Any, Any] | None:
    """The environment for a child started now: ``env`` (None: this process's) plus the carrier.

    Returns ``env`` itself when there is nothing to add, or when its keys are bytes.
    """
    carrier = current_carrier()
    if env is None and not carrier:
        return None
    if env is not None and any(not isinstance(key, str) for key in env):
        return env
    result: dict[str, str] = dict(os.environ if env is None else env)
    if env is not None:
        for name, value in _inherited_env().items():
            result[name] = prepend_path(value, result.get(name)) if name == "PYTHONPATH" else value
    if TRACEPARENT in carrier:
        result[TRACEPARENT_ENV] = carrier[TRACEPARENT]
        if TRACESTATE in carrier:
            result[TRACESTATE_ENV] = carrier[TRACESTATE]
        else:
            result.pop(TRACESTATE_ENV, None)
    if CAPTURES in carrier:
        result[CAPTURES_ENV] = carrier[CAPTURES]
    return result


def prepend_path(folder: str, path: str | None) -> str:
    """``folder`` first on a ``PYTHONPATH``-style ``path`` (unchanged when already on it)."""
    if not path:
        return folder
    if folder in path.split(os.pathsep):
        return path
    return folder + os.pathsep + path


def _propagated(fn: Any) -> Any:
    if not _active() or isinstance(fn, Propagated) or not callable(fn):
        return fn
    return propagate(fn)


def _hook_subprocess() -> None:
    import subprocess

    original = subprocess.Popen.__init__
    # Positional index of ``env`` (after self), read from this Python's signature.
    env_index = list(inspect.signature(original).parameters).index("env") - 1

    @functools.wraps(original)
    def __init__(self: subprocess.Popen[Any], *args: Any, **kwargs: Any) -> None:
        if _active():
            try:
                if len(args) > env_index:
                    env = child_env(args[env_index])
                    args = (*args[:env_index], env, *args[env_index + 1 :])
                else:
                    kwargs["env"] = child_env(kwargs.get("env"))
            except Exception:  # never stop a program from starting its child
                logger.debug("flow-xray: could not pass the trace context on", exc_info=True)
        original(self, *args, **kwargs)

    subprocess.Popen.__init__ = __init__  # type: ignore[method-assign]  # the hook itself


def _hook_process() -> None:
    from multiprocessing import process

    original_start = process.BaseProcess.start
    original_bootstrap = process.BaseProcess._bootstrap  # type: ignore[attr-defined]  # untyped

    @functools.wraps(original_start)
    def start(self: process.BaseProcess) -> None:
        if _active():
            carrier = current_carrier()
            if carrier:
                # An attribute of ours on the process object, pickled with it for spawn.
                self._flow_xray_carrier = ProcessCarrier(carrier)  # type: ignore[attr-defined]
        original_start(self)

    @functools.wraps(original_bootstrap)
    def _bootstrap(self: process.BaseProcess, *args: Any, **kwargs: Any) -> Any:
        carrier = getattr(self, "_flow_xray_carrier", None)
        if not carrier:
            return original_bootstrap(self, *args, **kwargs)
        from flow_xray.tracing.propagation import attached

        with attached(carrier):
            return original_bootstrap(self, *args, **kwargs)

    # The hooks themselves (``_bootstrap`` is untyped in typeshed).
    process.BaseProcess.start = start  # type: ignore[method-assign]
    process.BaseProcess._bootstrap = _bootstrap  # type: ignore[attr-defined]


def _wrap_callable_argument(cls: type, name: str) -> None:
    original = getattr(cls, name)

    @functools.wraps(original)
    def method(self: Any, func: Any, *args: Any, **kwargs: Any) -> Any:
        return original(self, _propagated(func), *args, **kwargs)

    setattr(cls, name, method)


def _hook_pool() -> None:
    from multiprocessing import pool

    # ``map`` and ``starmap`` (and their async forms) go through ``_map_async``.
    for name in ("apply_async", "_map_async", "imap", "imap_unordered"):
        _wrap_callable_argument(pool.Pool, name)


def _hook_executor() -> None:
    from concurrent.futures import process

    _wrap_callable_argument(process.ProcessPoolExecutor, "submit")
