"""Multi-process tracing benchmark: figures measured side by side in one run.

Run: ``python tests/benchmarks/bench_processes.py``. Prints:

- the cost of a traced call in a child process under ``trace.capture(processes=True)``
  (the call plus sending its two frames, measured in the child, plus the
  parent's share of merging it when the capture closes) against the same
  traced call in-process inside ``trace.capture()`` (the call plus its share
  of closing the capture);
- ``multiprocessing.Pool(4).map`` throughput: untraced, decorated but with no
  capture open, and decorated under a processes capture, for a 1 µs task (the
  worst case: the span costs far more than the work) and a task of a few
  hundred µs (fork and spawn start methods); each figure the median of
  interleaved rounds, the task's own time measured here.
"""

from __future__ import annotations

import gc
import multiprocessing
import statistics
import subprocess
import sys
import time
from collections.abc import Callable

import machine  # noqa: F401  (imported first: this checkout's flow_xray, not an installed one)
from timing import print_table

from flow_xray import trace

CALLS = 20_000
ROUNDS = 5
ITEMS = 20_000
POOL_ROUNDS = 5


def business(i: int) -> int:
    return sum(range(i % 64))


@trace
def traced_business(i: int) -> int:
    return sum(range(i % 64))


def task(i: int) -> int:
    return sum(range(20_000 + i % 64))


@trace
def traced_task(i: int) -> int:
    return sum(range(20_000 + i % 64))


def _in_process() -> tuple[float, float]:
    """(µs per call inside the block, µs per span to close the capture)."""
    with trace.capture() as result:
        start = time.perf_counter()
        for i in range(CALLS):
            traced_business(i)
        loop = time.perf_counter() - start
        closing = time.perf_counter()
    close = time.perf_counter() - closing
    assert sum(1 for _ in result) == CALLS
    return loop / CALLS * 1e6, close / CALLS * 1e6


def _in_child() -> tuple[float, float]:
    """(µs per call in the child, measured there; µs per span to merge in the parent)."""
    with trace.capture(processes=True) as result:
        proc = subprocess.run(
            [sys.executable, __file__, "--child", str(CALLS)],
            capture_output=True,
            text=True,
            check=True,
        )
        closing = time.perf_counter()
    close = time.perf_counter() - closing
    spans = sum(1 for _ in result)
    assert spans == CALLS, (spans, proc.stderr)
    return float(proc.stdout.strip()), close / CALLS * 1e6


def child_main(calls: int) -> None:
    """In the child: time the traced calls (each one sent to the parent as it starts and ends)."""
    start = time.perf_counter()
    for i in range(calls):
        traced_business(i)
    print((time.perf_counter() - start) / calls * 1e6)


def bench_child_span() -> list[tuple[str, str]]:
    here, there = [], []
    for _ in range(ROUNDS):
        gc.collect()
        here.append(_in_process())
        there.append(_in_child())
    call_in, close_in = (statistics.median(x) for x in zip(*here, strict=True))
    call_child, merge = (statistics.median(x) for x in zip(*there, strict=True))
    total_in, total_child = call_in + close_in, call_child + merge
    return [
        ("traced call in-process (call + its share of closing)", f"{total_in:.1f} µs"),
        (
            "traced call in a child (call + send, + parent merge)",
            f"{total_child:.1f} µs ({call_child:.1f} + {merge:.1f})",
        ),
        ("added cost per child span", f"{total_child - total_in:+.1f} µs"),
        ("child span / in-process span", f"{total_child / total_in:.2f}x"),
    ]


def _pool_rate(method: str, fn: Callable[[int], int], items: int, processes: bool) -> float:
    """Items per second of Pool(4).map(fn) (pool started and warmed up first)."""
    context = multiprocessing.get_context(method)
    with trace.capture(processes=processes) as result, context.Pool(4) as pool:
        pool.map(fn, range(40))  # every worker up and importing done
        start = time.perf_counter()
        pool.map(fn, range(items))
        elapsed = time.perf_counter() - start
    if processes:
        assert sum(1 for _ in result) == items + 40
    return items / elapsed


def _task_us(fn: Callable[[int], int]) -> float:
    """Median µs of one untraced call of ``fn`` here (what a pool item costs before tracing)."""
    times = []
    for _ in range(5):
        start = time.perf_counter()
        for i in range(200):
            fn(i)
        times.append((time.perf_counter() - start) / 200 * 1e6)
    return statistics.median(times)


def bench_pool() -> list[tuple[str, str]]:
    rows = []
    workloads = (
        (f"{_task_us(business):.1f} µs task", business, traced_business, ITEMS),
        (f"{_task_us(task):.0f} µs task", task, traced_task, 2_000),
    )
    for method in ("fork", "spawn"):
        for label, plain, traced_fn, items in workloads:
            rates: dict[str, list[float]] = {"bare": [], "idle": [], "traced": []}
            for _ in range(POOL_ROUNDS):
                rates["bare"].append(_pool_rate(method, plain, items, processes=False))
                rates["idle"].append(_pool_rate(method, traced_fn, items, processes=False))
                rates["traced"].append(_pool_rate(method, traced_fn, items, processes=True))
            bare, idle, traced = (statistics.median(rates[k]) for k in ("bare", "idle", "traced"))
            rows.append(
                (
                    f"Pool(4).map, {method}, {label}: untraced / @trace idle / processes capture",
                    f"{bare:,.0f} / {idle:,.0f} / {traced:,.0f} items/s "
                    f"(traced: {bare / traced:.2f}x the time)",
                )
            )
    return rows


def main() -> None:
    print_table(bench_child_span() + bench_pool())


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        child_main(int(sys.argv[2]))
    else:
        main()
