"""0.2.0's import path ``flow_xray.value``: the scalar `Value` and its graph helpers.

A thin module over `flow_xray.autodiff.value`; new code can import the same
names from ``flow_xray`` or ``flow_xray.autodiff``.
"""

from __future__ import annotations

from flow_xray.autodiff.value import Value, backward_from, topological_order, zero_grad

__all__ = ["Value", "backward_from", "topological_order", "zero_grad"]
