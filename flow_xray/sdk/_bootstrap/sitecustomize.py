"""flow-xray's start-up hook in Python processes started under a processes capture.

This folder is first on ``PYTHONPATH`` only in the environment of processes
started while a ``trace.capture(processes=True)`` (or ``flow-xray run``) is
open, and only then does ``FLOW_XRAY_CHANNEL`` name the parent. At start-up
this module does almost nothing (standard library only): it takes its folder
off ``sys.path``, watches for the first import of ``flow_xray`` and of
``opentelemetry.trace``, and runs the ``sitecustomize`` it shadows, so the
user's own still runs. Only when the program imports flow-xray, or sets a
global OpenTelemetry provider, does `flow_xray.sdk.processes.start_child`
start sending its spans to the parent. A process that does neither pays
for nothing but this file.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sys
from collections.abc import Callable
from types import ModuleType
from typing import Any

_HERE = os.path.dirname(os.path.abspath(__file__))


def _start_child(*_: object) -> None:
    try:
        # Only now: at start-up this file may use the standard library alone.
        from flow_xray.sdk import processes  # noqa: PLC0415

        processes.start_child()
    except Exception:  # flow-xray must never stop a program from starting
        pass


def _watch_provider(module: ModuleType) -> None:
    """Join a provider the program sets globally (raw OpenTelemetry, no flow-xray import)."""
    original = getattr(module, "set_tracer_provider", None)
    if original is None:
        return

    def set_tracer_provider(tracer_provider: Any) -> None:
        original(tracer_provider)
        _start_child()

    set_tracer_provider.__doc__ = original.__doc__
    set_tracer_provider.__wrapped__ = original  # type: ignore[attr-defined]  # as functools.wraps
    # Once flow-xray loads, `flow_xray.runtime.process_hooks.PROVIDER_WATCH` finds this
    # wrapper by the marker and takes it into its registry (flow_xray.shutdown() undoes it).
    set_tracer_provider._flow_xray_bootstrap = True  # type: ignore[attr-defined]
    setattr(module, "set_tracer_provider", set_tracer_provider)  # noqa: B010 (a module attribute)


class _AfterImport:
    """Calls a function right after a watched module has run (a sys.meta_path finder)."""

    def __init__(self, watched: dict[str, Callable[[ModuleType], None]]) -> None:
        self.watched = watched

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        callback = self.watched.pop(name, None)
        if callback is None:
            return None
        if not self.watched and self in sys.meta_path:
            sys.meta_path.remove(self)
        spec = None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                break
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        # _Loader has the Loader protocol; subclassing importlib.abc.Loader would import more here.
        spec.loader = _Loader(spec.loader, callback)  # type: ignore[assignment]
        return spec


class _Loader:
    def __init__(self, loader: Any, callback: Callable[[ModuleType], None]) -> None:
        self.loader = loader
        self.callback = callback

    def create_module(self, spec: Any) -> Any:
        return self.loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        # The module sees its real loader, as if this hook never existed.
        module.__loader__ = self.loader
        if module.__spec__ is not None:
            module.__spec__.loader = self.loader
        self.loader.exec_module(module)
        self.callback(module)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.loader, name)


def _run_shadowed() -> None:
    """Run the next ``sitecustomize`` on the path, as site.py would have (errors included)."""
    me = sys.modules.pop("sitecustomize", None)
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", sys.path)
    if spec is None or spec.loader is None:
        if me is not None:
            sys.modules["sitecustomize"] = me
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules["sitecustomize"] = module
    spec.loader.exec_module(module)


def _install() -> None:
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]
    if os.environ.get("FLOW_XRAY_CHANNEL"):
        if "flow_xray" in sys.modules:  # imported by a .pth file already
            _start_child()
        else:
            sys.meta_path.insert(
                0,
                _AfterImport({"flow_xray": _start_child, "opentelemetry.trace": _watch_provider}),
            )


_install()
_run_shadowed()
