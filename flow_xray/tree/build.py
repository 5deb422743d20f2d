"""Build `TraceNode` trees from plain span records — a pure function, no OpenTelemetry.

Accepts spans from flow-xray and from other instrumentations: model, tokens
and cost are read from either the GenAI or the OpenInference attribute family
(plus the deprecated GenAI ``prompt_tokens`` / ``completion_tokens``). When a
span carries a model and tokens but no cost, the cost is estimated from the
price table.
"""

from __future__ import annotations

import gc
import json
import json.scanner
from array import array
from collections.abc import Callable, Iterable, Mapping, MutableSequence, Sequence
from operator import itemgetter
from typing import Any, Final

from flow_xray import attributes as attr, jsontext
from flow_xray.jsontext import JsonText
from flow_xray.llm.pricing import cost_usd
from flow_xray.serialize.limits import Limits, get_limits
from flow_xray.tree.accounting import analyze
from flow_xray.tree.model import (
    LAZY_FIELDS,
    SPAN_FIELDS,
    TraceNode,
    TraceResult,
    lazy_nodes,
    new_node,
)
from flow_xray.tree.readers import (
    clean_error_type,
    error_text,
    promote_messages,
    scrub_attributes,
    scrub_foreign,
)
from flow_xray.tree.spans import NO_END, EventRecord, SpanRecord, SpanStore


