"""Run a Python script or module as ``__main__`` under a trace capture and report how it ended.

This is the library behind ``flow-xray run``; it prints nothing. The target
runs the way ``python script.py`` / ``python -m module`` would run it (via
`runpy`): its ``if __name__ == "__main__":`` block runs, ``sys.argv`` is the
script and its arguments, and the script's folder (the working directory for a
module) is first on ``sys.path``; both, and the working directory, are restored
afterwards. Every span the process starts while it runs, in any thread, is
collected, and so is every span of the Python processes it starts (see
`flow_xray.sdk.processes`). The run continues the call named by an incoming
``TRACEPARENT`` / ``TRACESTATE``, as a service that starts the script would
pass it. ``os._exit`` ends the process on the spot, so no trace is written.

Example::

    target = resolve_script("agent.py", ["--fast"])
    outcome = run_target(target)
    outcome.result.to_html("agent_trace.html")
    raise SystemExit(outcome.exit_code)
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import runpy
import signal
import sys
import threading
import tokenize
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from typing import Any

from flow_xray.cli.tracebacks import trim_chain
from flow_xray.errors import ScriptError, ScriptFailed
from flow_xray.runtime.run_hooks import exec_watched, script_ended, sigterm_as_exit
from flow_xray.tree.model import TraceResult

# Python's own convention for a process stopped by Ctrl-C (128 + SIGINT).
INTERRUPTED_EXIT_CODE = 130
# The shell's convention for a process stopped by SIGTERM (128 + 15).
TERMINATED_EXIT_CODE = 128 + signal.SIGTERM


@dataclass(frozen=True)
class Target:
    """A script or module ready to run.

    ``kind`` is ``"script"`` or ``"module"``; ``name`` is the path as given or
    the dotted module name; ``path`` is the file that will run; ``args`` are the
    target's own arguments (``sys.argv[1:]`` while it runs); ``roots`` are
    source folders the module was found in (a src layout, see `resolve_module`),
    on ``sys.path`` after the working directory while it runs, as an installed
    package would be.
    """

    kind: str
    name: str
    path: str
    args: tuple[str, ...] = ()
    roots: tuple[str, ...] = ()

    @property
    def stem(self) -> str:
        """The script's file name without suffix, or the module name: the default output name."""
        if self.kind == "module":
            return self.name
        return os.path.splitext(os.path.basename(self.path))[0]


@dataclass(frozen=True)
class RunOutcome:
    """How a run ended, with its trace.

    ``exit_code`` is what ``python`` would have exited with: 0, 1 after an
    uncaught exception, ``n`` for ``sys.exit(n)``, 130 after Ctrl-C.
    ``exception`` is the uncaught exception (``KeyboardInterrupt`` included),
    its traceback trimmed to start at the user's code; ``exit_message`` is the
    text of ``sys.exit("text")``. ``forked`` is True in a child the script
    forked that went on to finish it: its calls are in the parent's trace,
    and its (empty) ``result`` must not be written over the parent's.
    """

    result: TraceResult
    exit_code: int
    exception: BaseException | None = field(default=None, compare=False)
    exit_message: str | None = None
    forked: bool = False

    @property
    def interrupted(self) -> bool:
        """True when the run was stopped by Ctrl-C (``KeyboardInterrupt``)."""
        return isinstance(self.exception, KeyboardInterrupt)


def resolve_script(path: str, args: Sequence[str] = ()) -> Target:
    """Check that ``path`` is a Python file that compiles and return it as a `Target`.

    Raises:
        ScriptError: the file is missing, a directory, unreadable or has a syntax error.
    """
    if not os.path.exists(path):
        raise ScriptError(f"no such file: {path}")
    if os.path.isdir(path):
        raise ScriptError(f"{path} is a directory, not a Python file")
    _check_compiles(path)
    return Target("script", path, path, tuple(args))


