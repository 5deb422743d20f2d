"""Build `TraceNode` trees from plain span records — a pure function, no OpenTelemetry.

`build_tree` links spans into a forest by their parent ids, in start order
(two instrumentations' wrong parents corrected first: `flow_xray.tree.fixups`).
A `SpanStore`'s spans become `LazyNode`s whose details are read from their
rows on first use (`flow_xray.tree.rows`); other records are made into nodes
at once (`flow_xray.tree.fields`). The accounting fields are left unset: the
trace a capture or a file gives has them counted by
`flow_xray.analysis.accounting.build_result`.
"""

from __future__ import annotations

import gc
import itertools
import operator
from array import array
from collections.abc import Iterable, Mapping, MutableSequence, Sequence
from typing import Any

from flow_xray import attributes as attr
from flow_xray.tree.fields import node_status, record_status, to_node
from flow_xray.tree.fixups import fix_parents
from flow_xray.tree.lazy import lazy_nodes
from flow_xray.tree.model import TraceNode, TraceResult
from flow_xray.tree.plan import USAGE_KEYS
from flow_xray.tree.rows import StoreRows
from flow_xray.tree.spans import SpanRecord, SpanStore


def build_tree(records: Iterable[SpanRecord]) -> TraceResult:
    """Return the forest of calls the records describe (accounting fields not yet set).

    A span whose parent is not among the records (a remote parent, or one
    outside the capture) becomes a root. Roots and children are ordered by
    start time; ``start_ms`` offsets count from the earliest span. Given a
    `SpanStore` that dropped spans (``max_spans``), a span whose parent was
    dropped hangs under its nearest kept ancestor, and the result's
    ``dropped_spans`` says how many were dropped. Linear in the number of spans.

    Example::

        result = build_tree(read_otlp_json("spans.jsonl"))
    """
    store = records if isinstance(records, SpanStore) else None
    spans = records if isinstance(records, Sequence) else list(records)
    if not spans:
        return TraceResult()
    origin = store.earliest_start() if store is not None else min(r.start_ns for r in spans)
    # Building allocates many objects and no cycles; pausing the cyclic GC
    # meanwhile avoids repeated full scans of the growing tree (about 2x faster).
    paused = gc.isenabled()
    gc.disable()
    try:
        result = _build(spans, origin or 0, store)
    finally:
        if paused:
            gc.enable()
    return result


def _build(spans: Sequence[SpanRecord], origin: int, store: SpanStore | None) -> TraceResult:
    # One node per span id: a repeated id (say, a re-sent batch) keeps the
    # earliest-starting record (the first one given, on a tie). A store's spans
    # become `LazyNode`s (details decoded on first use); other records are
    # built at once. Span ids are keyed as ints where they are hex (all rows are).
    # A million spans must build within a few hundred MB: the store's columns are
    # used as they are (typed arrays), row numbers are kept in arrays, and the
    # id index and sort order are made and dropped before the nodes exist.
    keys, parent_keys, starts = _span_keys(spans, store)
    kept, keys, starts, parents = _parent_rows(keys, parent_keys, starts, store)
    del parent_keys
    _cut_cycles(parents, starts, keys)
    fix_parents(parents, starts, spans, store, kept)  # two instrumentations' wrong parents
    order = _start_order(starts, keys)
    del keys, starts
    nodes = _nodes(spans, store, kept, origin)
    roots: list[TraceNode] = []
    for at in order:
        parent = parents[at]
        if parent < 0:
            roots.append(nodes[at])
        else:
            nodes[parent].children.append(nodes[at])
    del nodes, order, parents
    result = TraceResult(roots=roots)
    if store is not None:
        result.dropped_spans = store.dropped
    return result


