"""``trace.capture()`` and ``trace.run()``: collect the spans of a block into a `TraceResult`.

Provider rules: a global SDK provider the user set is never replaced — the
collecting processor is added to it. With no SDK provider global, flow-xray
registers a private provider (never made global) with
`flow_xray.runtime.tracer`, which gives its tracer to ``@trace`` inside captures
only; and it asks to be told about a provider set globally while a capture is
open, so that one is joined too (see `flow_xray.sdk.processor.ensure_collecting`).
With ``processes=True`` the spans of child processes started inside the block
join it (`flow_xray.sdk.processes`).
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import sys
from collections.abc import Callable
from types import FrameType, TracebackType
from typing import Any, Final

from flow_xray.analysis.accounting import build_result
from flow_xray.errors import ConfigurationError
from flow_xray.interrupts import let_signals_through
from flow_xray.runtime import captures
from flow_xray.sdk.processes import ProcessCollection
from flow_xray.sdk.processor import Collector, ensure_collecting, get_processor
from flow_xray.tree.model import TraceResult

logger = logging.getLogger("flow_xray")


class Capture:
    """Context manager collecting every span started inside it (see ``trace.capture``)."""

    def __init__(
        self, all_threads: bool = False, max_spans: int | None = None, processes: bool = False
    ) -> None:
        if max_spans is not None and (type(max_spans) is not int or max_spans < 1):
            raise ConfigurationError(f"max_spans must be a positive int or None, got {max_spans!r}")
        self.all_threads = all_threads
        self.max_spans = max_spans
        self.processes = processes
        self.result = TraceResult()
        self._collector: Collector | None = None
        self._token: Any = None
        self._children: ProcessCollection | None = None

    def __enter__(self) -> TraceResult:
        ensure_collecting()
        self._collector, self._token = get_processor().open_capture(
            self.all_threads, self.max_spans
        )
        try:
            if not self.all_threads:
                generator = opening_generator(sys._getframe(1))
                if generator is not None:
                    captures.bind_to_generator(self._collector, generator)
            if self.processes:
                children = self._children = ProcessCollection(self.all_threads)
                try:
                    children.open(self._collector)
                except Exception:
                    let_signals_through()
                    # Child processes then go untraced; the block itself still is.
                    logger.warning("flow-xray could not collect child processes", exc_info=True)
        except BaseException:  # a signal's: no block will run, nor this capture's exit
            self.__exit__(None, None, None)
            raise
        return self.result

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._collector is None:
            return
        collector, self._collector = self._collector, None
        children, self._children = self._children, None
        try:
            try:
                records = get_processor().close_capture(collector, self._token)
            except BaseException:  # (a signal's, half-way: the capture stops listening anyway)
                captures.close_capture(collector, self._token)
                raise
            merged = children.close(records) if children is not None else False
            built = build_result(records)
            if merged and children is not None:
                children.stamp_pids(built)
            self.result.roots, self.result.dropped_spans = built.roots, built.dropped_spans
        except Exception:
            # Raising here would replace the block's own exception, or fail a
            # block that worked: the result stays empty, and the log says why.
            let_signals_through()  # (an alarm's exception is the program's)
            logger.warning("flow-xray could not build the captured trace", exc_info=True)
        finally:
            if children is not None:  # (released by `close` already, unless interrupted)
                try:
                    children.release()
                except BaseException:  # (raised as `release` starts: it finishes only its own
                    children.release()  # steps, not a signal landing on its first instruction)
                    raise
        if exc is not None:
            self.result.exception = exc


_GENERATOR_FLAGS: Final = inspect.CO_GENERATOR | inspect.CO_ASYNC_GENERATOR
# Modules that drive a generator as a scope: its suspended part is the caller's ``with``
# block (``@contextmanager``) or the test (a pytest yield fixture), which the capture is for.
_SCOPE_DRIVERS: Final = frozenset({"contextlib", "_pytest.fixtures"})


def opening_generator(frame: FrameType | None) -> FrameType | None:
    """The frame of the generator whose body is opening a capture (looked for from the frame
    that called ``__enter__``), or None: not a generator, or one driven as a scope.

    ``ExitStack`` frames are looked through.
    """
    while frame is not None and frame.f_globals.get("__name__") == "contextlib":
        frame = frame.f_back
    if frame is None or not frame.f_code.co_flags & _GENERATOR_FLAGS:
        return None
    driver = frame.f_back
    if driver is not None and driver.f_globals.get("__name__") in _SCOPE_DRIVERS:
        return None
    return frame


def capture(
    all_threads: bool = False, max_spans: int | None = None, processes: bool = False
) -> Capture:
    """Collect the spans started in this context into a `TraceResult`, filled on exit.

    Spans of other instrumentations are collected too when they go through an
    SDK provider. Captures are isolated: two threads or asyncio tasks each get
    only their own calls. Work handed to a thread pool is included when the
    callable is wrapped with `propagate`. With ``all_threads=True`` every span
    started anywhere in the process while the block runs is collected. Spans
    still open at exit are included, marked incomplete. The result is filled
    even when the block raises (``result.exception`` holds the exception).

    ``max_spans`` bounds a huge trace: about that many calls are kept, the
    first half and the last half to finish, plus every failed call and every
    LLM call whatever the cap; a kept call whose caller was dropped hangs
    under its nearest kept ancestor, and ``result.dropped_spans`` (also in
    the totals and the viewer's header) says how many calls were left out.

    A capture opened in a generator's body collects the calls that body makes
    (and the work it awaits or hands to threads with `propagate`), not the
    caller's while the generator is suspended at a ``yield``. A generator
    driven as a scope is the exception: in a ``@contextmanager`` /
    ``@asynccontextmanager`` function or a pytest yield fixture, the ``with``
    block or the test is what the capture is for, and it is collected.

    With ``processes=True`` calls made in Python child processes started in
    the block join it too, under the call that started them, each node with
    its ``pid``: ``subprocess`` (nested too), ``multiprocessing`` with any
    start method, ``multiprocessing.Pool`` and ``ProcessPoolExecutor`` (tasks
    sit under the call that submitted them), and ``os.fork()``. A child that
    crashes or is killed loses only its unfinished calls, shown incomplete.
    A forked child never reports the parent's spans. See
    `flow_xray.sdk.processes` for how, and for what is not collected.

    Raises:
        ConfigurationError: ``max_spans`` is not a positive int or None.

    Example::

        with trace.capture() as result:
            agent("What is 2 + 2?")
        print(result.totals.summary())

        with trace.capture(processes=True) as result:
            with multiprocessing.Pool(4) as pool:
                pool.map(score, rows)
    """
    return Capture(all_threads, max_spans, processes)


def run(
    fn: Callable[..., Any], /, *args: Any, raise_exceptions: bool = False, **kwargs: Any
) -> TraceResult:
    """Call ``fn(*args, **kwargs)`` under a capture and return the `TraceResult`.

    ``fn``'s exception is not raised: ``result.ok`` is False and
    ``result.exception`` (0.3's ``result.error``) holds it, unless
    ``raise_exceptions=True``: then it is raised again, the same object,
    once the capture has closed (``KeyboardInterrupt`` and ``SystemExit``
    always propagate). ``result.value`` is the return value; a coroutine
    function is run to completion with ``asyncio.run`` (inside a running
    event loop, ``await`` `arun` instead). ``raise_exceptions`` is taken
    by ``run`` itself, never passed on to ``fn``.

    Example::

        result = trace.run(agent, "hello")
        assert result.ok, result.exception
    """
    with Capture() as result:
        try:
            if inspect.iscoroutinefunction(fn):
                result.value = asyncio.run(fn(*args, **kwargs))
            else:
                result.value = fn(*args, **kwargs)
        except Exception as exc:
            result.exception = exc
    return _returned(result, raise_exceptions)


async def arun(
    fn: Callable[..., Any], /, *args: Any, raise_exceptions: bool = False, **kwargs: Any
) -> TraceResult:
    """`run` for async code: ``await arun(fn, ...)`` inside a running event loop.

    ``fn(*args, **kwargs)`` is called under a capture and its result awaited
    when it is awaitable (a coroutine function, or a function returning a
    task or future); tasks it starts (``gather``, ``TaskGroup``) are captured
    with it, and concurrent ``arun`` calls get disjoint results. The rest is
    as in `run`.

    Example::

        result = await trace.arun(agent, "hello")
        print(result.value, result.totals.summary())
    """
    with Capture() as result:
        try:
            value = fn(*args, **kwargs)
            if inspect.isawaitable(value):
                value = await value
            result.value = value
        except Exception as exc:
            result.exception = exc
    return _returned(result, raise_exceptions)


def _returned(result: TraceResult, raise_exceptions: bool) -> TraceResult:
    """``result``, or its exception raised again when the caller asked for that."""
    if raise_exceptions and result.exception is not None:
        raise result.exception
    return result
