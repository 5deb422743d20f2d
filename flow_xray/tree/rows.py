"""Reading lazily built nodes' details from a `SpanStore`'s rows: one node, or many as columns.

`flow_xray.tree.build` gives each block of `LazyNode`s a `RowBlock`; a node
filled on first use reads its span's row through it, and the viewer's column
builder (`flow_xray.tree.columns`) reads many unfilled nodes' fields at once
(`StoreRows.columns`, a `flow_xray.tree.lazy.RowReader`). No OpenTelemetry here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final, cast

from flow_xray.hexids import HexIds
from flow_xray.tree.decode import (
    NO_EVENTS,
    NO_META,
    declared_kind,
    raw_inputs,
    raw_output,
    read_pid,
)
from flow_xray.tree.fields import store_values, to_node
from flow_xray.tree.lazy import LAZY_FIELDS, lazy_values
from flow_xray.tree.model import SPAN_FIELDS, TraceNode
from flow_xray.tree.plan import PLANS, make_plan
from flow_xray.tree.spans import NO_END, SpanStore


class StoreRows:
    """Reads `LazyNode` details from the store's rows: a node at a time (`node`, through
    `block`'s sources) or many nodes' at once as columns (`columns`)."""

    __slots__ = ("origin", "store")

    def __init__(self, store: SpanStore, origin: int) -> None:
        self.store = store
        self.origin = origin

    def block(self, base: int) -> RowBlock:
        """The source of the nodes whose positions count from ``base``."""
        return RowBlock(self, base)

    def node(self, row: int) -> TraceNode:
        return to_node(self.store[row], self.origin)

    def columns(self, rows: Sequence[int]) -> list[Sequence[Any]]:
        """The `LAZY_FIELDS` of these rows' nodes as columns, as `store_values` gives them
        (the ids as their bytes, `HexIds`, when the rows are all the store's own).

        A page of a million calls reads them here: the common call (none of
        metadata, chat messages, another instrumentation's keys, an error,
        events) a field at a time for `_CHUNK` rows at once (what the store hands
        over for them is let go of before the next); the others one by one.
        """
        if len(rows) <= _CHUNK:
            return self._columns(rows)
        count = len(rows)
        lists: list[list[Any] | None] = [None] * len(LAZY_FIELDS)
        ids: list[list[HexIds] | None] = [[] for _ in LAZY_FIELDS]  # while each part is one
        for start in range(0, count, _CHUNK):
            chunk = self._columns(rows[start : start + _CHUNK])
            for field, part in enumerate(chunk):
                parts = ids[field]
                if parts is not None and type(part) is HexIds:
                    parts.append(part)
                    continue
                column = lists[field]
                if column is None:  # (never regrown)
                    column = lists[field] = [None] * count
                    if parts:  # ids kept as bytes so far, then a part that is not
                        column[:start] = _joined(parts).texts()
                    ids[field] = None
                column[start : start + len(part)] = part
        return [
            _joined(parts) if parts is not None else cast("list[Any]", column)
            for parts, column in zip(ids, lists, strict=True)
        ]

    def columns_of(self, name: str, rows: Sequence[int]) -> Sequence[Any]:
        """One of the `LAZY_FIELDS` of these rows' nodes, as `columns` gives it; the times
        (``start_ms``, ``latency_ms``) straight from the store's time columns."""
        if name not in _TIMES:
            return self.columns(rows)[LAZY_FIELDS.index(name)]
        store, origin = self.store, self.origin
        _, _, starts, ends, _, _ = store.columns()
        stored = len(starts)
        if name == "start_ms":
            out: list[Any] = [(starts[row] - origin) / 1e6 if row < stored else 0 for row in rows]
        else:
            out = [
                None if row >= stored or ends[row] == NO_END else (ends[row] - starts[row]) / 1e6
                for row in rows
            ]
        if stored < len(store):  # records appended from elsewhere: read as such
            at = SPAN_FIELDS.index(name)
            for i, row in enumerate(rows):
                if row >= stored:
                    out[i] = store_values(store, row, origin)[at]
        return out

    def _columns(self, rows: Sequence[int]) -> list[Sequence[Any]]:
        store, origin = self.store, self.origin
        count, stored = len(rows), len(store.shapes())
        trace_ids, ids, parent_ids, starts, ends, shapes, values = store.part_columns(
            [row if row < stored else 0 for row in rows] if stored else ()
        )
        distinct = {id(shape): shape for shape in shapes}
        plan_of = {
            key: PLANS.get(shape[2]) or make_plan(shape[2]) for key, shape in distinct.items()
        }
        plans = list(map(plan_of.__getitem__, map(id, shapes)))
        odd_shapes = {k for k, s in distinct.items() if s[0] == "ERROR" or not plan_of[k].simple}
        odd = {i for i, shape in enumerate(shapes) if id(shape) in odd_shapes}
        if store.event_rows:
            odd.update(i for i, row in enumerate(rows) if row in store.event_rows)
        recorded = [i for i, row in enumerate(rows) if row >= stored] if stored < len(store) else []
        odd.update(recorded)
        if recorded and type(trace_ids) is HexIds:  # (their records' own ids are put in)
            trace_ids = list(trace_ids)
        # Each input list is dropped once read: a million calls' worth is ~40 MB each.
        del shapes
        span_ids = _span_ids(ids, recorded)
        node_ids = (
            span_ids.with_prefix("n")
            if type(span_ids) is HexIds
            else list(map("n%016x".__mod__, ids))
        )
        out: dict[str, Any] = {"id": node_ids, "span_id": span_ids, "trace_id": trace_ids}
        del ids, trace_ids, span_ids, node_ids
        # Calls share few parents (and kinds): each one's text is made once, not per call.
        parents = {p: format(p, "016x") for p in set(parent_ids) if p}
        out["parent_id"] = list(map(parents.get, parent_ids))
        del parent_ids, parents
        out["latency_ms"] = [
            None if e == NO_END else (e - s) / 1e6 for s, e in zip(starts, ends, strict=True)
        ]
        out["start_ms"] = [(s - origin) / 1e6 for s in starts]
        out["incomplete"] = [e == NO_END for e in ends]
        del starts, ends
        by_plan = list(zip(values, plans, strict=True))
        del values, plans
        kinds: dict[str, str] = {}
        out["kind"] = [
            kinds.setdefault(kind, kind)
            for kind in (
                declared_kind(v[p.at_kind] if p.at_kind >= 0 else None) or "span"
                for v, p in by_plan
            )
        ]
        out["inputs"] = [raw_inputs(*p.input_of(v)) for v, p in by_plan]
        out["output"] = [raw_output(*p.output_of(v)) for v, p in by_plan]
        out["pid"] = [read_pid(v[p.pid]) if p.pid >= 0 else None for v, p in by_plan]
        out["attributes"] = [p.others_of(v, True) for v, p in by_plan]
        del by_plan
        out["error"] = [None] * count
        out["traceback"] = [None] * count
        out["meta"] = [NO_META] * count
        out["events"] = [NO_EVENTS] * count
        if not stored:
            out = {name: [None] * count for name in LAZY_FIELDS}
        columns = [out.pop(name) for name in LAZY_FIELDS]
        for i in odd:
            fields = store_values(store, rows[i], origin)
            for column, at in zip(columns, _LAZY_AT, strict=True):
                if type(column) is not HexIds:  # (a stored row's ids: the same)
                    column[i] = fields[at]
        return columns


class RowBlock:
    """The `NodeSource` of a block of `LazyNode`s: their positions count from ``base``."""

    __slots__ = ("base", "reader")
    reader: StoreRows
    base: int

    def __init__(self, reader: StoreRows, base: int) -> None:
        self.reader = reader
        self.base = base

    def node(self, at: int) -> TraceNode:
        return self.reader.node(self.base + at)

    def values(self, at: int) -> Sequence[Any]:
        return lazy_values(self.reader.node(self.base + at))


_LAZY_AT: Final = tuple(SPAN_FIELDS.index(name) for name in LAZY_FIELDS)
_TIMES: Final = frozenset({"start_ms", "latency_ms"})
_CHUNK: Final = 1 << 14  # rows read from the store at once


def _span_ids(ids: list[int], recorded: list[int]) -> Sequence[str]:
    """The rows' span ids as text: kept as their bytes (`HexIds`) when every row is the
    store's own (a record appended from elsewhere holds its ids as it has them)."""
    if recorded:
        return list(map("%016x".__mod__, ids))
    return HexIds.of_ints(ids)  # (the store keeps them in 64 bits)


def _joined(parts: list[HexIds]) -> HexIds:
    """Consecutive parts of a column of ids (one width and prefix) as one."""
    return HexIds(b"".join(part.data for part in parts), parts[0].width, parts[0].prefix)
