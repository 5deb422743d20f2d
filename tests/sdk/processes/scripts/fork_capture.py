"""Fixture: os.fork() inside trace.capture(); both processes report what their capture holds.

Usage: fork_capture.py plain|processes. Each process prints one JSON line:
{"role": "parent"|"child", "pid": ..., "nodes": [[name, pid], ...]}.
"""

from __future__ import annotations

import json
import os
import sys

from flow_xray import trace


@trace
def step(label: str) -> str:
    return label


if __name__ == "__main__":
    with trace.capture(processes=sys.argv[1] == "processes") as result:
        step("before fork")
        child = os.fork()
        step("in child" if child == 0 else "in parent")
        if child != 0:
            os.waitpid(child, 0)
    role = "child" if child == 0 else "parent"
    nodes = [[node.name, node.inputs["label"], node.pid] for node in result]
    print(json.dumps({"role": role, "pid": os.getpid(), "nodes": nodes}), flush=True)
    if child == 0:
        os._exit(0)