def resolve_module(name: str, args: Sequence[str] = (), roots: Sequence[str] = ()) -> Target:
    """Find module ``name`` (a package runs its ``__main__``) as ``python -m`` would.

    The working directory is searched first. As with ``python -m``, finding
    ``a.b`` imports the package ``a``. A module found nowhere else is looked
    for in the source folders ``roots`` (``src`` of a src layout, as if the
    package were installed); the `Target` then keeps the folder it was found in.

    Raises:
        ScriptError: the module cannot be found, has no source file or does not compile.
    """
    found_in: tuple[str, ...] = ()
    with _path_at(0, os.getcwd()):
        spec = _find_module(name)
    for root in roots if spec is None else ():
        with _path_at(0, os.getcwd()), _path_at(1, root):
            spec = _find_module(name)
        if spec is not None:
            found_in = (root,)
            break
    if spec is None:
        raise ScriptError(f"no module named {name!r}")
    if not spec.has_location or spec.origin is None or not spec.origin.endswith(".py"):
        raise ScriptError(f"module {name!r} has no Python source file to run")
    _check_compiles(spec.origin)
    return Target("module", name, spec.origin, tuple(args), found_in)


def _find_module(name: str) -> importlib.machinery.ModuleSpec | None:
    """The spec of what ``python -m name`` runs (a package's ``__main__``); None: not found."""
    top = name.partition(".")[0]
    if top not in sys.modules and _find_spec(top) is None:
        return None  # not found here (a src layout's package may be found in its root)
    spec = _find_spec(name)
    if spec is not None and spec.submodule_search_locations is not None:
        spec = _find_spec(f"{name}.__main__")
        if spec is None:
            raise ScriptError(f"{name} is a package and cannot be run: no {name}.__main__")
    return spec


def run_target(
    target: Target,
    *,
    all_threads: bool = True,
    max_spans: int | None = None,
    processes: bool = True,
) -> RunOutcome:
    """Run ``target`` as ``__main__`` inside ``trace.capture`` and return how it ended.

    Never raises what the target raises: an uncaught exception, ``sys.exit`` and
    ``KeyboardInterrupt`` all end up in the `RunOutcome`, with the trace of
    everything that ran until then (spans still open are marked incomplete).
    Non-daemon threads the target started are waited for, as Python does at exit:
    first the ``threading`` exit hooks run (they stop idle `concurrent.futures`
    workers, so an executor the target never shut down does not block forever;
    afterwards this process's executors accept no new work), then the threads
    are joined, and then non-daemon ``multiprocessing`` children (Python
    waits for those at exit too; their calls belong to the run). ``max_spans``
    caps the trace as ``trace.capture(max_spans=)`` does; with ``processes``
    (the default) child processes' calls are collected.
    """
    # The tracing core loads only when something runs (not for `flow-xray dot export`).
    from flow_xray.tracing.api import trace  # noqa: PLC0415
    from flow_xray.tracing.propagation import attached, environ_carrier  # noqa: PLC0415

    pid = os.getpid()
    recursion_limit = sys.getrecursionlimit()
    before = set(threading.enumerate())
    exception: BaseException | None = None
    exit_message: str | None = None
    exit_code = 0
    with (
        trace.capture(all_threads=all_threads, max_spans=max_spans, processes=processes) as result,
        _working_dir_restored(),
        _standard_descriptors_kept(),
        _interpreter_state_restored(),
        sigterm_as_exit(TERMINATED_EXIT_CODE),
        exec_watched(_report_exec),
        attached(environ_carrier()),
    ):
        try:
            try:
                _execute(target)
            finally:
                try:
                    _join_new_threads(before)
                    _join_child_processes()
                finally:
                    script_ended()  # from here on the run is flow-xray's: signals wait
        except SystemExit as exc:
            exit_code, exit_message = _exit_status(exc.code)
        except BaseException as exc:  # the script's exception is reported, not raised
            exception = _trimmed(exc)
            exit_code = INTERRUPTED_EXIT_CODE if isinstance(exc, KeyboardInterrupt) else 1
        finally:
            # A limit the script raised would let writing its (deep) trace overflow the C stack.
            sys.setrecursionlimit(recursion_limit)
    return RunOutcome(result, exit_code, exception, exit_message, forked=os.getpid() != pid)


