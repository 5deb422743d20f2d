"""Exceptions a signal handler raised: never flow-xray's to contain.

Recording contains what a traced value's hooks raise, ``KeyboardInterrupt`` and
``SystemExit`` included (a ``__repr__`` cannot end the program). A signal is
something else: Python runs its handler between two instructions of whatever
code is running, so Ctrl-C's ``KeyboardInterrupt``, the ``Terminated`` that
``flow-xray run`` raises for SIGTERM or an alarm handler's ``TimeoutError`` land
in recording code about as often as recording holds the program's time.
Contained, the program would never see them. Every net that contains exceptions
while recording asks `by_signal` first and lets those through (stdlib only).
"""

from __future__ import annotations

import dis
import itertools
import signal
import sys
from types import CodeType, FrameType
from typing import Final

# The instructions that raise on purpose (``raise X``, a bare ``raise``).
_RAISES: Final = frozenset(dis.opmap[name] for name in ("RAISE_VARARGS", "RERAISE"))


def by_signal(exc: BaseException) -> bool:
    """Whether ``exc`` came from a signal rather than from the code it interrupted.

    True when the traceback passes through a Python signal handler installed now
    (``signal.signal(SIGALRM, handler)``, ``flow-xray run``'s SIGTERM one), and for a
    ``KeyboardInterrupt`` raised where no ``raise`` statement ran: the default SIGINT
    handler raises it at whatever instruction was interrupted (a blocking call
    included), while a hook that raises it itself does so with ``raise``. Costs a
    look at each frame of the traceback; never raises.
    """
    try:
        tb = exc.__traceback__
        if tb is None:
            return False
        handlers: set[CodeType] | None = None  # (looked up once, when a frame may be one)
        while True:
            if _may_be_handler(tb.tb_frame):
                handlers = _handler_codes() if handlers is None else handlers
                if tb.tb_frame.f_code in handlers:
                    return True
            if tb.tb_next is None:
                break
            tb = tb.tb_next
        if not isinstance(exc, KeyboardInterrupt):
            return False
        code, at = tb.tb_frame.f_code.co_code, tb.tb_lasti
        return not (0 <= at < len(code) and code[at] in _RAISES)
    except Exception:  # (a frame or handler that cannot be looked at: not a signal we know)
        return False


def let_signals_through() -> None:
    """Raise again the exception being handled if a signal raised it (`by_signal`).

    The first statement of every net that contains exceptions while recording::

        except BaseException:
            let_signals_through()
            ...  # contained: logged, or a placeholder written
    """
    exc = sys.exc_info()[1]
    if exc is not None and by_signal(exc):
        raise exc


def _may_be_handler(frame: FrameType) -> bool:
    """Whether ``frame`` runs a function called as a signal handler is: among its arguments
    a signal number followed by the interrupted frame (or None), ``(signum, frame)``."""
    code = frame.f_code
    if code.co_argcount < 2:
        return False
    found = frame.f_locals
    passed = [found.get(name) for name in code.co_varnames[: code.co_argcount]]
    return any(
        type(signum) is int and isinstance(interrupted, (FrameType, type(None)))
        for signum, interrupted in itertools.pairwise(passed)
    )


def _handler_codes() -> set[CodeType]:
    """The code of every Python-level signal handler installed now, and of the functions it
    wraps (a decorated handler: ``@trace`` on it, say)."""
    codes: set[CodeType] = set()
    for signum in signal.valid_signals():
        try:
            handler = signal.getsignal(signum)
        except (OSError, ValueError):
            continue
        for _ in range(8):  # (a bound on odd ``__wrapped__`` chains)
            handler = getattr(handler, "func", handler)  # (a `functools.partial`: asyncio's)
            handler = getattr(handler, "__func__", handler)  # (a bound method)
            code = getattr(handler, "__code__", None)
            if isinstance(code, CodeType):
                codes.add(code)
            handler = getattr(handler, "__wrapped__", None)
            if handler is None:
                break
    return codes


__all__ = ["by_signal", "let_signals_through"]
