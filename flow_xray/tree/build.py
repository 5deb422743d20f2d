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
from collections.abc import Iterable, Mapping, Sequence
from operator import attrgetter
from typing import Any

from flow_xray import attributes as attr
from flow_xray.llm.pricing import cost_usd
from flow_xray.tree.accounting import analyze
from flow_xray.tree.model import TraceNode, TraceResult
from flow_xray.tree.readers import error_text, promote_messages
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


def _build(spans: Iterable[SpanRecord], origin: int, store: SpanStore | None) -> TraceResult:
    # One node per span id: a repeated id (say, a re-sent batch) keeps the
    # earliest-starting record (the first one given, on a tie).
    nodes: dict[str, TraceNode] = {}
    starts: dict[str, int] = {}
    for record in spans:
        span_id = record.span_id
        seen = starts.get(span_id)
        if seen is None or record.start_ns < seen:
            starts[span_id] = record.start_ns
            nodes[span_id] = to_node(record, origin)
    del starts
    ordered = list(nodes.values())
    index = {node.span_id: i for i, node in enumerate(ordered)}
    parents = [_parent_index(node, index, nodes, store) for node in ordered]
    _cut_cycles(ordered, parents)
    roots: list[TraceNode] = []
    for node, parent in zip(ordered, parents, strict=True):
        if parent < 0:
            roots.append(node)
        else:
            ordered[parent].children.append(node)
    for node in ordered:
        if len(node.children) > 1:
            node.children.sort(key=_ORDER)
    roots.sort(key=_ORDER)
    analyze(roots)
    result = TraceResult(roots=roots)
    if store is not None:
        result.dropped_spans = store.dropped
    return result


_ORDER = attrgetter("start_ms", "span_id")


def _parent_index(
    node: TraceNode, index: Mapping[str, int], nodes: Mapping[str, Any], store: SpanStore | None
) -> int:
    """The position of ``node``'s parent (its nearest kept ancestor), or -1 for a root."""
    parent_id = node.parent_id
    if not parent_id or parent_id == node.span_id:
        return -1
    at = index.get(parent_id)
    if at is None and store is not None:
        kept = store.nearest_kept_parent(parent_id, nodes)
        at = index.get(kept) if kept is not None else None
    return -1 if at is None else at


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
    attrs = record.attributes
    # One pass: split flow-xray's first-class keys from user metadata and the rest.
    consumed: dict[str, Any] = {}
    meta_keys: dict[str, Any] = {}
    others: dict[str, Any] = {}
    for key, value in attrs.items():
        if key in attr.CONSUMED:
            consumed[key] = value
        elif key.startswith(attr.META_PREFIX):
            meta_keys[key[_META_LEN:]] = _plain(value)
        else:
            others[key] = _plain(value) if type(value) is tuple else value
    end_ns = record.end_ns
    inputs, output = (
        _inputs(consumed),
        _decode(consumed.get(attr.OUTPUT_VALUE), consumed.get(attr.OUTPUT_MIME_TYPE)),
    )
    if others and _MESSAGE_KEYS.intersection(others):
        inputs, output = promote_messages(others, inputs, output)
    error, stack = _error(record) if record.status == "ERROR" else (None, None)
    return TraceNode(
        id=f"n{record.span_id}",
        name=record.name,
        kind=_kind(consumed),
        inputs=inputs,
        output=output,
        error=error,
        traceback=stack,
        latency_ms=None if end_ns is None else (end_ns - record.start_ns) / 1e6,
        start_ms=(record.start_ns - origin_ns) / 1e6,
        status="error" if record.status == "ERROR" else "ok",
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
        except (StopIteration, ValueError):
            end = -1
        if end == len(value):
            return data
        try:
            return _DECODER.decode(value)
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
    """Attribute values as JSON-ready data (OpenTelemetry sequences are tuples)."""
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value
