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
from dataclasses import dataclass
from typing import Any, TypeGuard

from flow_xray.render.graph import Graph, GraphEdge, GraphNode, graph_to_dot

SLOW_SHARE = 0.2


# Per field, one value per call (pre-order), plus "parent": the trace's flat form.
Columns = dict[str, list[Any]]
# Per field, the calls (row indexes) whose node has no such key.
Absent = dict[str, list[int]]
_MISSING: Any = object()


def flatten_trace(data: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Return every node of a trace in pre-order, without ``children``.

    Each row is a shallow copy of the node's fields plus ``parent`` (the
    row index of its parent, -1 for roots), ``self_ms`` (its own time: latency
    not covered by its children, None when it never ended) and ``view_status``
    (``ok``, ``slow`` or ``error``, see the module docstring). Iterative, so any
    depth works.
    """
    columns, absent = trace_columns(data)
    finish_columns(columns, data.get("totals"))
    return column_rows(columns, absent)


def trace_columns(data: Mapping[str, Any]) -> tuple[Columns, Absent]:
    """The nodes of a trace's JSON form in pre-order as columns (every key any node has,
    None where a node lacks it, listed in the second value), with ``parent``."""
    nodes: list[Mapping[str, Any]] = []
    parents: list[int] = []
    stack: list[tuple[Mapping[str, Any], int]] = [(n, -1) for n in reversed(_roots(data))]
    while stack:
        node, parent = stack.pop()
        index = len(nodes)
        nodes.append(node)
        parents.append(parent)
        children = node.get("children") or ()
        stack.extend((c, index) for c in reversed(children) if isinstance(c, Mapping))
    keys: dict[str, None] = {}
    last: Any = None
    for node in nodes:
        node_keys = node.keys()
        if node_keys != last:
            keys.update(dict.fromkeys(node_keys))
            last = node_keys
    keys.pop("children", None)
    keys.pop("parent", None)
    columns: Columns = {}
    absent: Absent = {}
    for key in keys:
        column = [node.get(key, _MISSING) for node in nodes]
        missing = [i for i, value in enumerate(column) if value is _MISSING]
        if missing:
            absent[key] = missing
            for i in missing:
                column[i] = None
        columns[key] = column
    columns["parent"] = parents
    return columns, absent


@dataclass(frozen=True, slots=True)
class TreeShape:
    """A flat trace's tree: each call's children and interval (start, end or None), the roots."""

    kids: list[Sequence[int]]  # a leaf's is an empty tuple
    roots: list[int]
    spans: list[tuple[float, float | None]]


def tree_shape(columns: Columns) -> TreeShape:
    """The tree of a trace's columns (``parent``, ``start_ms``, ``latency_ms``)."""
    parents = columns["parent"]
    count = len(parents)
    kids: list[Any] = [()] * count  # a list only for the calls that have children
    roots: list[int] = []
    for index, parent in enumerate(parents):
        if parent < 0:
            roots.append(index)
        elif kids[parent]:
            kids[parent].append(index)
        else:
            kids[parent] = [index]
    spans = [
        _interval(start, latency)
        for start, latency in zip(
            columns.get("start_ms") or [None] * count,
            columns.get("latency_ms") or [None] * count,
            strict=True,
        )
    ]
    return TreeShape(kids, roots, spans)


def finish_columns(columns: Columns, totals: Any = None) -> TreeShape:
    """Add ``self_ms`` and ``view_status`` (see the module docstring) to a trace's columns.

    ``totals`` is the trace's totals (for the wall time) when known. Returns the
    trace's `TreeShape`, for `flow_xray.render.overview.overview`.
    """
    shape = tree_shape(columns)
    spans, kids = shape.spans, shape.kids
    count = len(spans)
    wall = _wall_ms(totals, spans)
    own = [
        None
        if end is None
        else _own_ms(start, end, kids[index], spans)
        if kids[index]
        else max(0.0, end - start)
        for index, (start, end) in enumerate(spans)
    ]
    statuses = columns.get("status") or [None] * count
    ghosts = columns.get("ghost") or [None] * count
    columns["self_ms"] = own
    columns["view_status"] = [
        _status(status, ghost, mine, count, wall)
        for status, ghost, mine in zip(statuses, ghosts, own, strict=True)
    ]
    return shape


def column_rows(columns: Columns, absent: Absent | None = None) -> list[dict[str, Any]]:
    """One dict per call from columns (a key listed in ``absent`` for a row is left out)."""
    keys = list(columns)
    rows = [dict(zip(keys, values, strict=True)) for values in zip(*columns.values(), strict=True)]
    for key, missing in (absent or {}).items():
        for i in missing:
            del rows[i][key]
    return rows


def _interval(start: Any, latency: Any) -> tuple[float, float | None]:
    begin = float(start) if _is_number(start) else 0.0
    return begin, begin + float(latency) if _is_number(latency) else None


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


def _wall_ms(totals: Any, spans: Sequence[tuple[float, float | None]]) -> float:
    if isinstance(totals, Mapping) and _is_number(totals.get("wall_time_ms")):
        return float(totals["wall_time_ms"])
    if not spans:
        return 0.0
    return max(e if e is not None else s for s, e in spans) - min(s for s, _ in spans)


def _status(status: Any, ghost: Any, own: float | None, count: int, wall: float) -> str:
    if status == "error":
        return "error"
    if ghost is True:  # a function that could have run here but did not
        return "ghost"
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
