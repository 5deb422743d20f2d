"""Fixture: spans queued for export when the process forks; both processes exit normally.

Usage: fork_export.py FILE. configure() writes OTLP JSON lines to FILE; a span ends
(queued, not yet written), the process forks, the child ends a span of its own and
exits through sys.exit, the parent waits and exits. Prints {"role": ..., "pid": ...}.
"""

from __future__ import annotations

import json
import os
import sys

from flow_xray import configure, trace


@trace
def queued_in_parent() -> None:
    pass


@trace
def in_child() -> None:
    pass


if __name__ == "__main__":
    configure(json_path=sys.argv[1])
    queued_in_parent()
    child = os.fork()
    if child == 0:
        in_child()
        print(json.dumps({"role": "child", "pid": os.getpid()}), flush=True)
        sys.exit(0)
    os.waitpid(child, 0)
    print(json.dumps({"role": "parent", "pid": os.getpid()}), flush=True)
