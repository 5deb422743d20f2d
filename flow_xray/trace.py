"""0.2.0's import path ``flow_xray.trace``: the ``trace`` decorator, `TraceNode`, `TraceResult`.

A thin module over `flow_xray.tracing.api` and `flow_xray.tree.model`.
``from flow_xray.trace import trace, TraceNode, TraceResult`` works as in 0.2.0.

Importing this module makes Python bind it to the attribute ``flow_xray.trace``,
where ``from flow_xray import trace`` found the decorator, so which object a
later ``from flow_xray import trace`` returns depends on import order. Both
behave the same: this module is callable as the decorator and forwards every
other attribute (``capture``, ``run``, ``arun``, ``meta``, ``tag``, ``usage``,
``annotate``, ``propagate``) to it, so ``@trace``, ``@trace("name")``,
``@trace(kind="llm")`` and ``trace.run(fn)`` work on either.
"""

from __future__ import annotations

import sys
import types
from typing import Any

from flow_xray.tracing.api import Trace, trace
from flow_xray.tree.model import TraceNode, TraceResult

__all__ = ["Trace", "TraceNode", "TraceResult", "trace"]


class _TraceModule(types.ModuleType):
    """This module's class: calling it is calling the decorator; unknown names come from it."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return trace(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(trace, name)


sys.modules[__name__].__class__ = _TraceModule
