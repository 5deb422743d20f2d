"""A trace as flat rows, as a top-to-bottom `Graph` and as Graphviz DOT text.

Rows and statuses come from the trace's columns (`flow_xray.tree.columns`)
with each call's own time and ``view_status`` (ok, slow, error; see
`flow_xray.analysis.timing`), so the DOT colours are the viewer's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeGuard

from flow_xray.analysis.overview import node_tokens
from flow_xray.analysis.timing import finish_columns
from flow_xray.render.graph import Graph, GraphEdge, GraphNode, graph_to_dot
from flow_xray.tree.columns import Absent, Columns, trace_columns
from flow_xray.tree.model import TraceNode, TraceResult, totals_dict
from flow_xray.tree.plain import nodes_from_plain


def flatten_trace(data: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Return every node of a trace's JSON form in pre-order, without ``children``.

    The nodes are read as they are (`flow_xray.tree.plain.nodes_from_plain`);
    see `trace_rows` for what each row holds. Iterative, so any depth works.
    """
    nodes = data.get("nodes")
    return trace_rows(
        nodes_from_plain(nodes if isinstance(nodes, list) else []), data.get("totals")
    )


def trace_rows(roots: Sequence[TraceNode], totals: Any = None) -> list[dict[str, Any]]:
    """Every node under ``roots`` in pre-order as a dict of its fields, without ``children``.

    Each row also has ``parent`` (the row index of its parent, -1 for roots),
    ``self_ms`` (its own time: latency not covered by its children, None when
    it never ended) and ``view_status`` (``ok``, ``slow`` or ``error``).
    ``totals`` gives the wall time when known.
    """
    columns = trace_columns(roots)
    finish_columns(columns, totals)
    return column_rows(columns)


def column_rows(columns: Columns, absent: Absent | None = None) -> list[dict[str, Any]]:
    """One dict per call from columns (a key listed in ``absent`` for a row is left out)."""
    keys = list(columns)
    rows = [dict(zip(keys, values, strict=True)) for values in zip(*columns.values(), strict=True)]
    for key, missing in (absent or {}).items():
        for i in missing:
            del rows[i][key]
    return rows


def rows_to_graph(rows: Sequence[Mapping[str, Any]]) -> Graph:
    """The call tree of a trace's rows (`trace_rows`) as a top-to-bottom `Graph`.

    Labels read ``name`` then ``latency · tokens``; ``detail`` holds the node's
    fields. Node ids are the trace's ids when DOT-safe, else ``n<row>``.
    """
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


def trace_to_graph(data: Mapping[str, Any]) -> Graph:
    """Return the call tree of a trace's JSON form as a `Graph` (see `rows_to_graph`)."""
    return rows_to_graph(flatten_trace(data))


def trace_to_dot(data: Mapping[str, Any]) -> str:
    """Return the call tree of a trace's JSON form as Graphviz DOT text."""
    return graph_to_dot(trace_to_graph(data), name="trace")


def result_to_dot(result: TraceResult) -> str:
    """Return ``result``'s call tree as Graphviz DOT text (`TraceResult.to_dot`)."""
    rows = trace_rows(result.roots, totals_dict(result.totals))
    return graph_to_dot(rows_to_graph(rows), name="trace")


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


def format_ms(ms: float) -> str:
    """Human latency: ``0.42 ms``, ``12.5 ms``, ``1.23 s``."""
    if ms >= 1000:
        return f"{ms / 1000:.2f} s"
    if ms >= 10:
        return f"{ms:.1f} ms"
    return f"{ms:.2f} ms"


def _detail(row: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in row.items() if k not in ("parent", "view_status", "self_ms")}


def _is_number(value: Any) -> TypeGuard[int | float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
