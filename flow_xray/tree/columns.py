"""A trace as columns: every call in pre-order, one list per field. No OpenTelemetry.

The one column builder of the package: the form the viewer page packs
(`flow_xray.render.payload`) and every flat view of a trace starts from. A
million-call trace cannot afford a dict per call, so each field of
`TraceNode` (all but ``children``) becomes one list, plus ``parent`` (the
index of the call's parent, -1 for roots). Lazily built nodes not yet filled
stay so: their details are read from their spans' rows a field at a time
(`flow_xray.tree.lazy.RowReader`), inputs and output handed over as the
JSON text the span holds (`flow_xray.jsontext.JsonText`).
"""

from __future__ import annotations

import itertools
import operator
from array import array
from collections.abc import Sequence
from operator import attrgetter
from typing import Any, cast

from flow_xray.hexids import HexIds
from flow_xray.tree.lazy import LAZY_FIELDS, RowReader, unfilled_rows
from flow_xray.tree.model import DATA_FIELDS, TraceNode, child_nodes

# Per field, one value per call (pre-order), plus "parent": a trace's flat form.
Columns = dict[str, Sequence[Any]]  # lists; ids may be kept as bytes (`HexIds`)
# Per field, the calls (row indexes) that have no such value (a page leaves the key out).
Absent = dict[str, list[int]]


def trace_columns(roots: Sequence[TraceNode]) -> Columns:
    """Columns of every node under ``roots`` in pre-order (iterative: any depth).

    Example::

        columns = trace_columns(result.roots)
        columns["name"][0], columns["parent"][0]  # the first root: its name, -1
    """
    nodes, parents = _preorder(roots)
    columns: Columns = {
        name: list(map(attrgetter(name), nodes)) for name in DATA_FIELDS if name not in LAZY_FIELDS
    }
    columns.update(zip(LAZY_FIELDS, lazy_columns(nodes), strict=True))
    columns = {name: columns[name] for name in DATA_FIELDS}
    columns["parent"] = parents
    return columns


def lazy_columns(nodes: Sequence[TraceNode]) -> list[Sequence[Any]]:
    """The `LAZY_FIELDS` of ``nodes`` as columns, in that order. A lazily built node not yet
    filled stays so: its details come from its span's row (`RowReader.columns`, inputs and
    output as the JSON text the span holds); the others' are read from the nodes."""
    # Each group's columns cover its positions; the groups in order cover every node once.
    readers, rows = unfilled_rows(nodes)
    groups = _groups(readers, rows)
    others = [i for i, reader in enumerate(readers) if reader is None]
    del readers
    parts = [(positions, reader.columns(rows)) for reader, positions, rows in groups.values()]
    if others:
        filled = [nodes[i] for i in others]
        parts.append((others, [list(map(attrgetter(name), filled)) for name in LAZY_FIELDS]))
    return _merge(parts) if parts else [[] for _ in LAZY_FIELDS]


def lazy_fields(nodes: Sequence[TraceNode], *names: str) -> list[list[Any]]:
    """Some of the `LAZY_FIELDS` of ``nodes`` as columns (the times of a trace's roots, say),
    read as `lazy_columns` reads them: a lazily built node not yet filled stays so."""
    readers, rows = unfilled_rows(nodes)
    columns: list[list[Any]] = [[None] * len(nodes) for _ in names]
    for reader, positions, kept in _groups(readers, rows).values():
        for name, column in zip(names, columns, strict=True):
            for position, value in zip(positions, reader.columns_of(name, kept), strict=True):
                column[position] = value
    for position, found in enumerate(readers):
        if found is None:  # an eager node, or a filled one
            for name, column in zip(names, columns, strict=True):
                column[position] = getattr(nodes[position], name)
    return columns


