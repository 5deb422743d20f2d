"""Analyses over the trace model and source code: counting, timing, the overview, diffs.

No OpenTelemetry here: these work on `TraceResult` / `TraceNode` and their
columns (`flow_xray.tree`), and on Python source read with `ast`, never
executed. `accounting` counts LLM usage once per request and errors once per
failure; `timing` finds own time, the slow calls and the critical path;
`overview` the root causes, costliest and repeated calls; `chat` each LLM
call's conversation; `diff` compares two runs; `static` is the static context
(what could have run).
"""

from __future__ import annotations

from flow_xray.analysis.static.functions import (
    CallSite as CallSite,
    Decorator as Decorator,
    FunctionInfo as FunctionInfo,
)
from flow_xray.analysis.static.index import StaticIndex as StaticIndex, unused as unused
from flow_xray.analysis.static.merge import (
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
