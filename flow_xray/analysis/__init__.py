"""Analyses over plain trace data and source code: run diffs and a static call graph.

No OpenTelemetry here: these work on `TraceResult` / `TraceNode` (or their JSON
form) and on Python source read with `ast`, never executed.
"""

from __future__ import annotations

from flow_xray.analysis.static_index import (
    CallSite as CallSite,
    Decorator as Decorator,
    FunctionInfo as FunctionInfo,
    StaticIndex as StaticIndex,
    unused as unused,
)
from flow_xray.analysis.static_merge import (
    Edge as Edge,
    Ghost as Ghost,
    StaticContext as StaticContext,
)

__all__ = [
    "CallSite",
    "Decorator",
    "Edge",
    "FunctionInfo",
    "Ghost",
    "StaticContext",
    "StaticIndex",
    "unused",
]