def _span_keys(
    spans: Sequence[SpanRecord], store: SpanStore | None
) -> tuple[Sequence[Any], Sequence[Any], Sequence[int]]:
    """Each span's id and parent id as keys (`_key`), and its start time, in span order:
    a store's rows (its columns as they are) then the records appended to it."""
    if store is None:
        keys = [_key(r.span_id) for r in spans]
        return keys, [_parent_key(r) for r in spans], [r.start_ns for r in spans]
    ids, parent_ids, starts, _, _, _ = store.columns()
    records = store.appended
    if not records:
        return ids, parent_ids, starts
    return (
        [*ids, *(_key(r.span_id) for r in records)],
        [*parent_ids, *(_parent_key(r) for r in records)],
        [*starts, *(r.start_ns for r in records)],
    )


def _parent_rows(
    keys: Sequence[Any], parent_keys: Sequence[Any], starts: Sequence[int], store: SpanStore | None
) -> tuple[Sequence[int], Sequence[Any], Sequence[int], array[int]]:
    """The spans kept (the earliest of each id), their keys and starts, and each one's
    parent's position among them (-1: a root)."""
    index: dict[Any, int] = dict(zip(keys, range(len(keys)), strict=True))
    kept: Sequence[int] = range(len(keys))
    if len(index) < len(keys):  # repeated ids: keep the earliest of each
        index, kept, first = {}, [], list[int]()
        for at, (key, start) in enumerate(zip(keys, starts, strict=True)):
            _keep(index, kept, first, key, at, start)
        parent_keys = [parent_keys[at] for at in kept]
        keys = [keys[at] for at in kept]
        starts = first
    if 0 in index:  # (a span id 0, invalid: "no parent" must not find it)
        parents = array("q", [index.get(key, -1) if key else -1 for key in parent_keys])
    else:  # looked up in C
        parents = array("q", map(index.get, parent_keys, itertools.repeat(-1)))
    if any(map(operator.eq, parents, range(len(parents)))):  # (told in C: rare)
        for at, parent in enumerate(parents):
            if parent == at:  # its own parent
                parents[at] = -1
    if store is not None and store.dropped:
        found = _Kept(index)
        for at, parent in enumerate(parents):
            key = parent_keys[at]
            if parent < 0 and key:
                nearest = store.nearest_kept_parent(_hex(key), found)
                parents[at] = index.get(_key(nearest), -1) if nearest else -1
    return kept, keys, starts, parents


def _start_order(starts: Sequence[int], keys: Sequence[Any]) -> array[int]:
    """Positions in the order of their start times (the span id breaks a tie): the
    order children and roots are linked in."""
    ordered = sorted(range(len(starts)), key=starts.__getitem__)
    now, after = map(starts.__getitem__, ordered), map(starts.__getitem__, ordered)
    next(after, None)
    if any(map(operator.eq, now, after)):  # a tie (told in C, nothing kept)
        _break_ties(ordered, starts, keys)
    return array("q", ordered)


def _nodes(
    spans: Sequence[SpanRecord], store: SpanStore | None, kept: Sequence[int], origin: int
) -> list[TraceNode]:
    """A childless node per kept span: a store's as `LazyNode`s, other records' built now."""
    if store is None:
        return [to_node(spans[at], origin) for at in kept]
    _, _, _, _, names, statuses = store.columns()
    records = store.appended
    if records:
        names = [*names, *(r.name for r in records)]
    node_statuses = [node_status(s) for s in statuses]
    node_statuses.extend(node_status(r.status) for r in records)
    del statuses
    for at, status in _stopped_or_failed(store).items():
        node_statuses[at] = status
    reader = StoreRows(store, origin)
    return lazy_nodes(reader.block, kept, names, node_statuses, _with_meta(store))


def _break_ties(order: list[int], starts: Sequence[int], keys: Sequence[Any]) -> None:
    """Within each run of equal start times in ``order``, order by span id."""

    def span_id(at: int) -> str:
        return _hex(keys[at])

    run = 0
    for at in range(1, len(order) + 1):
        if at == len(order) or starts[order[at]] != starts[order[run]]:
            if at - run > 1:
                order[run:at] = sorted(order[run:at], key=span_id)
            run = at


