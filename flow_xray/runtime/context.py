"""The OpenTelemetry context as every traced call reads and sets it (OpenTelemetry API only).

A traced call reads the current `Context` (its parent span), attaches one with
its own span while the function runs and detaches it after: three operations
of the API's context module, two Python calls each (the module's function,
then its runtime context's method). With the API's default runtime context
(``contextvars``, which ``OTEL_PYTHON_CONTEXT`` can replace) they are its
`ContextVar`'s own ``get`` / ``set`` / ``reset`` here, done as the API does them:
a token that cannot be reset (a context detached in another one) is logged as
the API logs it, never raised; a ``set`` or ``reset`` is never started inside
another one (`_attach_var`). Any other runtime context goes through the API.

A signal's exception (Ctrl-C) can be raised between any two of these steps: an
attach undoes its ``set`` when one lands right after it, and `restore` is how a
wrapper puts the caller's context back when one escaped its detach.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from contextvars import ContextVar, Token
from types import FrameType
from typing import Final, cast

from opentelemetry import context as context_api
from opentelemetry.context.context import Context
from opentelemetry.context.contextvars_context import ContextVarsRuntimeContext

from flow_xray.interrupts import let_signals_through

# The API's own logger, for its own message (see `_detach_var`).
_api_logger: Final = logging.getLogger(context_api.__name__)


def _context_var() -> ContextVar[Context] | None:
    """The API's context variable when its runtime context is the default one, else None."""
    runtime = getattr(context_api, "_RUNTIME_CONTEXT", None)
    if type(runtime) is not ContextVarsRuntimeContext:
        return None
    found = getattr(runtime, "_current_context", None)
    return found if isinstance(found, ContextVar) else None


_VAR: Final = _context_var()


# How many ``set`` / ``reset`` calls of ours are running now, in any thread. Nonzero is
# rare: a finalizer run inside one (this thread: `_inside_one` finds its frame), or
# another thread's, whose finalizer let go of the GIL (closing a file or socket does).
_setting = 0
# What `_attach_var` returns for a context it did not attach (see there).
_SKIPPED: Final[Token[Context]] = cast("Token[Context]", object())


def _attach_var(context: Context) -> Token[Context]:
    """``set`` on the API's variable; while one is already running here, nothing.

    Setting a context variable allocates, so the garbage collector can run inside
    it, and with it a finalizer (``__del__``) or weakref callback that calls a traced
    function. That call setting the variable again, inside the first ``set``, crashes
    CPython (issue gh-148891: the first one reads memory the second freed). The inner
    call's span is recorded but not made current (its own traced calls start beside it).
    """
    global _setting
    if _setting and _inside_one():
        return _SKIPPED
    previous = _VAR.get()  # type: ignore[union-attr]
    try:  # (counted inside: the finally undoes it whatever is raised where)
        _setting += 1
        return _VAR.set(context)  # type: ignore[union-attr]
    except BaseException:  # a signal's, raised as ``set`` returned: its token is lost
        _VAR.set(previous)  # type: ignore[union-attr]
        raise
    finally:
        _setting -= 1


def _detach_var(token: Token[Context]) -> None:
    """``reset`` on the API's variable (guarded as `_attach_var`): a token that cannot be
    reset is logged, never raised, as ``opentelemetry.context.detach`` does."""
    global _setting
    if token is _SKIPPED or (_setting and _inside_one()):
        return
    try:  # (counted inside: the finally undoes it whatever is raised where)
        _setting += 1
        _VAR.reset(token)  # type: ignore[union-attr]
    except Exception:
        let_signals_through()
        _api_logger.exception("Failed to detach context")
    finally:
        _setting -= 1


_GUARDED: Final = frozenset({_attach_var.__code__, _detach_var.__code__})


def _inside_one() -> bool:
    """Whether this thread is inside one of our ``set`` / ``reset`` calls now (a finalizer
    the collector ran there called a traced function), found by its frame on this
    thread's stack; another thread's is none of this one's business."""
    frame: FrameType | None = sys._getframe(2)  # (from the caller of the function asking)
    while frame is not None:
        if frame.f_code in _GUARDED:
            return True
        frame = frame.f_back
    return False


current_context: Callable[[], Context]
attach: Callable[[Context], Token[Context]]
detach: Callable[[Token[Context]], None]
if _VAR is None:  # another runtime context: the API's functions
    current_context, attach, detach = (
        context_api.get_current,
        context_api.attach,
        context_api.detach,
    )
else:
    current_context, attach, detach = _VAR.get, _attach_var, _detach_var


def restore(token: Token[Context], context: Context) -> None:
    """Detach ``token`` if ``context`` (the one it attached) is still current. For a traced
    call's wrapper when an exception escaped its own attach or detach — a signal's, raised
    between two of their instructions — which may have left its context attached."""
    if current_context() is context:
        detach(token)


__all__ = ["attach", "current_context", "detach", "restore"]