def build_result(records: Iterable[SpanRecord]) -> TraceResult:
    """Return the forest of calls the records describe.

    A span whose parent is not among the records (a remote parent, or one
    outside the capture) becomes a root. Roots and children are ordered by
    start time; ``start_ms`` offsets count from the earliest span. Given a
    `SpanStore` that dropped spans (``max_spans``), a span whose parent was
    dropped hangs under its nearest kept ancestor, and the result's
    ``dropped_spans`` says how many were dropped. Linear in the number of spans.

    Example::

        result = build_result(read_otlp_json("spans.jsonl"))
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
    records: Sequence[SpanRecord]
    keys: Sequence[Any]
    parent_keys: Sequence[Any]
    starts: Sequence[int]
    if store is not None:
        keys, parent_keys, starts, names, statuses = store.columns()
        records = store.appended
        if records:
            keys = [*keys, *(_key(r.span_id) for r in records)]
            parent_keys = [*parent_keys, *(_parent_key(r) for r in records)]
            starts = [*starts, *(r.start_ns for r in records)]
    else:
        records, names, statuses = spans, [], []
        keys = [_key(r.span_id) for r in records]
        parent_keys = [_parent_key(r) for r in records]
        starts = [r.start_ns for r in records]
    index: dict[Any, int] = dict(zip(keys, range(len(keys)), strict=True))
    kept: Sequence[int] = range(len(keys))
    if len(index) < len(keys):  # repeated ids: keep the earliest of each
        index, kept, first = {}, [], list[int]()
        for at, (key, start) in enumerate(zip(keys, starts, strict=True)):
            _keep(index, kept, first, key, at, start)
        parent_keys = [parent_keys[at] for at in kept]
        keys = [keys[at] for at in kept]
        starts = first
    parents = array("q", [index.get(key, -1) if key else -1 for key in parent_keys])
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
    del index, parent_keys

    _cut_cycles(parents, starts, keys)
    # Children and roots in start order: link them in the order of their start
    # times (the span id breaks a tie).
    ordered = sorted(range(len(parents)), key=starts.__getitem__)
    if len(set(starts)) < len(starts):
        _break_ties(ordered, starts, keys)
    order = array("q", ordered)
    del keys, starts, ordered
    nodes: list[TraceNode]
    if store is not None:
        if records:
            names = [*names, *(r.name for r in records)]
        node_statuses = [_node_status(s) for s in statuses]
        node_statuses.extend(_node_status(r.status) for r in records)
        del statuses
        for at, status in _stopped_or_failed(store).items():
            node_statuses[at] = status
        reader = _RowReader(store, origin)
        nodes = lazy_nodes(reader.block, kept, names, node_statuses, _with_meta(store))
        del names, node_statuses
    else:
        nodes = [to_node(spans[at], origin) for at in kept]
    roots: list[TraceNode] = []
    for at in order:
        parent = parents[at]
        if parent < 0:
            roots.append(nodes[at])
        else:
            nodes[parent].children.append(nodes[at])
    del nodes, order, parents
    analyze(roots)
    result = TraceResult(roots=roots)
    if store is not None:
        result.dropped_spans = store.dropped
    return result


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


_NODE_STATUS = {"ERROR": "error"}


def _node_status(status: str) -> str:
    """A node's ``status`` from its span's status code name (see `record_status` for the rest)."""
    return _NODE_STATUS.get(status, "ok")


def record_status(record: SpanRecord) -> str:
    """``ok``, ``error``, ``cancelled`` or ``interrupted``: how the span's call ended.

    flow-xray's own spans say it in `attr.OUTCOME` (their status stays UNSET);
    another instrumentation's span that ended by ``CancelledError`` /
    ``KeyboardInterrupt`` (its last exception event), ERROR status or not, is
    cancelled / interrupted too: cancellation is not a failure.
    """
    outcome = record.attributes.get(attr.OUTCOME)
    if outcome in _STOPPED:
        return str(outcome)
    for event in reversed(record.events):
        if event.name == attr.EXCEPTION_EVENT:
            kind = clean_error_type(event.attributes.get(attr.EXCEPTION_TYPE)) or ""
            stopped = _STOPPED_TYPES.get(kind.rpartition(".")[2])
            if stopped is not None:
                return stopped
            break
    return _node_status(record.status)


_STOPPED = frozenset({attr.CANCELLED, attr.INTERRUPTED})
_STOPPED_TYPES = {
    "CancelledError": attr.CANCELLED,
    "Cancelled": attr.CANCELLED,  # trio
    "KeyboardInterrupt": attr.INTERRUPTED,
}


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


class _RowReader:
    """Reads `LazyNode` details from the store's rows: a node at a time (`node`, through
    `block`'s sources) or many nodes' at once as columns (`columns`)."""

    __slots__ = ("origin", "store")

    def __init__(self, store: SpanStore, origin: int) -> None:
        self.store = store
        self.origin = origin

    def block(self, base: int) -> _RowSource:
        """The source of the nodes whose positions count from ``base``."""
        return _RowSource(self, base)

    def node(self, row: int) -> TraceNode:
        return to_node(self.store[row], self.origin)

    def columns(self, rows: Sequence[int]) -> list[list[Any]]:
        """The `LAZY_FIELDS` of these rows' nodes as columns, as `store_values` gives them.

        A page of a million calls reads them here: the common call (none of
        metadata, chat messages, another instrumentation's keys, an error,
        events) a field at a time for all rows; the others one by one.
        """
        store, origin = self.store, self.origin
        count, stored = len(rows), len(store.shapes())
        trace_ids, ids, parent_ids, starts, ends, shapes, values = store.part_columns(
            [row if row < stored else 0 for row in rows] if stored else ()
        )
        distinct = {id(shape): shape for shape in shapes}
        plan_of = {key: _PLANS.get(shape[2]) or _plan(shape[2]) for key, shape in distinct.items()}
        plans = list(map(plan_of.__getitem__, map(id, shapes)))
        odd_shapes = {k for k, s in distinct.items() if s[0] == "ERROR" or not plan_of[k].simple}
        odd = {i for i, shape in enumerate(shapes) if id(shape) in odd_shapes}
        if store.event_rows:
            odd.update(i for i, row in enumerate(rows) if row in store.event_rows)
        if stored < len(store):
            odd.update(i for i, row in enumerate(rows) if row >= stored)
        # Each input list is dropped once read: a million calls' worth is ~40 MB each.
        del shapes
        out: dict[str, list[Any]] = {
            "id": list(map("n%016x".__mod__, ids)),
            "span_id": list(map("%016x".__mod__, ids)),
            "trace_id": trace_ids,
        }
        del ids, trace_ids
        out["parent_id"] = [format(p, "016x") if p else None for p in parent_ids]
        del parent_ids
        out["latency_ms"] = [
            None if e == NO_END else (e - s) / 1e6 for s, e in zip(starts, ends, strict=True)
        ]
        out["start_ms"] = [(s - origin) / 1e6 for s in starts]
        out["incomplete"] = [e == NO_END for e in ends]
        del starts, ends
        by_plan = list(zip(values, plans, strict=True))
        del values, plans
        out["kind"] = [
            _declared_kind(v[p.at_kind] if p.at_kind >= 0 else None) or "span" for v, p in by_plan
        ]
        out["inputs"] = [_raw_inputs(*p.input_of(v)) for v, p in by_plan]
        out["output"] = [_raw_output(*p.output_of(v)) for v, p in by_plan]
        out["pid"] = [_pid(v[p.pid]) if p.pid >= 0 else None for v, p in by_plan]
        out["attributes"] = [p.others_of(v, True) for v, p in by_plan]
        del by_plan
        out["error"] = [None] * count
        out["traceback"] = [None] * count
        out["meta"] = [_NO_META] * count
        out["events"] = [_NO_EVENTS] * count
        if not stored:
            out = {name: [None] * count for name in LAZY_FIELDS}
        columns = [out.pop(name) for name in LAZY_FIELDS]
        for i in odd:
            fields = store_values(store, rows[i], origin)
            for column, at in zip(columns, _LAZY_AT, strict=True):
                column[i] = fields[at]
        return columns


class _RowSource:
    """The `NodeSource` of a block of `LazyNode`s: their positions count from ``base``."""

    __slots__ = ("base", "reader")
    reader: _RowReader
    base: int

    def __init__(self, reader: _RowReader, base: int) -> None:
        self.reader = reader
        self.base = base

    def node(self, at: int) -> TraceNode:
        return self.reader.node(self.base + at)


_LAZY_AT: Final = tuple(SPAN_FIELDS.index(name) for name in LAZY_FIELDS)


def _with_meta(store: SpanStore) -> set[int]:
    """The store's spans whose attributes make a non-empty ``meta`` (usage or annotations)."""
    shapes = store.shapes()
    flagged = {id(shape) for shape in {id(s): s for s in shapes}.values() if _meta_keys(shape[2])}
    found = {row for row, shape in enumerate(shapes) if id(shape) in flagged} if flagged else set()
    found.update(len(shapes) + i for i, r in enumerate(store.appended) if _meta_keys(r.attributes))
    return found


