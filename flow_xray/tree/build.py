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
from collections.abc import Callable, Iterable, Mapping, Sequence
from operator import attrgetter
from typing import Any

from flow_xray import attributes as attr, jsontext
from flow_xray.llm.pricing import cost_usd
from flow_xray.tree.accounting import analyze
from flow_xray.tree.model import TraceNode, TraceResult, lazy_nodes, new_node
from flow_xray.tree.readers import clean_error_type, error_text, promote_messages, scrub_foreign
from flow_xray.tree.spans import SpanRecord, SpanStore


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
    if store is not None:
        ids, parent_ids, row_starts, names, statuses = store.columns()
        records: Sequence[SpanRecord] = store.appended
        keys: list[Any] = list(ids)
        parent_keys: list[Any] = list(parent_ids)
        starts: list[int] = list(row_starts)
    else:
        records, names, statuses = spans, [], []
        keys, parent_keys, starts = [], [], []
    keys.extend(_key(r.span_id) for r in records)
    parent_keys.extend(_key(r.parent_id) if r.parent_id else 0 for r in records)
    starts.extend(r.start_ns for r in records)
    index: dict[Any, int] = dict(zip(keys, range(len(keys)), strict=True))
    kept = list(range(len(keys)))
    if len(index) < len(keys):  # repeated ids: keep the earliest of each
        index, kept, first = {}, [], list[int]()
        for at, (key, start) in enumerate(zip(keys, starts, strict=True)):
            _keep(index, kept, first, key, at, start)
        parent_keys = [parent_keys[at] for at in kept]
        keys = [keys[at] for at in kept]
        starts = first
    nodes: list[TraceNode]
    if store is not None:
        names = [*names, *(r.name for r in records)]
        statuses = [*statuses, *(r.status for r in records)]
        node_statuses = [_node_status(s) for s in statuses]
        for at, status in _stopped_or_failed(store).items():
            node_statuses[at] = status
        nodes = lazy_nodes(_RowSource(store, origin), kept, names, node_statuses, _with_meta(store))
        del names, statuses
    else:
        nodes = [to_node(spans[at], origin) for at in kept]
    parents = [index.get(key, -1) if key else -1 for key in parent_keys]
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
    del parent_keys
    _cut_cycles(nodes, parents)
    # Children and roots in start order: link them in the order of their start
    # times (the span id breaks a tie).
    order = sorted(range(len(nodes)), key=starts.__getitem__)
    if len(set(starts)) < len(starts):

        def span_id(at: int) -> str:
            return _hex(keys[at])

        _break_ties(order, starts, span_id)
    del starts
    roots: list[TraceNode] = []
    for at in order:
        parent = parents[at]
        if parent < 0:
            roots.append(nodes[at])
        else:
            nodes[parent].children.append(nodes[at])
    analyze(roots)
    result = TraceResult(roots=roots)
    if store is not None:
        result.dropped_spans = store.dropped
    return result


_ORDER = attrgetter("start_ms", "span_id")


def _break_ties(order: list[int], starts: Sequence[int], span_id: Callable[[int], str]) -> None:
    """Within each run of equal start times in ``order``, order by span id."""
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


def _hex(key: Any) -> str:
    return format(key, "016x") if isinstance(key, int) else str(key)


class _Kept:
    """The span ids that have a node (for `SpanStore.nearest_kept_parent`)."""

    __slots__ = ("index",)

    def __init__(self, index: Mapping[Any, int]) -> None:
        self.index = index

    def __contains__(self, span_id: object) -> bool:
        return isinstance(span_id, str) and _key(span_id) in self.index


class _RowSource:
    """Decodes a `LazyNode`'s details from its row of the store (with `to_node`)."""

    __slots__ = ("origin", "store")

    def __init__(self, store: SpanStore, origin: int) -> None:
        self.store = store
        self.origin = origin

    def node(self, at: int) -> TraceNode:
        return to_node(self.store[at], self.origin)


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


def _cut_cycles(nodes: Sequence[TraceNode], parents: list[int]) -> None:
    """Make roots of corrupt parent cycles, so every span stays in a finite tree.

    Each cycle (spans that are each other's ancestors) loses one link: the
    earliest-starting span of the cycle becomes a root. One walk, O(n).
    """
    state = bytearray(len(nodes))  # 0 unseen, 1 on the current walk, 2 done
    for first in range(len(nodes)):
        path = []
        current = first
        while current >= 0 and state[current] == 0:
            state[current] = 1
            path.append(current)
            current = parents[current]
        if current >= 0 and state[current] == 1:
            cycle = path[path.index(current) :]
            cut = min(cycle, key=lambda i: _ORDER(nodes[i]))
            parents[cut] = -1
        for i in path:
            state[i] = 2


