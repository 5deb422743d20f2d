"""A trace as columns: every call in pre-order, one list per field. No OpenTelemetry.

This is the form the viewer page packs (`flow_xray.render.payload`): a
million-call trace cannot afford a dict per call, so each field of
`TraceNode` (all but ``children``) becomes one list, plus ``parent`` (the
index of the call's parent, -1 for roots). A lazily built node is read from
its span without being filled, its inputs and output handed over as the JSON
text the span holds (`flow_xray.jsontext.JsonText`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flow_xray.tree.model import DATA_FIELDS, TraceNode, child_nodes

Columns = dict[str, list[Any]]


def trace_columns(roots: Sequence[TraceNode]) -> Columns:
    """Columns of every node under ``roots`` in pre-order (iterative: any depth).

    Example::

        columns = trace_columns(result.roots)
        columns["name"][0], columns["parent"][0]  # the first root: its name, -1
    """
    columns: Columns = {name: [] for name in DATA_FIELDS}
    parents: list[int] = []
    add_parent = parents.append
    chunk: list[tuple[Any, ...]] = []
    add = chunk.append
    stack: list[tuple[TraceNode, int]] = [(root, -1) for root in reversed(roots)]
    pop, push = stack.pop, stack.extend
    while stack:
        node, parent = pop()
        index = len(parents)
        add_parent(parent)
        add(node.export_values())
        children = child_nodes(node)
        if children:
            push([(child, index) for child in reversed(children)])
        if len(chunk) == _CHUNK:
            _transpose(chunk, columns)
    _transpose(chunk, columns)
    columns["parent"] = parents
    return columns


# Nodes' values are turned into columns this many at a time: one C-level
# transpose per chunk instead of a Python loop over every field of every node.
_CHUNK = 4096


def _transpose(chunk: list[tuple[Any, ...]], columns: Columns) -> None:
    if chunk:
        for column, values in zip(columns.values(), zip(*chunk, strict=True), strict=True):
            column.extend(values)
        chunk.clear()
