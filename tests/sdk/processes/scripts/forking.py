"""Fixture: os.fork() inside a traced call; the child runs traced work.

Usage: forking.py wait|outlive [MARKER]. With "wait" the child leaves with os._exit and
the parent waits for it. With "outlive" the child returns normally and finishes the
script long after the parent ended (then it writes MARKER). Prints {"pid": ..., "child": ...}.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from flow_xray import trace


@trace
def child_work(n: int) -> int:
    return sum(range(n))


@trace
def parent_work() -> int:
    return 1


@trace
def split(mode: str) -> int:
    parent_work()
    pid = os.fork()
    if pid == 0:
        child_work(10)
        if mode == "wait":
            os._exit(0)
        return 0
    if mode == "wait":
        os.waitpid(pid, 0)
    return pid


if __name__ == "__main__":
    mode = sys.argv[1]
    child = split(mode)
    if child == 0:  # the forked child: outlive the parent, then finish the script
        parent = os.getppid()
        deadline = time.monotonic() + 60
        while os.getppid() == parent and time.monotonic() < deadline:
            time.sleep(0.05)
        child_work(20)
        Path(sys.argv[2]).write_text("done", encoding="utf-8")
    else:
        print(json.dumps({"pid": os.getpid(), "child": child}), flush=True)
