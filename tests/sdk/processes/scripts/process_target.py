"""Fixture: a multiprocessing.Process whose target is traced and calls a traced step.

Usage: process_target.py START_METHOD. Prints {"pid": ..., "child": ...}.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import sys

from flow_xray import trace


@trace
def step(i: int) -> int:
    return i + 1


@trace
def work(n: int) -> None:
    for i in range(n):
        step(i)


@trace
def launch(method: str) -> int:
    process = multiprocessing.get_context(method).Process(target=work, args=(3,))
    process.start()
    process.join()
    return process.pid or 0


if __name__ == "__main__":
    child = launch(sys.argv[1])
    print(json.dumps({"pid": os.getpid(), "child": child}))
