"""Fixture: a traced call maps a traced function over N items on a multiprocessing.Pool(4).

Usage: pool_map.py START_METHOD [N]. Prints {"pid": ..., "total": ...}.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import sys

from flow_xray import trace


@trace
def square(x: int) -> int:
    return x * x


@trace
def fan_out(method: str, n: int) -> list[int]:
    with multiprocessing.get_context(method).Pool(4) as pool:
        return pool.map(square, range(n))


if __name__ == "__main__":
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    squares = fan_out(sys.argv[1], count)
    print(json.dumps({"pid": os.getpid(), "total": sum(squares)}))