def to_node(record: SpanRecord, origin_ns: int) -> TraceNode:
    """Turn one span record into a childless `TraceNode`."""
    record = scrub_foreign(record)  # other instrumentations' secrets (tree/readers.py)
    attrs = record.attributes
    # Split flow-xray's first-class keys from user metadata and the rest, by a
    # plan made once per set of keys (spans of one function share theirs).
    keys = tuple(attrs)
    plan = _PLANS.get(keys)
    if plan is None:
        plan = _plan(keys)
    consumed = {key: attrs[key] for key in plan[0]}
    meta_keys = {short: _plain(attrs[key]) for key, short in plan[1]}
    others = {key: attrs[key] for key in plan[2]}
    if tuple in set(map(type, others.values())):
        others = {
            key: _plain(value) if type(value) is tuple else value for key, value in others.items()
        }
    end_ns = record.end_ns
    inputs, output = (
        _inputs(consumed),
        _decode(consumed.get(attr.OUTPUT_VALUE), consumed.get(attr.OUTPUT_MIME_TYPE)),
    )
    if plan[3]:
        inputs, output = promote_messages(others, inputs, output)
    error, stack = _error(record) if record.status == "ERROR" else (None, None)
    return new_node(
        id=f"n{record.span_id}",
        name=record.name,
        kind=_kind(consumed),
        inputs=inputs,
        output=output,
        error=error,
        traceback=stack,
        latency_ms=None if end_ns is None else (end_ns - record.start_ns) / 1e6,
        start_ms=(record.start_ns - origin_ns) / 1e6,
        status=record_status(record),
        incomplete=end_ns is None or consumed.get(attr.INCOMPLETE) is True,
        trace_id=record.trace_id,
        span_id=record.span_id,
        parent_id=record.parent_id,
        pid=_pid(attrs.get(attr.PROCESS_PID)),
        meta=_usage_meta(consumed) | meta_keys if _has_usage(consumed) else meta_keys,
        attributes=others,
        events=[
            {
                "name": event.name,
                "time_ms": (event.time_ns - origin_ns) / 1e6,
                "attributes": {k: _plain(v) for k, v in event.attributes.items()},
            }
            for event in record.events
        ],
    )


_META_LEN = len(attr.META_PREFIX)
_Plan = tuple[tuple[str, ...], tuple[tuple[str, str], ...], tuple[str, ...], bool]
_PLANS: dict[tuple[str, ...], _Plan] = {}


def _plan(keys: tuple[str, ...]) -> _Plan:
    """Which keys are consumed, which are metadata (and their short names), which are kept."""
    consumed = tuple(k for k in keys if k in attr.CONSUMED)
    meta = tuple(
        (k, k[_META_LEN:])
        for k in keys
        if k not in attr.CONSUMED and k.startswith(attr.META_PREFIX)
    )
    others = tuple(k for k in keys if k not in attr.CONSUMED and not k.startswith(attr.META_PREFIX))
    plan = (consumed, meta, others, not _MESSAGE_KEYS.isdisjoint(others))
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


def _has_usage(consumed: Mapping[str, Any]) -> bool:
    return not _USAGE_KEYS.isdisjoint(consumed)


_DECODER = json.JSONDecoder()
_SCAN: Any = json.scanner.make_scanner(_DECODER)  # type: ignore[arg-type]  # typeshed types it as a class


def _kind(attrs: Mapping[str, Any]) -> str:
    kind = attrs.get(attr.SPAN_KIND)
    if isinstance(kind, str) and kind:
        return kind.lower()
    if (
        _first(attrs, attr.READ_MODEL) is not None
        or _first(attrs, attr.READ_PROMPT_TOKENS) is not None
    ):
        return "llm"
    return "span"


def _inputs(attrs: Mapping[str, Any]) -> dict[str, Any]:
    if attr.INPUT_VALUE not in attrs:
        return {}
    value = _decode(attrs[attr.INPUT_VALUE], attrs.get(attr.INPUT_MIME_TYPE))
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