def _trimmed(exc: BaseException) -> BaseException:
    """``exc`` with its traceback starting at the user's code (as it is, if that fails)."""
    try:
        return trim_chain(exc)
    except Exception:  # an exception class with odd attributes: show it whole
        return exc


def _join_child_processes() -> None:
    """Wait for the non-daemon ``multiprocessing`` children, as Python does at exit."""
    multiprocessing = sys.modules.get("multiprocessing")
    if multiprocessing is None:
        return
    for child in multiprocessing.active_children():
        if not child.daemon:
            child.join()


EXEC_MESSAGE = (
    "flow-xray: the script replaced itself with another program (os.{name}); "
    "no trace could be written (run the program it starts under flow-xray instead)"
)


def _report_exec(name: str) -> None:
    """Say why no trace appears: the process, and its trace, are gone (see `exec_watched`)."""
    sys.stderr.write(EXEC_MESSAGE.format(name=name) + "\n")
    sys.stderr.flush()


def run_for_namespace(target: Target, run_name: str = "__flow_xray_script__") -> dict[str, Any]:
    """Run ``target`` as a module named ``run_name`` (its main block skipped); return its globals.

    ``sys.argv`` and ``sys.path`` are set and restored as for `run_target`; no
    capture is opened. Used by ``flow-xray dot export`` to read a script's ``root``.

    Raises:
        ScriptFailed: the script raised (``SystemExit`` included); ``KeyboardInterrupt``
            propagates as is.
    """
    try:
        with _working_dir_restored():
            return _execute(target, run_name)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # handed to the caller inside ScriptFailed
        raise ScriptFailed(trim_chain(exc)) from None


def _execute(target: Target, run_name: str = "__main__") -> dict[str, Any]:
    saved_argv = sys.argv
    folder = os.getcwd() if target.kind == "module" else _script_folder(target.path)
    sys.argv = [target.name if target.kind == "script" else target.path, *target.args]
    tracer, profiler = sys.gettrace(), sys.getprofile()
    try:
        with _path_at(0, folder):
            sys.path[1:1] = target.roots
            try:
                if target.kind == "module":
                    return runpy.run_module(target.name, run_name=run_name, alter_sys=True)
                return runpy.run_path(target.path, run_name=run_name)
            finally:
                # First of all: a tracer the script left (one that raises, a slow one)
                # must not run on flow-xray's own code from here on.
                sys.settrace(tracer)
                sys.setprofile(profiler)
    finally:
        sys.argv = saved_argv


@contextmanager
def _working_dir_restored() -> Iterator[None]:
    """Return to the current working directory after the block, even if the script moved.

    Output paths given relative to where the run started must still land there.
    """
    folder = os.getcwd()
    try:
        yield
    finally:
        # If the folder is gone, writing relative outputs will say so.
        with suppress(OSError):
            os.chdir(folder)


@contextmanager
def _standard_descriptors_kept() -> Iterator[None]:
    """Reopen descriptors 1 and 2 if the script closed them (``os.close(2)``).

    A script may close them and still exit 0 under plain Python. Left closed,
    the next file flow-xray opens (the trace itself) would get number 1 or 2,
    and any stray write to ``sys.stdout`` / ``sys.stderr`` would land in it.
    Each closed one is pointed again at what it was when the run started. The
    ``sys.stdout`` / ``sys.stderr`` objects are the script's and are left as
    it left them; flow-xray's own lines go where `flow_xray.cli.console` says.
    """
    saved: dict[int, int] = {}
    for fd in (1, 2):
        with suppress(OSError):  # started without it: nothing to keep
            saved[fd] = _dup(fd)
    try:
        yield
    finally:
        for fd, copy in saved.items():
            try:
                _fstat(fd)
            except OSError:  # the script closed it
                with suppress(OSError):
                    _dup2(copy, fd)
            with suppress(OSError):
                _close(copy)