def _meta_keys(keys: Iterable[str]) -> bool:
    keys = tuple(keys)
    return not _USAGE_KEYS.isdisjoint(keys) or any(k.startswith(attr.META_PREFIX) for k in keys)


def _cut_cycles(parents: MutableSequence[int], starts: Sequence[int], keys: Sequence[Any]) -> None:
    """Make roots of corrupt parent cycles, so every span stays in a finite tree.

    Each cycle (spans that are each other's ancestors) loses one link: its
    earliest-starting span (then the smallest id) becomes a root. One walk, O(n).
    """

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


def to_node(record: SpanRecord, origin_ns: int) -> TraceNode:
    """Turn one span record into a childless `TraceNode`."""
    return new_node(**dict(zip(SPAN_FIELDS, node_values(record, origin_ns), strict=True)))


def node_values(record: SpanRecord, origin_ns: int, raw: bool = False) -> tuple[Any, ...]:
    """The fields of the node ``record`` becomes that its span gives (`SPAN_FIELDS`, in order).

    With ``raw``, inputs and output that flow-xray itself wrote as JSON are
    handed over as that text (`JsonText`) instead of being parsed: a renderer
    that writes them as JSON again (the viewer page) skips the round trip.
    """
    record = scrub_foreign(record)  # other instrumentations' secrets (tree/readers.py)
    attrs = record.attributes
    return _fields(
        record.trace_id,
        record.span_id,
        record.parent_id,
        record.name,
        record.start_ns,
        record.end_ns,
        record.status,
        tuple(attrs),
        tuple(attrs.values()),
        record.events,
        origin_ns,
        raw,
        lambda: record,
    )


