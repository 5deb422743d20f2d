"""Fixture: ProcessPoolExecutor work (map, and a submitted task that raises) under traced calls.

Usage: executor.py START_METHOD. Prints {"pid": ..., "error": ...}.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import sys
from concurrent.futures import ProcessPoolExecutor

from flow_xray import trace


@trace
def cube(x: int) -> int:
    return x**3


@trace
def refuse(x: int) -> int:
    raise ValueError(f"cannot take {x}")


@trace
def dispatch(method: str) -> tuple[list[int], str]:
    context = multiprocessing.get_context(method)
    with ProcessPoolExecutor(max_workers=2, mp_context=context) as pool:
        cubes = list(pool.map(cube, range(10)))
        failure = pool.submit(refuse, 7).exception()
    return cubes, repr(failure)


if __name__ == "__main__":
    _, error = dispatch(sys.argv[1])
    print(json.dumps({"pid": os.getpid(), "error": error}))
