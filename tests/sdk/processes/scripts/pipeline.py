"""Fixture: a pipeline that fans out to a process pool and shells out to a Python worker.

Prints {"pid": ..., "worker": ...} (this process and the subprocess worker).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from flow_xray import trace

WORKER = Path(__file__).with_name("worker.py")


@trace
def score(x: int) -> float:
    return x / 10


@trace
def fan_out(items: list[int]) -> list[float]:
    with ProcessPoolExecutor(max_workers=2) as pool:
        return list(pool.map(score, items))


@trace
def shell_out() -> int:
    proc = subprocess.run(
        [sys.executable, str(WORKER), "ok"], capture_output=True, text=True, check=True
    )
    pid: int = json.loads(proc.stdout.splitlines()[0])["pid"]
    return pid


@trace
def pipeline() -> int:
    fan_out(list(range(6)))
    return shell_out()


if __name__ == "__main__":
    worker = pipeline()
    print(json.dumps({"pid": os.getpid(), "worker": worker}))
