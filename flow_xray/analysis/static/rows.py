"""The static context on the viewer page: a ``static`` column, and each ghost as a row.

The same as `StaticContext.annotate` does to a trace's JSON form, done to its
columns (`flow_xray.tree.columns`): each matched call gets its ``static``
object (function, file, line, callers, callees and its edge from the parent);
each ghost becomes a row with ``ghost: true`` and status ``"ghost"``, after the
real calls under its parent (after earlier ghosts there), its own ghosts
below it. Fields a ghost has no value for are listed as absent for its row.
No OpenTelemetry here.
"""

from __future__ import annotations

from typing import Any

from flow_xray.analysis.static.merge import StaticContext, ghost_node, node_static
from flow_xray.tree.columns import Absent, Columns


def add_static(columns: Columns, context: StaticContext) -> tuple[Absent, dict[str, Any]]:
    """Put ``context`` into a trace's columns, in place (rows move when ghosts join them).

    Returns, per field, the rows without a value (real calls lack ``ghost`` and,
    unmatched, ``static``; ghosts lack what they never had, such as ``span_id``),
    and the page's ``static`` section (`StaticContext.to_dict`).
    """
    summary = context.to_dict()
    info = summary["functions"]
    edges = {e.child: e for e in context.edges}
    count = len(columns["parent"])
    statics: list[Any] = [None] * count
    by_id: dict[str, int] = {}  # node id -> row (the first with that id), then ghost ids
    for row, raw in enumerate(columns["id"]):
        node_id = str(raw)
        by_id.setdefault(node_id, row)
        key = context.functions_of.get(node_id)
        if key is not None:
            statics[row] = node_static(key, info[key], edges.get(node_id))
    ghosts: list[dict[str, Any]] = []  # row count + i: ghost i
    under: dict[int, list[int]] = {}  # row -> the ghosts hung under it, in order
    starts = columns["start_ms"]
    for ghost in context.ghosts:  # parents come before their nested ghosts
        parent = by_id.get(ghost.parent)
        if parent is None:
            continue
        start = starts[parent] if parent < count else ghosts[parent - count]["start_ms"]
        row = count + len(ghosts)
        ghosts.append(ghost_node(ghost, info, context.index, start))
        by_id[ghost.id] = row
        under.setdefault(parent, []).append(row)
    absent: Absent = {}
    if ghosts or any(value is not None for value in statics):
        columns["static"] = statics
        absent["static"] = [row for row, value in enumerate(statics) if value is None]
    if ghosts:
        _insert(columns, ghosts, under, absent)
    return absent, summary


def _insert(
    columns: Columns, ghosts: list[dict[str, Any]], under: dict[int, list[int]], absent: Absent
) -> None:
    """Rebuild the columns in the pre-order of the tree with the ghosts in it."""
    parents = columns["parent"]
    count = len(parents)
    kids: dict[int, list[int]] = {}
    roots: list[int] = []
    for row, parent in enumerate(parents):
        if parent < 0:
            roots.append(row)
        else:
            kids.setdefault(parent, []).append(row)
    order: list[int] = []  # rows and ghosts (count + i), in the new pre-order
    new_parents: list[int] = []
    position: dict[int, int] = {}
    stack: list[tuple[int, int]] = [(row, -1) for row in reversed(roots)]
    while stack:
        item, parent = stack.pop()
        position[item] = len(order)
        order.append(item)
        new_parents.append(parent)
        below = [*kids.get(item, ()), *under.get(item, ())]
        stack.extend((child, position[item]) for child in reversed(below))
    columns["ghost"] = [None] * count  # a key of the ghosts' rows only
    for name, values in columns.items():
        if name == "parent":
            continue
        ghost_values = [ghost.get(name) for ghost in ghosts]
        columns[name] = [values[i] if i < count else ghost_values[i - count] for i in order]
    columns["parent"] = new_parents
    for name in columns:
        if name == "parent":
            continue
        missing = [
            at
            for at, item in enumerate(order)
            if (item < count and name in ("ghost", "static") and columns[name][at] is None)
            or (item >= count and name not in ghosts[item - count])
        ]
        absent[name] = missing
