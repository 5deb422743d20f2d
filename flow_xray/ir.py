"""0.2.0's import path ``flow_xray.ir``: the JSON IR (version 1) of a `Value` graph.

A thin module over `flow_xray.autodiff.ir`.
"""

from __future__ import annotations

from flow_xray.autodiff.ir import graph_to_ir, ir_to_json

__all__ = ["graph_to_ir", "ir_to_json"]
