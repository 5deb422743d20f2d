"""Fixture: traced work in three joined threads and one non-daemon thread left running."""

from __future__ import annotations

import threading
import time

from flow_xray import trace


@trace
def work(i: int) -> int:
    time.sleep(0.01)
    return i * i


@trace
def late_work() -> str:
    time.sleep(0.2)
    return "late"


if __name__ == "__main__":
    workers = [threading.Thread(target=work, args=(i,)) for i in range(3)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    # Not joined: Python waits for non-daemon threads at exit, and so does flow-xray.
    threading.Thread(target=late_work).start()
