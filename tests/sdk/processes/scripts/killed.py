"""Fixture: a traced call starts a worker, waits until it hangs inside a traced call, SIGKILLs it.

Usage: killed.py. The worker (this file with "worker") finishes a traced step first.
Prints {"pid": ..., "child": ..., "returncode": ...}.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

from flow_xray import trace


@trace
def prepare() -> str:
    return "ready"


@trace
def hang() -> None:
    print("hanging", flush=True)
    time.sleep(120)


@trace
def job() -> None:
    prepare()
    hang()


@trace
def supervise() -> tuple[int, int]:
    child = subprocess.Popen([sys.executable, __file__, "worker"], stdout=subprocess.PIPE)
    assert child.stdout is not None
    child.stdout.readline()  # the worker is inside hang()
    os.kill(child.pid, signal.SIGKILL)
    return child.pid, child.wait()


if __name__ == "__main__":
    if sys.argv[1:] == ["worker"]:
        job()
    else:
        pid, code = supervise()
        print(json.dumps({"pid": os.getpid(), "child": pid, "returncode": code}))
