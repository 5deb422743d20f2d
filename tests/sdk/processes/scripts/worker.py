"""Fixture: a Python worker run as a subprocess: a traced job, or one that raises.

Usage: worker.py ok|raise. Prints {"pid": ...}.
"""

from __future__ import annotations

import json
import os
import sys

from flow_xray import trace


@trace(kind="tool")
def parse(text: str) -> list[str]:
    return text.split()


@trace
def job(mode: str) -> int:
    words = parse("a b c")
    if mode == "raise":
        raise RuntimeError("worker failed on purpose")
    return len(words)


if __name__ == "__main__":
    print(json.dumps({"pid": os.getpid()}), flush=True)
    job(sys.argv[1])
