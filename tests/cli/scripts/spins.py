"""Fixture: a tight loop of small traced calls, "ready" printed once it runs, until stopped.

Recording takes most of such a loop's time, so a signal lands in flow-xray's
code far more often than in the loop's own.
"""

from __future__ import annotations

import time

from flow_xray import trace


@trace
def step(a: int, b: int) -> dict[str, int]:
    return {"a": a, "b": b}


@trace
def spin(seconds: float) -> int:
    deadline = time.monotonic() + seconds
    calls = 0
    while time.monotonic() < deadline:
        step(calls, 1)
        calls += 1
        if calls == 2000:
            print("ready", flush=True)
    return calls


if __name__ == "__main__":
    spin(30)
    print("not stopped", flush=True)
