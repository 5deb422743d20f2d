"""Fixture: prints "ready" from inside traced calls, then sleeps until interrupted.

A daemon thread is also inside a traced call that never returns, so its span
is still open when the process stops.
"""

from __future__ import annotations

import threading
import time

from flow_xray import trace

started = threading.Event()


@trace
def background_poll() -> None:
    started.set()
    while True:
        time.sleep(0.05)


@trace
def wait_forever() -> None:
    threading.Thread(target=background_poll, daemon=True).start()
    started.wait(5)
    print("ready", flush=True)
    for _ in range(600):
        time.sleep(0.05)


if __name__ == "__main__":
    wait_forever()