def _stopped_or_failed(store: SpanStore) -> dict[int, str]:
    """The status of the store's spans that may not have ended ``ok`` / ``error`` as their
    status code says: those with `attr.OUTCOME` or an ERROR status (their records are read)."""
    found: dict[int, str] = {}
    shapes = store.shapes()
    for row, (status, _, keys) in enumerate(shapes):
        if status == "ERROR" or attr.OUTCOME in keys:
            found[row] = record_status(store[row])
    for i, record in enumerate(store.appended):
        if record.status == "ERROR" or attr.OUTCOME in record.attributes:
            found[len(shapes) + i] = record_status(record)
    return found


def _keep(
    index: dict[Any, int], kept: list[int], starts: list[int], key: Any, at: int, start: int
) -> None:
    """Record span ``key`` found at ``at`` unless an earlier-starting one has the same id."""
    seen = index.get(key)
    if seen is None:
        index[key] = len(kept)
        kept.append(at)
        starts.append(start)
    elif start < starts[seen]:
        kept[seen] = at
        starts[seen] = start


def _key(span_id: str) -> Any:
    """A span id as the builder keys it: its number when it is hex, else the text."""
    if len(span_id) == 16:
        try:
            return int(span_id, 16)
        except ValueError:
            pass
    return span_id


def _parent_key(record: SpanRecord) -> Any:
    return _key(record.parent_id) if record.parent_id else 0


def _hex(key: Any) -> str:
    return format(key, "016x") if isinstance(key, int) else str(key)


class _Kept:
    """The span ids that have a node (for `SpanStore.nearest_kept_parent`)."""

    __slots__ = ("index",)

    def __init__(self, index: Mapping[Any, int]) -> None:
        self.index = index

    def __contains__(self, span_id: object) -> bool:
        return isinstance(span_id, str) and _key(span_id) in self.index


def _with_meta(store: SpanStore) -> set[int]:
    """The store's spans whose attributes make a non-empty ``meta`` (usage or annotations)."""
    shapes = store.shapes()
    flagged = {id(shape) for shape in {id(s): s for s in shapes}.values() if _meta_keys(shape[2])}
    found = {row for row, shape in enumerate(shapes) if id(shape) in flagged} if flagged else set()
    found.update(len(shapes) + i for i, r in enumerate(store.appended) if _meta_keys(r.attributes))
    return found


def _meta_keys(keys: Iterable[str]) -> bool:
    keys = tuple(keys)
    return not USAGE_KEYS.isdisjoint(keys) or any(k.startswith(attr.META_PREFIX) for k in keys)


def _cut_cycles(parents: MutableSequence[int], starts: Sequence[int], keys: Sequence[Any]) -> None:
    """Make roots of corrupt parent cycles, so every span stays in a finite tree.

    Each cycle (spans that are each other's ancestors) loses one link: its
    earliest-starting span (then the smallest id) becomes a root. One walk, O(n),
    and none when every parent comes after its child (a capture stores a span as it
    ends, so its parent later): a cycle needs a link back. That is told in C.
    """
    count = len(parents)
    if sum(map(operator.lt, parents, range(count))) == parents.count(-1):  # roots only
        return

    def earliest(at: int) -> tuple[int, str]:
        return starts[at], _hex(keys[at])

    state = bytearray(len(parents))  # 0 unseen, 1 on the current walk, 2 done
    for first in range(len(parents)):
        if state[first]:
            continue
        path = []
        current = first
        while current >= 0 and state[current] == 0:
            state[current] = 1
            path.append(current)
            current = parents[current]
        if current >= 0 and state[current] == 1:
            cycle = path[path.index(current) :]
            parents[min(cycle, key=earliest)] = -1
        for i in path:
            state[i] = 2
