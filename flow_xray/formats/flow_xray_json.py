"""flow-xray JSON: the versioned envelope ``TraceResult.save`` writes and ``load`` reads.

Version 1::

    {"version": 1, "totals": {...}, "nodes": [{"id": ..., "name": ..., "children": [...]}, ...]}

Each node is a `TraceNode`'s fields (no ``meta`` key when it has none, as in
0.2.0) with its ``children``; reading one follows `flow_xray.tree.plain`'s
rules, after checking every node (an object with a string ``name``, fields of
the right types, ``children`` a list). A loaded trace gets its accounting
fields from `flow_xray.analysis.accounting`, so files written before those
fields existed read like new ones. No OpenTelemetry here.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from flow_xray import attributes as attr, jsontext
from flow_xray.analysis.accounting import count
from flow_xray.errors import TraceFileError
from flow_xray.formats.parsed import MAX_ID_CHARS, MAX_UNIX_NANOS, Parsed, id_problem, shown
from flow_xray.serialize.text import has_unwritable, writable, writable_data
from flow_xray.tree.model import (
    DATA_FIELDS,
    Totals,
    TraceNode,
    TraceResult,
    child_nodes,
    new_node,
    totals_dict,
)
from flow_xray.tree.plain import build_plain

SCHEMA_VERSION = 1


def node_to_dict(node: TraceNode) -> dict[str, Any]:
    """``node``'s subtree as JSON-ready plain data (`TraceNode.to_dict`)."""
    out: dict[str, Any] = {}
    # Iterative on purpose: traces can be deeper than Python's recursion limit.
    stack: list[tuple[TraceNode, dict[str, Any]]] = [(node, out)]
    while stack:
        current, target = stack.pop()
        target.update(zip(DATA_FIELDS, current.field_values(), strict=True))
        if not target["meta"]:
            del target["meta"]  # as in 0.2.0: no "meta" key when there is none
        children = child_nodes(current)
        kids: list[dict[str, Any]] = [{} for _ in children]
        target["children"] = kids
        stack.extend(zip(children, kids, strict=True))
    return out


def node_from_dict(
    data: Mapping[str, Any], path: str = "0", cls: type[TraceNode] = TraceNode
) -> TraceNode:
    """A subtree from ``node_to_dict`` output (`TraceNode.from_dict`); ``path`` is its position.

    Raises:
        TraceFileError: a node is not an object with a string ``name``, or a
            field has the wrong type.
    """
    rules = _FileRules()
    rules.node(data, path)
    make: Callable[..., TraceNode] = new_node if cls is TraceNode else cls  # no 0.2.0 forms
    return build_plain(data, path, make, rules)


class _FileRules:
    """What a trace file's node must be (a `flow_xray.tree.plain.PlainCheck`)."""

    __slots__ = ("checked",)

    def __init__(self) -> None:
        # Nodes of one function share their keys and value types: each set checked once.
        self.checked: set[tuple[Any, ...]] = set()

    def node(self, item: Any, where: str) -> bool:
        if not isinstance(item, Mapping) or not isinstance(item.get("name"), str):
            raise TraceFileError(f"trace node {where}: must be an object with a string 'name'")
        return True

    def fields(self, values: Mapping[str, Any], where: str) -> None:
        signature = (*values, *map(type, values.values()))
        if signature not in self.checked:
            _check_types(values, where)
            if len(self.checked) < 4096:
                self.checked.add(signature)
        get = values.get  # the common case, inline: a few comparisons per node
        if (
            not -_MAX_MS <= (get("latency_ms") or 0) <= _MAX_MS
            or not -_MAX_MS <= (get("start_ms") or 0) <= _MAX_MS
            or len(get("trace_id") or "") > MAX_ID_CHARS
            or len(get("span_id") or "") > MAX_ID_CHARS
            or len(get("parent_id") or "") > MAX_ID_CHARS
            or get("meta")
        ):
            _check_ranges(values, where)

    def children(self, value: Any, where: str) -> Sequence[Any]:
        if not isinstance(value, list):
            raise TraceFileError(f"trace node {where}: 'children' must be a list")
        return value


FIELD_TYPES: dict[str, tuple[type, ...]] = {
    "id": (str,),
    "kind": (str,),
    "inputs": (dict,),
    "error": (str, type(None)),
    "traceback": (str, type(None)),
    "latency_ms": (int, float, type(None)),
    "start_ms": (int, float),
    "status": (str,),
    "incomplete": (bool,),
    "trace_id": (str,),
    "span_id": (str,),
    "parent_id": (str, type(None)),
    "pid": (int, type(None)),
    "meta": (dict,),
    "attributes": (dict,),
    "events": (list,),
    "usage_counted": (bool, type(None)),
    "usage_note": (str, type(None)),
    "error_origin": (bool, type(None)),
    "error_handled": (bool, type(None)),
}


def _check_types(kwargs: Mapping[str, Any], where: str) -> None:
    for key, value in kwargs.items():
        expected = FIELD_TYPES.get(key)
        if expected is not None and not isinstance(value, expected):
            names = " or ".join("null" if t is type(None) else t.__name__ for t in expected)
            raise TraceFileError(f"trace node {where}: {key!r} must be {names}, got {shown(value)}")


