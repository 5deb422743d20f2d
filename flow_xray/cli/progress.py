"""A progress line on the terminal for output that takes more than a moment to write."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from flow_xray.cli.console import Console, scrubbed

# Writing faster than this says nothing: small traces stay quiet.
SHOW_AFTER_S = 1.0


@contextmanager
def progress(what: str, enabled: bool = True, console: Console | None = None) -> Iterator[None]:
    """Say on stderr what is being written, once it has taken more than `SHOW_AFTER_S`.

    On a terminal the line counts the seconds in place; elsewhere (a log, a
    pipe) it is written once, and a last line says how long it took.
    """
    if not enabled:
        yield
        return
    out = console or Console.current()
    what = scrubbed(what)
    started = time.monotonic()
    finished = threading.Event()
    shown = threading.Event()
    terminal = out.isatty()

    def tick() -> None:
        wait = SHOW_AFTER_S
        while not finished.wait(wait):
            elapsed = time.monotonic() - started
            if terminal:
                out.write(f"\rflow-xray: {what}… {elapsed:.0f} s")
            elif not shown.is_set():
                out.write(f"flow-xray: {what}…\n")
            shown.set()
            wait = 1.0

    try:
        ticker = threading.Thread(target=tick, name="flow-xray-progress", daemon=True)
        ticker.start()
    except RuntimeError:  # no new threads (shutting down, or threading.excepthook is None)
        yield
        return
    outcome = "done in"
    try:
        yield
    except BaseException:
        outcome = "stopped after"
        raise
    finally:
        finished.set()
        ticker.join()
        if shown.is_set():
            elapsed = time.monotonic() - started
            prefix = "\r" if terminal else ""
            out.write(f"{prefix}flow-xray: {what}: {outcome} {elapsed:.1f} s\n")
