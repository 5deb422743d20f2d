"""Fixture: a module run with ``-m``; reports its name and arguments."""

from __future__ import annotations

import json
import sys

from flow_xray import trace


@trace
def handle(args: list[str]) -> int:
    return len(args)


if __name__ == "__main__":
    handle(sys.argv[1:])
    print(json.dumps({"argv": sys.argv[1:], "name": __name__}))
