"""0.2.0's import path ``flow_xray.debugger``: stepping and snapshot debuggers.

A thin module over `flow_xray.autodiff.debugger` (whose docstring tells views,
which export the current gradients, from steppers, which run a pass).
"""

from __future__ import annotations

from flow_xray.autodiff.debugger import GraphDebugger, TwoStepDebugger, iter_backward_steps

__all__ = ["GraphDebugger", "TwoStepDebugger", "iter_backward_steps"]
