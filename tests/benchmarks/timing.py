"""Timing helpers shared by the benchmark scripts."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any


def per_call_us(fn: Callable[[], Any], calls: int) -> float:
    """Mean microseconds per call of ``fn`` over ``calls`` calls."""
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - start) / calls * 1e6


def print_table(rows: Sequence[tuple[str, str]]) -> None:
    """Print ``(measure, value)`` rows as two aligned columns."""
    width = max(len(name) for name, _ in rows)
    print(f"{'measure'.ljust(width)}  value")
    for name, value in rows:
        print(f"{name.ljust(width)}  {value}")


def cpu_per_call_us(fn: Callable[[], Any], calls: int) -> float:
    """Mean microseconds of this process's CPU time (all its threads) per call of ``fn``.

    CPU time does not count the time other processes hold the CPU, so figures
    stay comparable on a busy machine; background threads (exporters) count.
    """
    start = time.process_time()
    for _ in range(calls):
        fn()
    return (time.process_time() - start) / calls * 1e6


def best_per_call_us(fn: Callable[[], Any], calls: int, batches: int = 5) -> float:
    """Fastest of ``batches`` batches in CPU microseconds per call (``calls`` calls in all).

    On a busy machine a batch is often slowed by other processes (cache and
    scheduler effects reach CPU time too), never sped up, so the fastest batch
    is the best estimate of the cost itself.
    """
    size = max(calls // batches, 1)
    return min(cpu_per_call_us(fn, size) for _ in range(batches))
