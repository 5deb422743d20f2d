"""Fixture: a traced call runs worker.py as a subprocess (ok or raising) and waits for it.

Usage: shell_out.py ok|raise. Prints {"pid": ..., "child": ..., "returncode": ...}.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from flow_xray import trace

WORKER = Path(__file__).with_name("worker.py")


@trace
def run_worker(mode: str) -> tuple[int, int]:
    proc = subprocess.run(
        [sys.executable, str(WORKER), mode], capture_output=True, text=True, check=False
    )
    sys.stderr.write(proc.stderr)
    return json.loads(proc.stdout.splitlines()[0])["pid"], proc.returncode


if __name__ == "__main__":
    child, code = run_worker(sys.argv[1])
    print(json.dumps({"pid": os.getpid(), "child": child, "returncode": code}))
