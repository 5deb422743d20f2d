"""From a trace's JSON form to flat viewer rows, a `Graph` and DOT text.

Node status, used for colour everywhere:

- ``error``: the call raised (``status == "error"``).
- ``slow``: the call's *own* time -- its latency minus the time covered by its
  children's intervals -- is at least `SLOW_SHARE` of the trace's wall time.
  Measuring own time points at the call where time actually went rather than
  at every ancestor of it; a trace with a single node has nothing slow.
- ``ghost``: not a call but a function that could have run there and did not
  (``ghost: true``, added by the static context, see `flow_xray.analysis`).
- ``ok``: everything else, including calls that never ended (their labels say so).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeGuard

from flow_xray.render.graph import Graph, GraphEdge, GraphNode, graph_to_dot

SLOW_SHARE = 0.2


def flatten_trace(data: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Return every node of a trace in pre-order, without ``children``.

    Each row is a shallow copy of the node's fields plus ``parent`` (the
    row index of its parent, -1 for roots), ``self_ms`` (its own time: latency
    not covered by its children, None when it never ended) and ``view_status``
    (``ok``, ``slow`` or ``error``, see the module docstring). Iterative, so any
    depth works.
    """
    rows: list[dict[str, Any]] = []
    kids: list[list[int]] = []
    spans: list[tuple[float, float | None]] = []
    stack: list[tuple[Mapping[str, Any], int]] = [(n, -1) for n in reversed(_roots(data))]
    while stack:
        node, parent = stack.pop()
        row = {k: v for k, v in node.items() if k != "children"}
        row["parent"] = parent
        index = len(rows)
        rows.append(row)
        kids.append([])
        start = row.get("start_ms")
        start = float(start) if _is_number(start) else 0.0
        latency = row.get("latency_ms")
        spans.append((start, start + float(latency) if _is_number(latency) else None))
        if parent >= 0:
            kids[parent].append(index)
        children = node.get("children") or ()
        stack.extend((c, index) for c in reversed(children) if isinstance(c, Mapping))
    wall = _wall_ms(data, spans)
    for index, row in enumerate(rows):
        start, end = spans[index]
        row["self_ms"] = None if end is None else _own_ms(start, end, kids[index], spans)
        row["view_status"] = _status(row, len(rows), wall)
    return rows


def trace_to_graph(data: Mapping[str, Any]) -> Graph:
    """Return the call tree of a trace as a top-to-bottom `Graph` (parent -> child).

    Labels read ``name`` then ``latency · tokens``; ``detail`` holds the node's
    fields. Node ids are the trace's ids when DOT-safe, else ``n<row>``.
    """
    rows = flatten_trace(data)
    ids: list[str] = []
    seen: set[str] = set()
    for index, row in enumerate(rows):
        raw = str(row.get("id") or "")
        node_id = raw if raw.isidentifier() and raw.isascii() and raw not in seen else f"n{index}"
        while node_id in seen:
            node_id += "_"
        seen.add(node_id)
        ids.append(node_id)
    nodes = tuple(
        GraphNode(ids[i], node_label(row), row["view_status"], _detail(row))
        for i, row in enumerate(rows)
    )
    edges = tuple(
        GraphEdge(ids[row["parent"]], ids[i]) for i, row in enumerate(rows) if row["parent"] >= 0
    )
    return Graph(nodes, edges, "TB")


def trace_to_dot(data: Mapping[str, Any]) -> str:
    """Return a trace's call tree as Graphviz DOT text (see `trace_to_graph`)."""
    return graph_to_dot(trace_to_graph(data), name="trace")


def node_label(row: Mapping[str, Any]) -> str:
    """Two label lines: the call's name (``?`` when missing or null), then its latency
    and tokens when known."""
    latency = row.get("latency_ms")
    parts = ["never ended" if not _is_number(latency) else format_ms(float(latency))]
    tokens = node_tokens(row)
    if tokens:
        parts.append(f"{tokens:,} tok")
    if row.get("incomplete") and _is_number(latency):
        parts.append("incomplete")
    name = row.get("name")
    return f"{'?' if name is None else name}\n{' · '.join(parts)}"


def node_tokens(row: Mapping[str, Any]) -> int:
    """Total tokens a node reports itself (``total_tokens``, else prompt + completion)."""
    meta = row.get("meta")
    if not isinstance(meta, Mapping):
        return 0
    total = meta.get("total_tokens")
    if _is_int(total):
        return int(total)
    parts = (meta.get("prompt_tokens"), meta.get("completion_tokens"))
    return sum(int(v) for v in parts if _is_int(v))


def format_ms(ms: float) -> str:
    """Human latency: ``0.42 ms``, ``12.5 ms``, ``1.23 s``."""
    if ms >= 1000:
        return f"{ms / 1000:.2f} s"
    if ms >= 10:
        return f"{ms:.1f} ms"
    return f"{ms:.2f} ms"


def _roots(data: Mapping[str, Any]) -> Sequence[Mapping[str, Any]]:
    nodes = data.get("nodes")
    return [n for n in nodes if isinstance(n, Mapping)] if isinstance(nodes, list) else []


def _wall_ms(data: Mapping[str, Any], spans: Sequence[tuple[float, float | None]]) -> float:
    totals = data.get("totals")
    if isinstance(totals, Mapping) and _is_number(totals.get("wall_time_ms")):
        return float(totals["wall_time_ms"])
    if not spans:
        return 0.0
    return max(e if e is not None else s for s, e in spans) - min(s for s, _ in spans)


def _status(row: Mapping[str, Any], count: int, wall: float) -> str:
    if row.get("status") == "error":
        return "error"
    if row.get("ghost") is True:  # a function that could have run here but did not
        return "ghost"
    own = row["self_ms"]
    if count < 2 or wall <= 0 or own is None:
        return "ok"
    return "slow" if own >= SLOW_SHARE * wall else "ok"


def _own_ms(
    start: float, end: float, children: Sequence[int], spans: Sequence[tuple[float, float | None]]
) -> float:
    """Latency not covered by the union of the children's intervals (clipped to the parent).

    A child that never ended counts as running until the parent's end.
    """
    covered = 0.0
    cursor = start
    for c_start, c_end in sorted(_closed(spans[k], end) for k in children):
        c_start, c_end = max(c_start, cursor), min(c_end, end)
        if c_end > c_start:
            covered += c_end - c_start
            cursor = c_end
    return max(0.0, end - start - covered)


def _closed(span: tuple[float, float | None], end: float) -> tuple[float, float]:
    return (span[0], end if span[1] is None else span[1])


def _detail(row: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in row.items() if k not in ("parent", "view_status", "self_ms")}


def _is_number(value: Any) -> TypeGuard[int | float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_int(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)
