"""One span's node fields: what `flow_xray.tree.build` and lazy nodes fill a node with.

A span record (or a `SpanStore` row, read without making its record) becomes
the values of `SPAN_FIELDS`: its first-class attributes as fields, the rest as
``attributes`` (another instrumentation's scrubbed of secrets and its chat
messages promoted, `flow_xray.tree.foreign`), its status as how the call ended.
No OpenTelemetry here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from flow_xray import attributes as attr
from flow_xray.tree.decode import (
    MISSING,
    NO_EVENTS,
    decode,
    decode_inputs,
    empty,
    kind_of,
    plain,
    raw_inputs,
    raw_output,
    read_pid,
    usage_meta,
)
from flow_xray.tree.foreign import clean_error_type, error_text, promote_messages, scrub_foreign
from flow_xray.tree.model import SPAN_FIELDS, TraceNode, new_node
from flow_xray.tree.plan import PLANS, make_plan
from flow_xray.tree.spans import EventRecord, SpanRecord, SpanStore

_NODE_STATUS = {"ERROR": "error"}


def node_status(status: str) -> str:
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
    return node_status(record.status)


_STOPPED = frozenset({attr.CANCELLED, attr.INTERRUPTED})
_STOPPED_TYPES = {
    "CancelledError": attr.CANCELLED,
    "Cancelled": attr.CANCELLED,  # trio
    "KeyboardInterrupt": attr.INTERRUPTED,
}


def to_node(record: SpanRecord, origin_ns: int) -> TraceNode:
    """Turn one span record into a childless `TraceNode`."""
    return new_node(**dict(zip(SPAN_FIELDS, node_values(record, origin_ns), strict=True)))


def node_values(record: SpanRecord, origin_ns: int, raw: bool = False) -> tuple[Any, ...]:
    """The fields of the node ``record`` becomes that its span gives (`SPAN_FIELDS`, in order).

    With ``raw``, inputs and output that flow-xray itself wrote as JSON are
    handed over as that text (`JsonText`) instead of being parsed: a renderer
    that writes them as JSON again (the viewer page) skips the round trip.
    """
    record = scrub_foreign(record)  # other instrumentations' secrets (tree/foreign.py)
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
    plan = PLANS.get(keys)
    if plan is None:
        plan = make_plan(keys)
    consumed = dict(zip(plan.consumed, plan.take_consumed(values), strict=True))
    meta_keys = (
        {short: plain(v) for short, v in zip(plan.meta, plan.take_meta(values), strict=True)}
        if plan.meta
        else {}
    )
    others = plan.others_of(values, raw)
    inputs: Any
    output: Any
    input_of = consumed.get(attr.INPUT_VALUE, MISSING), consumed.get(attr.INPUT_MIME_TYPE)
    output_of = consumed.get(attr.OUTPUT_VALUE), consumed.get(attr.OUTPUT_MIME_TYPE)
    if raw and not plan.messages and not plan.foreign:
        inputs, output = raw_inputs(*input_of), raw_output(*output_of)
    else:
        inputs, output = decode_inputs(*input_of), decode(*output_of)
        if plan.messages:
            inputs, output = promote_messages(others, inputs, output)
    if status == "ERROR" or events or attr.OUTCOME in consumed:
        whole = record()
        error, stack = _error(whole) if status == "ERROR" else (None, None)
        outcome = record_status(whole)
    else:
        error = stack = None
        outcome = node_status(status)
    return (  # SPAN_FIELDS, in order
        f"n{span_id}",
        name,
        kind_of(consumed, others),
        inputs,
        output,
        error,
        stack,
        None if end_ns is None else (end_ns - start_ns) / 1e6,
        (start_ns - origin_ns) / 1e6,
        outcome,
        end_ns is None or consumed.get(attr.INCOMPLETE) is True,
        trace_id,
        span_id,
        parent_id,
        read_pid(values[plan.pid]) if plan.pid >= 0 else None,
        usage_meta(consumed) | meta_keys if plan.usage else meta_keys or empty(raw),
        others,
        [
            {
                "name": event.name,
                "time_ms": (event.time_ns - origin_ns) / 1e6,
                "attributes": {k: plain(v) for k, v in event.attributes.items()},
            }
            for event in events
        ]
        if events or not raw
        else NO_EVENTS,
    )


def _error(record: SpanRecord) -> tuple[str | None, str | None]:
    """``("Type: message", traceback)`` from the status, the last exception event, attributes."""
    event = next((e for e in reversed(record.events) if e.name == attr.EXCEPTION_EVENT), None)
    event_attributes = None if event is None else event.attributes
    stack = None if event is None else _str_or_none(event.attributes.get(attr.EXCEPTION_STACKTRACE))
    return error_text(record.status_message, event_attributes, record.attributes), stack


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
