"""The trace model on the floor: span records, the `TraceNode` tree, and building it.

No OpenTelemetry here, and nothing from the layers above (files, analyses,
pages) but the 0.2.0 convenience methods of `TraceResult` / `TraceNode`, which
delegate to them when called. `spans` is the one shape every span source is
reduced to (`SpanRecord`, the compact `SpanStore`); `build` turns records into
a tree (a pure function) of nodes filled by `fields`, lazily for a store's
rows (`lazy`, `rows`); `model` holds `TraceNode` / `TraceResult` / `Totals`;
`columns` is the one column builder (nodes to one list per field); `plain`
reads a tree's plain (JSON) form; `foreign` reads what other instrumentations
write.
"""

from __future__ import annotations

from flow_xray.tree.build import build_tree
from flow_xray.tree.model import Totals, TraceNode, TraceResult
from flow_xray.tree.spans import EventRecord, SpanRecord, SpanStore

__all__ = [
    "EventRecord",
    "SpanRecord",
    "SpanStore",
    "Totals",
    "TraceNode",
    "TraceResult",
    "build_tree",
]
