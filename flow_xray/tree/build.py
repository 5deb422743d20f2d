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
from collections.abc import Iterable, Mapping
from typing import Any

from flow_xray import attributes as attr
from flow_xray.llm.pricing import cost_usd
from flow_xray.tree.model import TraceNode, TraceResult
from flow_xray.tree.spans import SpanRecord


def build_result(records: Iterable[SpanRecord]) -> TraceResult:
    """Return the forest of calls the records describe.

    A span whose parent is not among the records (a remote parent, or one
    outside the capture) becomes a root. Roots and children are ordered by
    start time; ``start_ms`` offsets count from the earliest span.

    Example::

        result = build_result(read_otlp_json("spans.jsonl"))
    """
    spans = sorted(records, key=lambda r: (r.start_ns, r.span_id))
    if not spans:
        return TraceResult()
    # Building allocates many objects and no cycles; pausing the cyclic GC
    # meanwhile avoids repeated full scans of the growing tree (about 2x faster).
    paused = gc.isenabled()
    gc.disable()
    try:
        return _build(spans)
    finally:
        if paused:
            gc.enable()


def _build(spans: list[SpanRecord]) -> TraceResult:
    origin = spans[0].start_ns
    nodes: dict[str, TraceNode] = {}
    for record in spans:
        if record.span_id not in nodes:  # a repeated span id (say, a re-sent batch) is one node
            nodes[record.span_id] = to_node(record, origin)
    cut: set[str] = set()
    roots: list[TraceNode] = []
    for node in nodes.values():
        parent = nodes.get(node.parent_id) if node.parent_id else None
        if parent is None or parent is node:
            roots.append(node)
            continue
        # Nodes come in (start, span id) order and every parent cycle has a link
        # to a later node, so only such links (rare: clock skew) are checked.
        later = parent.start_ms > node.start_ms or (
            parent.start_ms == node.start_ms and parent.span_id > node.span_id
        )
        if later and _closes_cycle(node, parent, nodes, cut):
            cut.add(node.span_id)
            roots.append(node)
        else:
            parent.children.append(node)
    return TraceResult(roots=roots)


def _closes_cycle(
    node: TraceNode, parent: TraceNode, nodes: Mapping[str, TraceNode], cut: set[str]
) -> bool:
    """Whether ``node``'s parent chain leads back to it (corrupt input).

    Such a node becomes a root; without that, a cycle's spans would vanish
    from the tree, and walking a tree that contained one would never end.
    """
    current: TraceNode | None = parent
    for _ in range(len(nodes)):
        if current is None or current.span_id in cut:
            return False
        if current is node:
            return True
        current = nodes.get(current.parent_id) if current.parent_id else None
    return False


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
    error, stack = _error(record) if record.status == "ERROR" else (None, None)
    return TraceNode(
        id=f"n{record.span_id}",
        name=record.name,
        kind=_kind(consumed),
        inputs=_inputs(consumed),
        output=_decode(consumed.get(attr.OUTPUT_VALUE), consumed.get(attr.OUTPUT_MIME_TYPE)),
        error=error,
        traceback=stack,
        latency_ms=None if end_ns is None else (end_ns - record.start_ns) / 1e6,
        start_ms=(record.start_ns - origin_ns) / 1e6,
        status="error" if record.status == "ERROR" else "ok",
        incomplete=end_ns is None or consumed.get(attr.INCOMPLETE) is True,
        trace_id=record.trace_id,
        span_id=record.span_id,
        parent_id=record.parent_id,
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
_USAGE_KEYS = frozenset(
    (*attr.READ_MODEL, *attr.READ_PROMPT_TOKENS, *attr.READ_COMPLETION_TOKENS, *attr.READ_COST)
)


def _has_usage(consumed: Mapping[str, Any]) -> bool:
    return not _USAGE_KEYS.isdisjoint(consumed)


_DECODER = json.JSONDecoder()


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
        try:
            return _DECODER.decode(value)
        except ValueError:
            return value
    return value


def _error(record: SpanRecord) -> tuple[str | None, str | None]:
    """``("Type: message", traceback)`` from the status and the last exception event."""
    event = next((e for e in reversed(record.events) if e.name == attr.EXCEPTION_EVENT), None)
    stack = None
    exc_type = None
    if event is not None:
        stack = _str_or_none(event.attributes.get(attr.EXCEPTION_STACKTRACE))
        exc_type = _str_or_none(event.attributes.get(attr.EXCEPTION_TYPE))
    message = record.status_message
    if exc_type and event is not None:
        short_type = exc_type.rpartition(".")[2]
        if not message or not (message.startswith(short_type) or message.startswith(exc_type)):
            detail = message or _str_or_none(event.attributes.get(attr.EXCEPTION_MESSAGE))
            message = f"{short_type}: {detail}" if detail else short_type
    return message or "error", stack


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


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _plain(value: Any) -> Any:
    """Attribute values as JSON-ready data (OpenTelemetry sequences are tuples)."""
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value
