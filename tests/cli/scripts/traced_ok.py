"""Fixture: a traced pipeline whose ``__main__`` block reports its argv and name."""

from __future__ import annotations

import json
import sys

from flow_xray import trace


@trace
def double(x: int) -> int:
    return 2 * x


@trace
def pipeline(x: int) -> int:
    return double(x) + 1


if __name__ == "__main__":
    pipeline(20)
    print(json.dumps({"argv": sys.argv[1:], "name": __name__, "argv0": sys.argv[0]}))
