"""Fixture: a traced loop of argv[1] calls; the one in the middle fails and is handled."""

from __future__ import annotations

import contextlib
import sys

from flow_xray import trace


@trace
def step(i: int, n: int) -> int:
    if i == n // 2:
        raise ValueError("the middle one")
    return i


@trace
def loop(n: int) -> None:
    for i in range(n):
        with contextlib.suppress(ValueError):
            step(i, n)


if __name__ == "__main__":
    loop(int(sys.argv[1]))
