"""Fixture for ``flow-xray dot export``: defines ``root``, a small Value graph."""

from __future__ import annotations

from flow_xray import Value

a = Value(2.0, "a")
b = Value(-3.0, "b")
c = Value(10.0, "c")
root = (a * b + c).relu()
root.label = "out"