def _groups(
    readers: list[RowReader | None], rows: Sequence[int]
) -> dict[int, tuple[RowReader, Sequence[int], Sequence[int]]]:
    """The unfilled nodes by the reader of their rows: per reader, their positions and rows."""
    present = list(map(operator.is_not, readers, itertools.repeat(None)))
    distinct = {id(reader): reader for reader in itertools.compress(readers, present)}
    if len(distinct) == 1:  # one store (the common case): no loop in Python
        ((key, reader),) = distinct.items()
        if all(present):
            return {key: (cast(RowReader, reader), range(len(rows)), rows)}
        # (arrays: a million positions and rows as lists would hold 64 MB of int objects)
        positions = array("q", itertools.compress(range(len(rows)), present))
        kept = array("q", itertools.compress(rows, present))
        return {key: (cast(RowReader, reader), positions, kept)}
    groups: dict[int, tuple[RowReader, list[int], list[int]]] = {}  # (several stores)
    for position, (found, row) in enumerate(zip(readers, rows, strict=True)):
        if found is not None:
            group = groups.get(id(found))
            if group is None:
                group = groups[id(found)] = (found, [], [])
            group[1].append(position)
            group[2].append(row)
    return dict(groups)


def _merge(parts: list[tuple[Sequence[int], list[Sequence[Any]]]]) -> list[Sequence[Any]]:
    """Columns of every node from parts that each give columns for some positions (in
    ascending order; together every position once): the biggest part's columns with the
    others' values put in between, a slice at a time."""
    parts.sort(key=lambda part: len(part[0]), reverse=True)
    (_, base), others = parts[0], parts[1:]
    between = sorted(
        (position, part, index)
        for part, (positions, _) in enumerate(others)
        for index, position in enumerate(positions)
    )
    if not between:
        return base
    merged: list[Sequence[Any]] = []
    for field, base_column in enumerate(base):
        inserts = [(position, others[part][1][field][index]) for position, part, index in between]
        ids = _merged_ids(base_column, inserts) if type(base_column) is HexIds else None
        if ids is not None:
            merged.append(ids)
        elif len(inserts) <= _FEW:  # (a filled root): each put in place, in ascending positions
            # (ids kept as bytes become texts: a list to insert into)
            column = base_column if isinstance(base_column, list) else list(base_column)
            for position, value in inserts:
                column.insert(position, value)
            merged.append(column)
        else:
            values: list[Any] = []
            taken = 0
            for before, (position, value) in enumerate(inserts):
                upto = position - before  # base values before this position
                values += base_column[taken:upto]
                values.append(value)
                taken = upto
            values += base_column[taken:]
            merged.append(values)
    return merged


def _merged_ids(base: HexIds, inserts: list[tuple[int, Any]]) -> HexIds | None:
    """``base`` with ids put in at ascending positions, kept as bytes; None when one of them
    is not an id of its kind (its prefix, then its width in lowercase hex)."""
    width, prefix, data = base.width, base.prefix, base.data
    pieces: list[bytes] = []
    taken = 0
    for before, (position, value) in enumerate(inserts):
        if type(value) is not str or len(value) != len(prefix) + 2 * width:
            return None
        digits = value[len(prefix) :]
        try:
            raw = bytes.fromhex(digits)
        except ValueError:
            return None
        if not value.startswith(prefix) or raw.hex() != digits:  # (fromhex takes "AB", " ")
            return None
        upto = position - before  # base ids before this position
        pieces += (data[taken * width : upto * width], raw)
        taken = upto
    pieces.append(data[taken * width :])
    return HexIds(b"".join(pieces), width, prefix)


_FEW = 64  # inserts into a list of a million (a memmove each) beat copying it in slices


def _preorder(roots: Sequence[TraceNode]) -> tuple[list[TraceNode], list[int]]:
    """Every node under ``roots`` in pre-order, and each one's parent's index (-1: a root)."""
    nodes: list[TraceNode] = []
    parents: list[int] = []
    add_node, add_parent = nodes.append, parents.append
    # Two stacks (the nodes to visit, their parents' indexes): no tuple per node.
    todo: list[TraceNode] = list(reversed(roots))
    above: list[int] = [-1] * len(roots)
    pop, pop_above = todo.pop, above.pop
    push, push_above = todo.extend, above.extend
    while todo:
        node = pop()
        index = len(nodes)
        add_node(node)
        add_parent(pop_above())
        children = child_nodes(node)
        if children:
            push(reversed(children))
            push_above(itertools.repeat(index, len(children)))
    return nodes, parents
