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
