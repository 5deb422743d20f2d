"""The open-capture registry: which captures a span started now belongs to.

The processor's ``on_start`` reads it (`listeners`): the captures active in
the current context (a ContextVar, so threads and asyncio tasks are isolated)
plus the process-wide ones (``trace.capture(all_threads=True)``). It also
keeps the capture tags a process inherited from the work it runs (a child
process's, see `flow_xray.tracing.propagation`).

A forked child forgets the captures open at the fork (`forget_after_fork`,
a fork hook installed with the first capture): they are the parent's to report.
"""

from __future__ import annotations

import asyncio
import contextvars
import sys
import threading
import types
from typing import Any, Final, Protocol

from flow_xray.runtime import patches


class Listener(Protocol):
    """What the registry holds for one open capture (the SDK side's collector)."""

    closed: bool


_ACTIVE: contextvars.ContextVar[tuple[Listener, ...]] = contextvars.ContextVar(
    "flow_xray_captures", default=()
)
# Capture tags a process inherited from the work it runs (set by `propagation.attach`).
_INHERITED: contextvars.ContextVar[tuple[str, ...]] = contextvars.ContextVar(
    "flow_xray_inherited_captures", default=()
)
_process_wide: tuple[Listener, ...] = ()
_open_count = 0
_lock = threading.RLock()  # (reentrant: a signal handler may open a capture inside)
# Captures opened inside a generator's body, by id: where its body runs (see `bind_to_generator`).
_BOUND: Final[dict[int, _Binding]] = {}


def listeners() -> tuple[Listener, ...]:
    """The captures a span started now belongs to: this context's, then the process-wide ones."""
    active = _ACTIVE.get()
    if _BOUND and active:
        active = tuple(c for c in active if _listens(c))
    return active + _process_wide


class _Binding:
    """Where a generator that opened a capture runs: its frame, its thread, its asyncio task."""

    __slots__ = ("frame", "task", "thread")

    def __init__(self, frame: types.FrameType) -> None:
        self.frame = frame
        self.thread = threading.get_ident()
        self.task = _task_id()


def _task_id() -> int | None:
    try:
        task = asyncio.current_task()
    except RuntimeError:  # no running event loop
        return None
    return None if task is None else id(task)


def _listens(listener: Listener) -> bool:
    """Whether ``listener`` collects now: always, unless it is bound to a generator and this
    is the generator's own thread and task with the generator not running (its caller's code,
    while the generator waits at a ``yield``)."""
    binding = _BOUND.get(id(listener))
    if binding is None or threading.get_ident() != binding.thread or _task_id() != binding.task:
        return True  # not bound, or work the body handed to a thread or a task
    frame: types.FrameType | None = sys._getframe(2)
    while frame is not None:
        if frame is binding.frame:
            return True
        frame = frame.f_back
    return False


def bind_to_generator(listener: Listener, frame: types.FrameType) -> None:
    """Make a capture opened in a generator's body (its frame: ``frame``) collect only while
    that body runs.

    A generator shares its caller's context, so a capture it opens would stay
    active in the caller's context while the generator is suspended at a
    ``yield``, and collect the caller's unrelated calls. Bound, in the
    generator's own thread and task it collects only while the generator's
    frame is on the stack; work the body hands to other threads (`propagate`)
    or tasks (an async generator's ``gather``) is collected as before. What
    the caller itself hands to threads or tasks while the generator waits
    carries the capture too, and is collected.
    """
    with _lock:
        if not listener.closed:
            _BOUND[id(listener)] = _Binding(frame)


def listening() -> bool:
    """Whether a capture listens in the current context (or process-wide)."""
    return bool(_process_wide or _ACTIVE.get())


def capturing() -> bool:
    """Whether any capture is open, in any thread."""
    return _open_count > 0


def open_capture(listener: Listener, all_threads: bool) -> contextvars.Token[Any] | None:
    """Register an open capture; returns the token `close_capture` needs (None if process-wide)."""
    global _process_wide, _open_count
    patches.install(_FORGET_AT_FORK)
    try:
        with _lock:
            _open_count += 1
            if all_threads:
                _process_wide = (*_process_wide, listener)
                return None
        return _ACTIVE.set((*_ACTIVE.get(), listener))
    except BaseException:  # a signal's, once counted: undone wherever it got to
        close_capture(listener, None)
        raise


def close_capture(listener: Listener, token: contextvars.Token[Any] | None) -> bool:
    """Unregister a capture; False when it was closed already (nothing changes then)."""
    global _process_wide, _open_count
    active = _ACTIVE.get()
    if any(c is listener for c in active):
        # Removed by identity rather than ``_ACTIVE.reset(token)``: a reset would
        # also drop captures opened after this one and still open, and closing
        # those later would re-activate this one. (Looked for whatever ``token`` is:
        # an open cut short by a signal's exception returned none.)
        _ACTIVE.set(tuple(c for c in active if c is not listener))
    with _lock:
        _BOUND.pop(id(listener), None)
        if listener.closed:
            return False
        rest = tuple(c for c in _process_wide if c is not listener)
        # (nothing between these three where a signal's exception can be raised)
        listener.closed = True
        _open_count -= 1
        _process_wide = rest
    return True


def inherited_tags() -> tuple[str, ...]:
    """The capture tags the current context inherited (empty unless a carrier was attached)."""
    return _INHERITED.get()


def inherit_tags(tags: tuple[str, ...]) -> contextvars.Token[tuple[str, ...]]:
    """Make ``tags`` the inherited capture tags of the current context; `uninherit` undoes it."""
    return _INHERITED.set(tags)


def uninherit(token: contextvars.Token[tuple[str, ...]]) -> None:
    """Undo `inherit_tags`."""
    _INHERITED.reset(token)


def forget_after_fork() -> None:
    """In a forked child: the captures open at the fork are the parent's, so close them here.

    Their spans so far are the parent's to report; a child that kept
    collecting into its copies would report them a second time. A processes
    capture's child side opens its own capture again afterwards (see
    `flow_xray.sdk.processes`).
    """
    global _process_wide, _open_count, _lock
    _lock = threading.RLock()  # another thread may have held it at the fork
    for listener in (*_ACTIVE.get(), *_process_wide):
        listener.closed = True
    _BOUND.clear()
    _ACTIVE.set(())
    _process_wide = ()
    _open_count = 0


_FORGET_AT_FORK: Final = patches.ForkHook("open captures", after_in_child=forget_after_fork)
