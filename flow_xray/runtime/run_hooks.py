"""What ``flow-xray run`` changes process-wide while a script runs: signals and ``os.exec*``.

- `sigterm_as_exit`: SIGTERM raises `Terminated` in the script's main thread
  instead of killing the process on the spot, so the trace is still written.
  Processes forked meanwhile start with the default action back (the
  ``SIGTERM across fork`` fork hook).
- `run_end` / `script_ended`: once the script is over, the run's end (writing
  its trace) is flow-xray's: SIGTERM, SIGINT and SIGHUP are held until it is
  done, so a signal then finishes the trace rather than leaving none (or half
  of one); a second such signal stops the writing.
- `exec_watched`: ``os.execv`` / ``os.execve`` (which every other ``os.exec*``
  calls) replace the process without running exit handlers, so no trace can
  be written afterwards; the ``os.exec`` patch calls back first, so the
  runner can say why no file appears.

The signal handler is the run's own and is restored when the run ends; the
patch and the fork hook are installed in `flow_xray.runtime.patches`.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from typing import Any, Final

from flow_xray.errors import Terminated
from flow_xray.runtime import patches

# (pid of the run, its SIGTERM handler) while `sigterm_as_exit` is in effect.
_handler: tuple[int, Callable[[int, Any], None]] | None = None
_TERM: Final = {signal.SIGTERM}
_forking = threading.local()  # per forking thread: whether SIGTERM was blocked for this fork


@contextmanager
def sigterm_as_exit(exit_code: int) -> Iterator[None]:
    """Turn SIGTERM into ``Terminated(exit_code)`` while the block runs.

    Only when SIGTERM has its default action (which would kill the process on
    the spot) and only from the main thread, where signal handlers live; a
    handler the script installs itself wins. The default is restored afterwards.

    A process forked meanwhile (a ``multiprocessing`` worker, say) is not the
    run: it starts with the default action back, as under plain Python. A
    Python-level handler there could lose the signal (CPython drops one that
    lands while the child is still inside ``fork``) and leave a worker that
    `Pool.terminate` waits for forever; so SIGTERM is blocked across each fork
    and the child unblocks it only once the default action is back.
    """
    global _handler
    if (
        threading.current_thread() is not threading.main_thread()
        or signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL
    ):
        yield
        return

    def terminate(signum: int, frame: object) -> None:
        raise Terminated(exit_code)

    if hasattr(signal, "pthread_sigmask"):
        patches.install(SIGTERM_ACROSS_FORK)
    signal.signal(signal.SIGTERM, terminate)
    _handler = (os.getpid(), terminate)
    try:
        yield
    finally:
        _handler = None
        ending = _ending
        if ending is not None and ending.saved.get(signal.SIGTERM) is terminate:
            ending.saved[signal.SIGTERM] = signal.SIG_DFL  # restored when the run's end is over
        elif signal.getsignal(signal.SIGTERM) is terminate:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _block_sigterm_for_fork() -> None:
    _forking.blocked = _handler is not None and _handler[0] == os.getpid()
    if _forking.blocked:
        signal.pthread_sigmask(signal.SIG_BLOCK, _TERM)


def _unblock_sigterm_in_parent() -> None:
    if getattr(_forking, "blocked", False):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _TERM)


def _default_sigterm_in_child() -> None:
    global _handler
    if not getattr(_forking, "blocked", False):
        return
    if _handler is not None and signal.getsignal(signal.SIGTERM) is _handler[1]:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
    _handler = None
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _TERM)  # a SIGTERM sent meanwhile acts now


SIGTERM_ACROSS_FORK: Final = patches.ForkHook(
    "SIGTERM across fork",
    before=_block_sigterm_for_fork,
    after_in_parent=_unblock_sigterm_in_parent,
    after_in_child=_default_sigterm_in_child,
)


# --- the run's end ------------------------------------------------------------------

_HELD: Final = tuple(
    getattr(signal, name) for name in ("SIGTERM", "SIGINT", "SIGHUP") if hasattr(signal, name)
)


class RunEnd:
    """The end of a run: which signals arrived while it was held (`run_end`)."""

    def __init__(self) -> None:
        self.pid = os.getpid()
        self.active = False
        self.received: list[int] = []
        self.saved: dict[int, Any] = {}
        # Called with the first signal held, as it arrives (to say so at once).
        self.on_first: Callable[[int], object] | None = None

    def hold(self) -> None:
        """From now until the `run_end` block ends, SIGTERM, SIGINT and SIGHUP wait."""
        if self.active or os.getpid() != self.pid:
            return
        self.active = True
        for signum in _HELD:
            current = signal.getsignal(signum)
            if current is signal.SIG_IGN or current is None:
                continue  # ignored (nohup), or set from outside Python: left as it is
            self.saved[signum] = current
            signal.signal(signum, self._held)

    def _held(self, signum: int, frame: object) -> None:
        self.received.append(signum)
        if len(self.received) > 1:  # asked twice: stop writing (an atomic write leaves nothing)
            if signum == signal.SIGINT:
                raise KeyboardInterrupt
            raise Terminated(128 + signum)
        if self.on_first is not None:
            with suppress(Exception):
                self.on_first(signum)

    def restore(self) -> None:
        for signum, handler in self.saved.items():
            with suppress(ValueError, OSError, TypeError):
                signal.signal(signum, handler)
        self.saved.clear()
        self.active = False


_ending: RunEnd | None = None


@contextmanager
def run_end() -> Iterator[RunEnd]:
    """Hold SIGTERM, SIGINT and SIGHUP from the moment the script ends until the block ends.

    Enter it around running the script and writing its trace; the runner calls
    `script_ended` as the script's last instruction returns. From then on the
    first of these signals is noted in `RunEnd.received` and the block goes on
    (the trace is finished rather than lost); a second one raises in the block
    (``KeyboardInterrupt`` for SIGINT, `Terminated` otherwise), so the writing
    stops and leaves no partial file. Ignored signals stay ignored. The handlers
    are put back afterwards. Only the main thread can hold signals; elsewhere
    the block runs with nothing changed.
    """
    global _ending
    ending = RunEnd()
    main = threading.current_thread() is threading.main_thread()
    previous = _ending
    if main:
        _ending = ending
    try:
        yield ending
    finally:
        if main:
            _ending = previous
            ending.restore()


def script_ended() -> None:
    """The script is over: the current `run_end` block, if any, holds signals from now on."""
    ending = _ending
    if ending is not None and threading.current_thread() is threading.main_thread():
        ending.hold()


# --- os.exec* -------------------------------------------------------------------

# (pid of the run, what to call with the os function's name) while `exec_watched` is in effect.
_exec_watch: tuple[int, Callable[[str], object]] | None = None
_EXEC_NAMES: Final = tuple(name for name in ("execv", "execve") if hasattr(os, name))


@contextmanager
def exec_watched(on_exec: Callable[[str], object]) -> Iterator[None]:
    """Call ``on_exec(name)`` (``"execv"``...) when the block's process is about to exec.

    A forked child that execs loses no trace: it is not called then. Whatever
    ``on_exec`` raises is ignored; the exec goes ahead.
    """
    global _exec_watch
    installed_here = not patches.is_installed(EXEC.name)
    _exec_watch = (os.getpid(), on_exec)
    patches.install(EXEC)
    try:
        yield
    finally:
        _exec_watch = None
        if installed_here:
            patches.uninstall(EXEC.name)


def _reporting(name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    def wrap(original: Callable[..., Any]) -> Callable[..., Any]:
        def exec_and_report(*args: Any, **kwargs: Any) -> Any:
            watch = _exec_watch
            if watch is not None and os.getpid() == watch[0]:
                with suppress(Exception):
                    watch[1](name)
            return original(*args, **kwargs)

        return exec_and_report

    return wrap


EXEC: Final = patches.AttributePatch(
    "os.exec", lambda: os, {name: _reporting(name) for name in _EXEC_NAMES}
)