# A time in milliseconds must be one a span can have (OTLP's 64-bit nanoseconds), so
# every duration and offset converts to a float and back.
_MAX_MS = MAX_UNIX_NANOS / 1e6
_IDS = ("trace_id", "span_id", "parent_id")


def _check_ranges(values: Mapping[str, Any], where: str) -> None:
    """Times within a span's range (finite, at most 2**64 ns), ids of sane length, usage.

    Their types are checked already; NaN fails every comparison, so it fails here.
    """
    for key in ("latency_ms", "start_ms"):
        value = values.get(key)
        if value is not None and not -_MAX_MS <= value <= _MAX_MS:
            raise TraceFileError(
                f"trace node {where}: {key!r} {shown(value)} is not a time a span can have"
            )
    for key in _IDS:
        value = values.get(key)
        problem = id_problem(value, repr(key)) if value is not None else None
        if problem is not None:
            raise TraceFileError(f"trace node {where}: {problem}")
    meta = values.get("meta")
    if meta:
        check_usage(meta, where)


_COUNTS = ("prompt_tokens", "completion_tokens", "total_tokens")
_MAX_COUNT = attr.MAX_TOKEN_COUNT
_MAX_COST = 1e15


def check_usage(meta: Mapping[str, Any], where: str) -> None:
    """Token counts: ints within int64; a cost: a finite number (totals add them up)."""
    for key in _COUNTS:
        value = meta.get(key)
        if value is not None and (type(value) is not int or not -_MAX_COUNT < value < _MAX_COUNT):
            raise TraceFileError(
                f"trace node {where}: meta {key!r} {shown(value)} is not a token count"
            )
    cost = meta.get("estimated_cost_usd")
    if cost is not None and (type(cost) not in (int, float) or not -_MAX_COST < cost < _MAX_COST):
        raise TraceFileError(
            f"trace node {where}: meta 'estimated_cost_usd' {shown(cost)} is not a cost in USD"
        )


def result_to_dict(result: TraceResult, totals: Totals | None = None) -> dict[str, Any]:
    """The JSON envelope (version 1) of ``result`` as plain data (`TraceResult.to_dict`);
    ``totals``: ``result.totals`` when the caller has just read them (not counted again)."""
    return {
        "version": SCHEMA_VERSION,
        "totals": totals_dict(result.totals if totals is None else totals),
        "nodes": [node_to_dict(root) for root in result.roots],
    }


def result_from_dict(data: Mapping[str, Any], cls: type[TraceResult] = TraceResult) -> TraceResult:
    """A result from ``result_to_dict`` output (`TraceResult.from_dict`), its accounting done.

    Raises:
        TraceFileError: ``data`` is not a version-1 flow-xray trace.
    """
    if not isinstance(data, Mapping) or not isinstance(data.get("nodes"), list):
        raise TraceFileError("not a flow-xray trace: expected an object with a 'nodes' list")
    version = data.get("version", SCHEMA_VERSION)
    if version != SCHEMA_VERSION:
        raise TraceFileError(f"unsupported flow-xray trace version {shown(version)}")
    totals = data.get("totals")
    dropped = totals.get("dropped_spans", 0) if isinstance(totals, Mapping) else 0
    with jsontext.gc_paused():  # many nodes and no cycles (about 2x faster)
        result = cls(
            roots=[node_from_dict(node, str(i)) for i, node in enumerate(data["nodes"])],
            dropped_spans=dropped if type(dropped) is int and dropped > 0 else 0,
        )
        count(result)  # files written before the accounting fields get them too
    return result


def result_to_json(
    result: TraceResult, indent: int | None = None, totals: Totals | None = None
) -> str:
    """The JSON envelope as text (`TraceResult.to_json`): ``default=repr`` keeps odd values
    readable, lone surrogates come out as visible ``\\udcXX`` escapes, any depth works.
    ``totals`` as in `result_to_dict`."""
    data = result_to_dict(result, totals)
    text = jsontext.dumps(data, indent=indent, default=repr)
    if has_unwritable(text):
        escaped = writable_data(data)
        text = writable(jsontext.dumps(escaped, indent=indent, default=repr))
    return text


def save(result: TraceResult, path: str | os.PathLike[str]) -> None:
    """Write the JSON envelope of ``result`` to ``path`` (`TraceResult.save`), as a stream
    (`flow_xray.formats.json_stream`): the text `result_to_json` gives, never all at once."""
    from flow_xray.formats.json_stream import save_json  # noqa: PLC0415  (it imports this)

    save_json(result, path)


def recognises(parsed: Parsed) -> bool:
    """A single JSON object with ``nodes``."""
    return parsed.whole and isinstance(parsed.first, Mapping) and "nodes" in parsed.first


def read(parsed: Parsed) -> TraceResult:
    """The trace of a file `recognises` accepted."""
    return result_from_dict(parsed.first)
