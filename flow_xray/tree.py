"""Build `TraceNode` trees from plain span records — a pure function, no OpenTelemetry.

Accepts spans from flow-xray and from other instrumentations: model, tokens
and cost are read from either the GenAI or the OpenInference attribute family
(plus the deprecated GenAI ``prompt_tokens`` / ``completion_tokens``). When a
span carries a model and tokens but no cost, the cost is estimated from the
price table.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from flow_xray import attributes as attr
from flow_xray.model import TraceNode, TraceResult
from flow_xray.pricing import cost_usd
from flow_xray.spans import SpanRecord


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
    origin = spans[0].start_ns
    nodes: dict[str, TraceNode] = {}
    for record in spans:
        nodes.setdefault(record.span_id, to_node(record, origin))
    roots: list[TraceNode] = []
    for record in spans:
        node = nodes[record.span_id]
        parent = nodes.get(record.parent_id) if record.parent_id else None
        if parent is None or parent is node:
            roots.append(node)
        else:
            parent.children.append(node)
    return TraceResult(roots=roots)


def to_node(record: SpanRecord, origin_ns: int) -> TraceNode:
    """Turn one span record into a childless `TraceNode`."""
    attrs = record.attributes
    incomplete = record.end_ns is None or attrs.get(attr.INCOMPLETE) is True
    latency = None if record.end_ns is None else (record.end_ns - record.start_ns) / 1e6
    error, stack = _error(record)
    return TraceNode(
        id=f"n{record.span_id}",
        name=record.name,
        kind=_kind(attrs),
        inputs=_inputs(attrs),
        output=_decode(attrs.get(attr.OUTPUT_VALUE), attrs.get(attr.OUTPUT_MIME_TYPE)),
        error=error,
        traceback=stack,
        latency_ms=latency,
        start_ms=(record.start_ns - origin_ns) / 1e6,
        status="error" if record.status == "ERROR" else "ok",
        incomplete=incomplete,
        trace_id=record.trace_id,
        span_id=record.span_id,
        parent_id=record.parent_id,
        meta=_meta(attrs),
        attributes={
            key: _plain(value)
            for key, value in attrs.items()
            if key not in attr.CONSUMED and not key.startswith(attr.META_PREFIX)
        },
        events=[
            {
                "name": event.name,
                "time_ms": (event.time_ns - origin_ns) / 1e6,
                "attributes": {k: _plain(v) for k, v in event.attributes.items()},
            }
            for event in record.events
        ],
    )


def _kind(attrs: Mapping[str, Any]) -> str:
    kind = attrs.get(attr.SPAN_KIND)
    if isinstance(kind, str) and kind:
        return kind.lower()
    if _first(attrs, attr.READ_MODEL) is not None or _first(attrs, attr.READ_PROMPT_TOKENS) is not None:
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
            return json.loads(value)
        except ValueError:
            return value
    return value


def _error(record: SpanRecord) -> tuple[str | None, str | None]:
    """``("Type: message", traceback)`` from the status and the last exception event."""
    event = next(
        (e for e in reversed(record.events) if e.name == attr.EXCEPTION_EVENT), None
    )
    stack = None
    exc_type = None
    if event is not None:
        stack = _str_or_none(event.attributes.get(attr.EXCEPTION_STACKTRACE))
        exc_type = _str_or_none(event.attributes.get(attr.EXCEPTION_TYPE))
    if record.status != "ERROR":
        return None, None
    message = record.status_message
    if exc_type and event is not None:
        short_type = exc_type.rpartition(".")[2]
        if not message or not (message.startswith(short_type) or message.startswith(exc_type)):
            detail = message or _str_or_none(event.attributes.get(attr.EXCEPTION_MESSAGE))
            message = f"{short_type}: {detail}" if detail else short_type
    return message or "error", stack


def _meta(attrs: Mapping[str, Any]) -> dict[str, Any]:
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
    for key, value in attrs.items():
        if key.startswith(attr.META_PREFIX):
            meta[key[len(attr.META_PREFIX) :]] = _plain(value)
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
