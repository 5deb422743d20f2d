"""Per-call cost of the worst argument shapes and exceptions (target: every call within a few ms).

Run: ``python tests/benchmarks/bench_worst_values.py [--calls N] [--no-repr] [--only TEXT]``.
For each shape of ``tests/reliability/worst_values.py``: the time of one
traced call taking it as argument and returning it (inputs and output both
captured), inside ``trace.capture()``; the fastest of ``--calls`` calls (5)
and the slowest, beside the same call untraced. For scale, the time ``repr``
takes on it (what capturing it in full would cost), measured once and capped
at 5 s (``--no-repr`` leaves that column out: the quick run). Then each
exception of ``WORST_ERRORS`` (50 MB args) raised by a traced call (not
passed to it), beside the same raise untraced, and ``str`` of it for scale.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "reliability"))

import machine  # noqa: F401  (imported first: this checkout's flow_xray, not an installed one)
from worst_values import WORST, WORST_ERRORS

from flow_xray import trace


def plain(value: Any) -> Any:
    return value


_pending: list[BaseException] = []


def raising(_: object) -> None:
    """Raise the exception set aside (not an argument: the argument shapes cover that).

    It stays referenced until after the timing, so freeing its 50 MB is not timed.
    """
    raise _pending[-1]


traced = trace(plain)
traced_raising = trace(raising)


def _ms(fn: Callable[[Any], Any], value: Any) -> float:
    # A raised exception sits in a cycle (its traceback's frames hold it): collected
    # here, not by a GC pass that would free an earlier 50 MB inside the timing.
    gc.collect()
    started = time.perf_counter()
    with contextlib.suppress(Exception):
        fn(value)
    return (time.perf_counter() - started) * 1e3


def _full_ms(render: Callable[[Any], Any], value: Any) -> str:
    """The time ``render(value)`` takes, in a thread given up after 5 s."""
    done: list[float] = []

    def run() -> None:
        started = time.perf_counter()
        with contextlib.suppress(Exception):
            render(value)
        done.append((time.perf_counter() - started) * 1e3)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(5.0)
    return f"{done[0]:,.0f} ms" if done else "> 5 s"


Row = tuple[str, float, float, float, str]  # name, min ms, max ms, untraced ms, full render


def _table(title: str, rows: list[Row], full: str) -> None:
    width = max(len(r[0]) for r in rows)
    print(f"{title.ljust(width)}  traced call: min / max ms  (untraced)  {full}")
    for name, low, high, bare, cost in rows:
        print(f"{name.ljust(width)}  {low:8.2f} / {high:6.2f}      ({bare:.3f})  {cost}")


def arguments(calls: int, with_repr: bool, only: str) -> list[Row]:
    rows = []
    for name, build in WORST.items():
        if only not in name:
            continue
        value = build()
        with trace.capture():
            times = [_ms(traced, value) for _ in range(calls)]
        bare = min(_ms(plain, value) for _ in range(calls))
        full = _full_ms(repr, value) if with_repr else ""
        rows.append((name, min(times), max(times), bare, full))
        del value
    return rows


def exceptions(calls: int, with_repr: bool, only: str) -> list[Row]:
    rows = []
    for name, build in WORST_ERRORS.items():
        if only not in name:
            continue
        times, bare = [], []
        for _ in range(calls):  # a fresh exception each time: a raised one keeps its traceback
            _pending[:] = [build()]
            with trace.capture():
                times.append(_ms(traced_raising, None))
            _pending[:] = [build()]
            bare.append(_ms(raising, None))
        _pending.clear()
        full = _full_ms(str, build()) if with_repr else ""
        rows.append((name, min(times), max(times), min(bare), full))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=5, help="calls per shape (default 5)")
    parser.add_argument("--no-repr", action="store_true", help="skip the full repr/str timing")
    parser.add_argument("--only", default="", help="only the shapes whose name contains this")
    options = parser.parse_args()
    with_repr = not options.no_repr
    args = arguments(options.calls, with_repr, options.only)
    errors = exceptions(options.calls, with_repr, options.only)
    if args:
        _table("argument shape", args, "repr of it" if with_repr else "")
    if errors:
        print()
        _table("exception raised", errors, "str of it" if with_repr else "")
    rows = args + errors
    if rows:
        print(f"\nworst traced call: {max(r[2] for r in rows):.2f} ms")


if __name__ == "__main__":
    main()
