"""Fixture: makes a traced call, then moves to a new working directory and stays there."""

from __future__ import annotations

import os

from flow_xray import trace


@trace
def step() -> str:
    return "done"


if __name__ == "__main__":
    step()
    os.makedirs("elsewhere", exist_ok=True)
    os.chdir("elsewhere")