@contextmanager
def _interpreter_state_restored() -> Iterator[None]:
    """Put back the threads' trace and profile functions and the umask the run started with.

    A script may leave a tracer for new threads behind (``threading.settrace``)
    or a umask of 0o777; writing its trace is flow-xray's work and runs as the
    process did before the script (``sys.settrace`` is put back by `_execute`,
    the moment the script returns).
    """
    thread_tracer = getattr(threading, "gettrace", lambda: None)()
    thread_profiler = getattr(threading, "getprofile", lambda: None)()
    umask = os.umask(0o022)
    os.umask(umask)
    try:
        yield
    finally:
        threading.settrace(thread_tracer)
        threading.setprofile(thread_profiler)
        os.umask(umask)


# Bound now: a script that replaces them (a fake file system left installed) cannot
# stop the run from tidying up after it.
_dup, _dup2, _fstat, _close = os.dup, os.dup2, os.fstat, os.close


def _script_folder(path: str) -> str:
    # Python puts the folder of the real file first (symlinks resolved).
    return os.path.dirname(os.path.realpath(path))


@contextmanager
def _path_at(position: int, folder: str) -> Iterator[None]:
    """Put ``folder`` at ``position`` on ``sys.path`` for the block; restore the original
    list after."""
    original = sys.path
    saved = list(original)
    sys.path.insert(position, folder)
    try:
        yield
    finally:
        # The script may have replaced sys.path outright or edited it in place.
        sys.path = original
        sys.path[:] = saved


def _find_spec(name: str) -> importlib.machinery.ModuleSpec | None:
    try:
        return importlib.util.find_spec(name)
    except ModuleNotFoundError as exc:
        raise ScriptError(f"no module named {exc.name or name!r}") from None
    except (ImportError, ValueError) as exc:
        raise ScriptError(f"cannot find module {name!r}: {exc}") from None
    except Exception as exc:  # a parent package that crashes on import is bad input
        raise ScriptError(
            f"importing the package of {name!r} failed: {type(exc).__name__}: {exc}"
        ) from None


def _check_compiles(path: str) -> None:
    """Compile the file as Python would, so a syntax error is reported before anything runs."""
    try:
        # tokenize.open honours the file's encoding declaration, as the interpreter does.
        with tokenize.open(path) as fh:
            source = fh.read()
    except (OSError, SyntaxError, UnicodeDecodeError) as exc:
        raise ScriptError(f"cannot read {path}: {exc}") from None
    try:
        compile(source, path, "exec", dont_inherit=True)
    except SyntaxError as exc:
        where = f"{exc.filename or path}:{exc.lineno}" if exc.lineno else path
        raise ScriptError(f"{where}: {type(exc).__name__}: {exc.msg}") from None
    except ValueError as exc:  # e.g. a null byte in the source
        raise ScriptError(f"{path}: cannot compile: {exc}") from None


def _join_new_threads(before: set[threading.Thread]) -> None:
    """Wait for non-daemon threads started since ``before``, the way Python does at exit."""
    current = threading.current_thread()
    hooks_ran = False
    while True:
        pending = [
            t
            for t in threading.enumerate()
            if t not in before and t is not current and not t.daemon and t.is_alive()
        ]
        if not pending:
            return
        if not hooks_ran:
            hooks_ran = True
            _run_threading_exit_hooks()
            continue
        for thread in pending:
            thread.join()


def _run_threading_exit_hooks() -> None:
    """Run the hooks `threading` runs before joining threads at exit, newest first.

    `concurrent.futures` registers one that tells idle executor workers to stop
    (after the queued work is done); without it those workers wait forever.
    ``threading._threading_atexits`` is private; without it nothing runs.
    """
    for hook in reversed(list(getattr(threading, "_threading_atexits", ()))):
        # A failing hook must not lose the trace; Python goes on after one too.
        with suppress(Exception):
            hook()


def _exit_status(code: object) -> tuple[int, str | None]:
    """Map ``SystemExit.code`` to an exit status and message the way the interpreter does.

    An int (a subclass too, read without calling its methods) is the status;
    anything else is printed and the status is 1. When its ``__str__`` fails
    (with any exception), Python prints an empty line: so does this.
    """
    if code is None:
        return 0, None
    if isinstance(code, int):
        return int.__index__(code), None
    try:
        text = str.__str__(str(code))  # a str subclass's own methods are not called
    except BaseException:  # the script's __str__ failed: Python prints nothing but the newline
        return 1, ""
    return 1, text