def store_values(store: SpanStore, at: int, origin_ns: int) -> tuple[Any, ...]:
    """`node_values` (``raw``) of the store's span ``at``, read from its row without a record."""
    parts = store.parts(at)
    if parts is None or attr.OTEL_SCOPE_NAME in parts[7]:  # appended elsewhere, or foreign
        return node_values(store[at], origin_ns, raw=True)
    trace_id, span_id, parent_id, name, start, end, status, keys, values, events = parts
    return _fields(
        trace_id,
        format(span_id, "016x"),
        format(parent_id, "016x") if parent_id else None,
        name,
        start,
        end,
        status,
        keys,
        values,
        events,
        origin_ns,
        True,
        lambda: store[at],
    )


def _fields(
    trace_id: str,
    span_id: str,
    parent_id: str | None,
    name: str,
    start_ns: int,
    end_ns: int | None,
    status: str,
    keys: tuple[str, ...],
    values: tuple[Any, ...],
    events: Sequence[EventRecord],
    origin_ns: int,
    raw: bool,
    record: Callable[[], SpanRecord],
) -> tuple[Any, ...]:
    # Split flow-xray's first-class keys from user metadata and the rest, by a
    # plan made once per set of keys (spans of one function share theirs).
    plan = _PLANS.get(keys)
    if plan is None:
        plan = _plan(keys)
    consumed = dict(zip(plan.consumed, plan.take_consumed(values), strict=True))
    meta_keys = (
        {short: _plain(v) for short, v in zip(plan.meta, plan.take_meta(values), strict=True)}
        if plan.meta
        else {}
    )
    others = plan.others_of(values, raw)
    inputs: Any
    output: Any
    input_of = consumed.get(attr.INPUT_VALUE, _MISSING), consumed.get(attr.INPUT_MIME_TYPE)
    output_of = consumed.get(attr.OUTPUT_VALUE), consumed.get(attr.OUTPUT_MIME_TYPE)
    if raw and not plan.messages and not plan.foreign:
        inputs, output = _raw_inputs(*input_of), _raw_output(*output_of)
    else:
        inputs, output = _inputs(*input_of), _decode(*output_of)
        if plan.messages:
            inputs, output = promote_messages(others, inputs, output)
    if status == "ERROR" or events or attr.OUTCOME in consumed:
        whole = record()
        error, stack = _error(whole) if status == "ERROR" else (None, None)
        node_status = record_status(whole)
    else:
        error = stack = None
        node_status = _node_status(status)
    return (  # SPAN_FIELDS, in order
        f"n{span_id}",
        name,
        _kind(consumed),
        inputs,
        output,
        error,
        stack,
        None if end_ns is None else (end_ns - start_ns) / 1e6,
        (start_ns - origin_ns) / 1e6,
        node_status,
        end_ns is None or consumed.get(attr.INCOMPLETE) is True,
        trace_id,
        span_id,
        parent_id,
        _pid(values[plan.pid]) if plan.pid >= 0 else None,
        _usage_meta(consumed) | meta_keys if plan.usage else meta_keys or _empty(raw),
        others,
        [
            {
                "name": event.name,
                "time_ms": (event.time_ns - origin_ns) / 1e6,
                "attributes": {k: _plain(v) for k, v in event.attributes.items()},
            }
            for event in events
        ]
        if events or not raw
        else _NO_EVENTS,
    )


