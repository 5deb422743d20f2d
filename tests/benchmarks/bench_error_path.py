"""The error path and generators: time through N traced frames, memory of yielded chunks.

Run: ``python tests/benchmarks/bench_error_path.py [--depths 15 150 1000] [--rounds N]``.

An exception raised N traced calls deep is recorded by each of them: the
time from the raise to the caller, per frame, fastest of ``--rounds``
(3), beside the same recursion untraced; the per-frame cost should stay flat
as N grows (each frame's text is formatted once). Then the peak memory
(tracemalloc) of consuming a generator of 50 chunks of 10 MB, untraced and
traced: a traced generator keeps no chunk alive.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import sys
import time
import tracemalloc
from collections.abc import Callable, Iterator

import machine  # noqa: F401  (imported first: this checkout's flow_xray, not an installed one)

from flow_xray import trace


def bare(n: int) -> int:
    if n == 0:
        raise ValueError("bottom")
    return bare(n - 1)


@trace
def traced(n: int) -> int:
    if n == 0:
        raise ValueError("bottom")
    return traced(n - 1)


def _seconds(fn: Callable[[int], int], depth: int) -> float:
    gc.collect()
    started = time.perf_counter()
    with contextlib.suppress(ValueError):
        fn(depth)
    return time.perf_counter() - started


def error_path(depths: list[int], rounds: int) -> None:
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 4 * max(depths) + 200))
    print("traced depth  to the caller (ms)  per frame (us)  untraced (ms)")
    base: float | None = None
    for depth in depths:
        with trace.capture():
            best = min(_seconds(traced, depth) for _ in range(rounds))
        plain = min(_seconds(bare, depth) for _ in range(rounds))
        per_frame = best / (depth + 1) * 1e6
        base = base or per_frame
        print(
            f"{depth:>12,}  {best * 1e3:>18.1f}  {per_frame:>14.0f}  {plain * 1e3:>13.2f}"
            f"   ({per_frame / base:.2f}x the first per frame)"
        )


def _chunks() -> Iterator[bytearray]:
    for _ in range(50):
        yield bytearray(10_000_000)


def _peak_mb(gen: Callable[[], Iterator[bytearray]]) -> float:
    gc.collect()
    tracemalloc.start()
    with trace.capture():
        for chunk in gen():
            del chunk
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 1e6


def generator_memory() -> None:
    print("\n50 yielded chunks of 10 MB, peak memory while consumed:")
    print(f"  untraced generator  {_peak_mb(_chunks):6.0f} MB")
    print(f"  traced generator    {_peak_mb(trace(_chunks)):6.0f} MB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--depths", type=int, nargs="+", default=[15, 150, 1000])
    parser.add_argument("--rounds", type=int, default=3, help="fastest of N (default 3)")
    options = parser.parse_args()
    error_path(options.depths, options.rounds)
    generator_memory()


if __name__ == "__main__":
    main()
