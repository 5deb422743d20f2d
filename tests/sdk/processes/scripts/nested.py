"""Fixture: three Python processes deep: outer -> subprocess middle -> subprocess inner.

Usage: nested.py [outer|middle|inner]. Every level prints its pid on a line of its own.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from flow_xray import trace

NEXT = {"outer": "middle", "middle": "inner"}


@trace
def level(name: str) -> str:
    below = NEXT.get(name)
    if below is None:
        return name
    proc = subprocess.run(
        [sys.executable, __file__, below], capture_output=True, text=True, check=True
    )
    sys.stdout.write(proc.stdout)
    return name


if __name__ == "__main__":
    name = sys.argv[1] if len(sys.argv) > 1 else "outer"
    print(json.dumps({"level": name, "pid": os.getpid()}), flush=True)
    level(name)