# Read-only stand-ins shared by every raw node (`node_values` with ``raw``): a
# renderer writing a million calls then encodes each distinct value once.
_NO_META: Final[dict[str, Any]] = {}
_NO_EVENTS: Final[list[Any]] = []


def _empty(raw: bool) -> dict[str, Any]:
    return _NO_META if raw else {}


# An attribute a span does not have (``None`` is a value some file readers give).
_MISSING: Final[Any] = object()


def _raw_inputs(text: Any, mime: Any) -> Any:
    """``input.value`` as the JSON object text flow-xray wrote, else decoded as `_inputs` does."""
    if type(text) is str and mime == attr.MIME_JSON and text[:1] == "{":
        return JsonText(text)
    return _inputs(text, mime)


def _raw_output(text: Any, mime: Any) -> Any:
    """``output.value`` as the JSON text flow-xray wrote when it is an object or array (a
    scalar is decoded: cheap, and it stays a scalar wherever it is written), else as
    `_decode` gives it."""
    if type(text) is str and text[:1] in ("{", "[") and mime == attr.MIME_JSON:
        return JsonText(text)
    return _decode(text, mime)


_META_LEN = len(attr.META_PREFIX)


def _taker(indexes: Sequence[int]) -> Callable[[tuple[Any, ...]], tuple[Any, ...]]:
    """A function giving the values at ``indexes`` of a tuple, as a tuple."""
    if not indexes:
        return lambda values: ()
    if len(indexes) == 1:
        at = indexes[0]
        return lambda values: (values[at],)
    return itemgetter(*indexes)


class _Plan:
    """How a span with these attribute keys becomes a node: which values are consumed
    (first-class fields), which are metadata (and their short names), which are kept."""

    __slots__ = (
        "at_kind",
        "consumed",
        "foreign",
        "input_of",
        "limits",
        "messages",
        "meta",
        "others",
        "output_of",
        "pid",
        "shared",
        "simple",
        "take_consumed",
        "take_meta",
        "take_others",
        "usage",
    )

    def __init__(self, keys: tuple[str, ...]) -> None:
        consumed = [i for i, k in enumerate(keys) if k in attr.CONSUMED]
        meta = [
            i
            for i, k in enumerate(keys)
            if k not in attr.CONSUMED and k.startswith(attr.META_PREFIX)
        ]
        others = [
            i
            for i, k in enumerate(keys)
            if k not in attr.CONSUMED and not k.startswith(attr.META_PREFIX)
        ]
        self.consumed = tuple(keys[i] for i in consumed)
        self.meta = tuple(keys[i][_META_LEN:] for i in meta)
        self.others = tuple(keys[i] for i in others)
        self.take_consumed = _taker(consumed)
        self.take_meta = _taker(meta)
        self.take_others = _taker(others)
        self.messages = not _MESSAGE_KEYS.isdisjoint(self.others)
        self.usage = not _USAGE_KEYS.isdisjoint(self.consumed)  # model, tokens or cost
        self.foreign = attr.OTEL_SCOPE_NAME in keys  # another instrumentation's span
        self.pid = keys.index(attr.PROCESS_PID) if attr.PROCESS_PID in keys else -1
        # A span with none of these reads by position (`_fields`).
        self.simple = not (
            self.messages
            or self.usage
            or self.foreign
            or self.meta
            or attr.OUTCOME in keys
            or attr.INCOMPLETE in keys
        )
        self.at_kind = keys.index(attr.SPAN_KIND) if attr.SPAN_KIND in keys else -1
        self.input_of = _pair(keys, attr.INPUT_VALUE, attr.INPUT_MIME_TYPE, _MISSING)
        self.output_of = _pair(keys, attr.OUTPUT_VALUE, attr.OUTPUT_MIME_TYPE, None)
        self.shared: dict[tuple[Any, ...], dict[str, Any]] = {}
        self.limits: Limits | None = None

    def others_of(self, values: tuple[Any, ...], raw: bool) -> dict[str, Any]:
        """The kept attributes of a span with these keys and ``values``.

        With ``raw`` (read-only use) spans with equal kept values share one
        dict: the calls of one function usually do (their source location).
        """
        if not self.others:
            return _empty(raw)
        taken = self.take_others(values)
        if raw:
            if self.limits is not get_limits():  # kept values were scrubbed under these
                self.shared.clear()
                self.limits = get_limits()
            try:
                found = self.shared.get(taken)
            except TypeError:  # an unhashable value (from a file reader)
                found = None
            else:
                if found is None:
                    if len(self.shared) >= 64:
                        self.shared.clear()
                    found = self.shared[taken] = self._kept(taken)
            if found is not None:
                return found
        return self._kept(taken)

    def _kept(self, taken: tuple[Any, ...]) -> dict[str, Any]:
        if tuple in set(map(type, taken)):
            taken = tuple(_plain(v) if type(v) is tuple else v for v in taken)
        kept = dict(zip(self.others, taken, strict=True))
        # What flow-xray wrote was scrubbed then; an attribute a program set on a
        # span itself through the OpenTelemetry API was not.
        limits = get_limits()
        scrubbed = scrub_attributes(kept, limits) if limits.redact else None
        return kept if scrubbed is None else scrubbed


