"""Fixture: the sibling module imported by ``uses_sibling.py``."""

from __future__ import annotations

from flow_xray import trace


@trace
def greet(name: str) -> str:
    return f"hello {name}"
