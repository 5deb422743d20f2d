"""Per-call cost of the worst argument shapes (target: every call within a few ms).

Run: ``python tests/benchmarks/bench_worst_values.py``. For each shape of
``tests/reliability/worst_values.py``: the time of one traced call taking it
as argument and returning it (inputs and output both captured), inside
``trace.capture()``; the fastest of 5 calls and the slowest, beside the same
call untraced. For scale, the time ``repr`` takes on it (what capturing it
in full would cost), measured once and capped at 5 s.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "reliability"))

from worst_values import WORST

from flow_xray import trace


def plain(value: Any) -> Any:
    return value


traced = trace(plain)


def _ms(fn: Any, value: Any) -> float:
    started = time.perf_counter()
    fn(value)
    return (time.perf_counter() - started) * 1e3


def _repr_ms(value: Any) -> str:
    done: list[float] = []

    def run() -> None:
        started = time.perf_counter()
        with contextlib.suppress(Exception):
            repr(value)
        done.append((time.perf_counter() - started) * 1e3)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(5.0)
    return f"{done[0]:,.0f} ms" if done else "> 5 s"


def main() -> None:
    rows = []
    for name, build in WORST.items():
        value = build()
        with trace.capture():
            times = [_ms(traced, value) for _ in range(5)]
        bare = min(_ms(plain, value) for _ in range(5))
        rows.append((name, min(times), max(times), bare, _repr_ms(value)))
        del value
    width = max(len(r[0]) for r in rows)
    print(f"{'shape'.ljust(width)}  traced call: min / max ms  (untraced)  repr of it")
    for name, low, high, bare, full in rows:
        print(f"{name.ljust(width)}  {low:8.2f} / {high:6.2f}      ({bare:.3f})  {full}")
    print(f"worst traced call: {max(r[2] for r in rows):.2f} ms")


if __name__ == "__main__":
    main()