def _pair(
    keys: tuple[str, ...], value: str, mime: str, missing: Any
) -> Callable[[tuple[Any, ...]], tuple[Any, Any]]:
    """A function giving a span's ``(value, mime type)`` from its values; ``missing`` for
    an absent value, None for an absent mime type."""
    at = keys.index(value) if value in keys else -1
    at_mime = keys.index(mime) if mime in keys else -1
    if at >= 0 and at_mime >= 0:
        return itemgetter(at, at_mime)
    if at >= 0:
        return lambda values: (values[at], None)
    return lambda values: (missing, values[at_mime] if at_mime >= 0 else None)


_PLANS: dict[tuple[str, ...], _Plan] = {}


def _plan(keys: tuple[str, ...]) -> _Plan:
    plan = _Plan(keys)
    if len(_PLANS) >= 4096:  # bounded: spans whose keys vary freely get no cache
        _PLANS.clear()
    _PLANS[keys] = plan
    return plan


# The keys that show a span carries chat messages in a shape `promote_messages` reads.
_MESSAGE_KEYS = frozenset(
    {
        "gen_ai.input.messages",
        "gen_ai.output.messages",
        "llm.input_messages.0.message.role",
        "llm.input_messages.0.message.content",
        "llm.output_messages.0.message.role",
        "llm.output_messages.0.message.content",
        "gen_ai.prompt.0.role",
        "gen_ai.prompt.0.content",
        "gen_ai.completion.0.role",
        "gen_ai.completion.0.content",
    }
)
_USAGE_KEYS = frozenset(
    (*attr.READ_MODEL, *attr.READ_PROMPT_TOKENS, *attr.READ_COMPLETION_TOKENS, *attr.READ_COST)
)


_DECODER = json.JSONDecoder()
_SCAN: Any = json.scanner.make_scanner(_DECODER)  # type: ignore[arg-type]  # typeshed types it as a class


def _kind(attrs: Mapping[str, Any]) -> str:
    kind = _declared_kind(attrs.get(attr.SPAN_KIND))
    if kind:
        return kind
    if (
        _first(attrs, attr.READ_MODEL) is not None
        or _first(attrs, attr.READ_PROMPT_TOKENS) is not None
    ):
        return "llm"
    return "span"


def _declared_kind(kind: Any) -> str | None:
    return kind.lower() if isinstance(kind, str) and kind else None


