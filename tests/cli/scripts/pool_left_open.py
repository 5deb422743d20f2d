"""Fixture: traced work on a thread pool the script never shuts down (Python still exits)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from flow_xray import trace

pool = ThreadPoolExecutor(max_workers=2)


@trace
def square(x: int) -> int:
    return x * x


if __name__ == "__main__":
    print(list(pool.map(square, range(3))))
