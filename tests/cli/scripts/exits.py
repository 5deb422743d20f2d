"""Fixture: runs one traced step, then ``sys.exit(argv[1])`` (a number or a message)."""

from __future__ import annotations

import sys

from flow_xray import trace


@trace
def step() -> str:
    return "done"


if __name__ == "__main__":
    step()
    code = sys.argv[1]
    sys.exit(int(code) if code.lstrip("-").isdigit() else code)
