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

from flow_xray.tree.model import DATA_FIELDS, TraceNode

Columns = dict[str, list[Any]]


def trace_columns(roots: Sequence[TraceNode]) -> Columns:
    """Columns of every node under ``roots`` in pre-order (iterative: any depth).

    Example::

        columns = trace_columns(result.roots)
        columns["name"][0], columns["parent"][0]  # the first root: its name, -1
    """
    columns: Columns = {name: [] for name in DATA_FIELDS}
    appends = [columns[name].append for name in DATA_FIELDS]
    parents: list[int] = []
    add_parent = parents.append
    stack: list[tuple[TraceNode, int]] = [(root, -1) for root in reversed(roots)]
    pop, push = stack.pop, stack.extend
    while stack:
        node, parent = pop()
        index = len(parents)
        add_parent(parent)
        for append, value in zip(appends, node.export_values(), strict=True):
            append(value)
        children = node.children
        if children:
            push([(child, index) for child in reversed(children)])
    columns["parent"] = parents
    return columns
