"""The static context: a call graph of the program's source, matched with a run.

`index.StaticIndex.build` reads source with `ast` (`scan`, then `resolve`);
`merge` matches a run's calls to it (executed marks, ghosts, runtime-only
edges); `rows` puts the result on the viewer page. No OpenTelemetry here.
"""

from __future__ import annotations

from flow_xray.analysis.static.functions import CallSite, Decorator, FunctionInfo
from flow_xray.analysis.static.index import StaticIndex, unused
from flow_xray.analysis.static.merge import Edge, Ghost, StaticContext

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