def _inputs(text: Any, mime: Any) -> dict[str, Any]:
    """A node's ``inputs`` from ``input.value`` (`_MISSING` if absent) and its mime type."""
    if text is _MISSING:
        return {}
    value = _decode(text, mime)
    return value if isinstance(value, dict) else {"input": value}


def _decode(value: Any, mime: Any) -> Any:
    """JSON text back to data when it is JSON (declared, or an object/array); else as is."""
    if not isinstance(value, str):
        return _plain(value)
    if mime == attr.MIME_JSON or (mime is None and value[:1] in ("{", "[")):
        # The decoder's C scanner, called directly, skips `decode`'s two
        # whitespace regex matches: about 5x faster on the short texts spans hold.
        try:
            data, end = _SCAN(value, 0)
        except (StopIteration, ValueError, RecursionError):  # deeper than the C scanner goes
            end = -1
        if end == len(value):
            return data
        try:
            return jsontext.loads(value)
        except ValueError:
            return value
    return value


def _error(record: SpanRecord) -> tuple[str | None, str | None]:
    """``("Type: message", traceback)`` from the status, the last exception event, attributes."""
    event = next((e for e in reversed(record.events) if e.name == attr.EXCEPTION_EVENT), None)
    event_attributes = None if event is None else event.attributes
    stack = None if event is None else _str_or_none(event.attributes.get(attr.EXCEPTION_STACKTRACE))
    return error_text(record.status_message, event_attributes, record.attributes), stack


def _usage_meta(attrs: Mapping[str, Any]) -> dict[str, Any]:
    """model, tokens and cost (estimated from the price table when absent)."""
    meta: dict[str, Any] = {}
    model = _first(attrs, attr.READ_MODEL)
    prompt = _first_int(attrs, attr.READ_PROMPT_TOKENS)
    completion = _first_int(attrs, attr.READ_COMPLETION_TOKENS)
    total = _first_int(attrs, attr.READ_TOTAL_TOKENS)
    if total is None and (prompt is not None or completion is not None):
        total = (prompt or 0) + (completion or 0)
    cost = _first(attrs, attr.READ_COST)
    if not isinstance(cost, (int, float)) or isinstance(cost, bool):
        cost = None
        if model is not None and (prompt is not None or completion is not None):
            costs = cost_usd(str(model), prompt, completion)
            cost = costs[2] if costs else None
    for key, value in (
        ("model", model),
        ("prompt_tokens", prompt),
        ("completion_tokens", completion),
        ("total_tokens", total),
        ("estimated_cost_usd", cost),
    ):
        if value is not None:
            meta[key] = value
    return meta


def _first(attrs: Mapping[str, Any], keys: Iterable[str]) -> Any:
    for key in keys:
        value = attrs.get(key)
        if value is not None:
            return value
    return None


def _first_int(attrs: Mapping[str, Any], keys: Iterable[str]) -> int | None:
    value = _first(attrs, keys)
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.isdigit():
        return int(value)
    return None


def _pid(value: Any) -> int | None:
    """``process.pid`` as an int (OTLP JSON readers may give it as text)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.isdigit():
        return int(value)
    return None


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _plain(value: Any) -> Any:
    """Attribute values as JSON-ready data (sequences are tuples); iterative, any depth.

    OpenTelemetry's own sequences are flat; the OTLP JSON reader's arrays and
    key-value lists nest as deep as the file does.
    """
    if not isinstance(value, (tuple, dict)):
        return value
    root: list[Any] = [value]
    stack: list[tuple[Any, Any]] = [(root, 0)]
    while stack:
        holder, slot = stack.pop()
        item = holder[slot]
        if isinstance(item, tuple):
            holder[slot] = item = list(item)
            stack.extend((item, i) for i, v in enumerate(item) if isinstance(v, (tuple, dict)))
        elif isinstance(item, dict):
            holder[slot] = item = dict(item)
            stack.extend((item, k) for k, v in item.items() if isinstance(v, (tuple, dict)))
    return root[0]
