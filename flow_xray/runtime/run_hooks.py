"""What ``flow-xray run`` changes process-wide while a script runs: SIGTERM and ``os.exec*``.

- `sigterm_as_exit`: SIGTERM raises `Terminated` in the script's main thread
  instead of killing the process on the spot, so the trace is still written.
  Processes forked meanwhile start with the default action back (the
  ``SIGTERM across fork`` fork hook).
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
