"""Attribute values as node fields: JSON texts decoded (or kept as text), kind, usage, pid.

What `flow_xray.tree.fields` makes of each value a span holds. Model, tokens
and cost are read from either the GenAI or the OpenInference attribute family
(plus the deprecated GenAI ``prompt_tokens`` / ``completion_tokens``); a span
with a model and tokens but no cost gets one estimated from the price table.
No OpenTelemetry here.
"""

from __future__ import annotations

import json
import json.scanner
from collections.abc import Iterable, Mapping
from typing import Any, Final

from flow_xray import attributes as attr, jsontext
from flow_xray.jsontext import JsonText
from flow_xray.llm.pricing import cost_usd

# Read-only stand-ins shared by every raw node (`node_values` with ``raw``): a
# renderer writing a million calls then encodes each distinct value once.
NO_META: Final[dict[str, Any]] = {}
NO_EVENTS: Final[list[Any]] = []


def empty(raw: bool) -> dict[str, Any]:
    return NO_META if raw else {}


# An attribute a span does not have (``None`` is a value some file readers give).
MISSING: Final[Any] = object()


def raw_inputs(text: Any, mime: Any) -> Any:
    """``input.value`` as the JSON object text flow-xray wrote, else as `decode_inputs` reads it."""
    if type(text) is str and mime == attr.MIME_JSON and text[:1] == "{":
        return JsonText(text)
    return decode_inputs(text, mime)


def raw_output(text: Any, mime: Any) -> Any:
    """``output.value`` as the JSON text flow-xray wrote when it is an object or array (a
    scalar is decoded: cheap, and it stays a scalar wherever it is written), else as
    `decode` gives it."""
    if type(text) is str and text[:1] in ("{", "[") and mime == attr.MIME_JSON:
        return JsonText(text)
    return decode(text, mime)


_DECODER = json.JSONDecoder()
_SCAN: Any = json.scanner.make_scanner(_DECODER)  # type: ignore[arg-type]  # typeshed types it as a class


def kind_of(attrs: Mapping[str, Any], others: Mapping[str, Any] | None = None) -> str:
    """A node's kind: the declared OpenInference kind, else the GenAI operation's
    (``gen_ai.operation.name`` in ``others``: ``invoke_agent`` is an agent,
    ``execute_tool`` a tool, ``chat`` an llm call), else ``llm`` for a span with a
    model or tokens, else ``span``."""
    kind = declared_kind(attrs.get(attr.SPAN_KIND))
    if kind:
        return kind
    operation = others.get(attr.GEN_AI_OPERATION_NAME) if others else None
    if isinstance(operation, str) and operation in attr.OPERATION_KINDS:
        return attr.OPERATION_KINDS[operation]
    if (
        _first(attrs, attr.READ_MODEL) is not None
        or _first(attrs, attr.READ_PROMPT_TOKENS) is not None
    ):
        return "llm"
    return "span"


def declared_kind(kind: Any) -> str | None:
    return kind.lower() if isinstance(kind, str) and kind else None


def decode_inputs(text: Any, mime: Any) -> dict[str, Any]:
    """A node's ``inputs`` from ``input.value`` (`MISSING` if absent) and its mime type."""
    if text is MISSING:
        return {}
    value = decode(text, mime)
    return value if isinstance(value, dict) else {"input": value}


def decode(value: Any, mime: Any) -> Any:
    """JSON text back to data when it is JSON (declared, or an object/array); else as is."""
    if not isinstance(value, str):
        return plain(value)
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


def usage_meta(attrs: Mapping[str, Any]) -> dict[str, Any]:
    """model, tokens and cost (estimated from the price table when absent)."""
    meta: dict[str, Any] = {}
    model = _first(attrs, attr.READ_MODEL)
    prompt = _first_int(attrs, attr.READ_PROMPT_TOKENS)
    completion = _first_int(attrs, attr.READ_COMPLETION_TOKENS)
    total = _first_int(attrs, attr.READ_TOTAL_TOKENS)
    if total is None and (prompt is not None or completion is not None):
        total = (prompt or 0) + (completion or 0)
        if total >= attr.MAX_TOKEN_COUNT:  # two counts within 64 bits, their sum past them
            total = None
    cost = _first(attrs, attr.READ_COST)
    if not _is_cost(cost):  # not a number, or one no arithmetic survives (1e400, 10**400, NaN)
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
    """A token count: an int (or its float or decimal text) within OTLP's int64, else None."""
    value = _first(attrs, keys)
    if isinstance(value, bool):
        return None
    whole = isinstance(value, float) and value.is_integer() and abs(value) < _MAX_COUNT
    digits = isinstance(value, str) and value.isascii() and value.isdigit() and len(value) < 20
    if whole or digits:
        value = int(value)
    if isinstance(value, int) and 0 <= value < _MAX_COUNT:
        return value
    return None


# Token counts past int64 and costs past this come from broken or hostile files:
# totals and prices would overflow to float infinity (or raise). They are not usage.
_MAX_COUNT = 2**63
_MAX_COST = 1e15


def _is_cost(value: Any) -> bool:
    return (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and -_MAX_COST < value < _MAX_COST  # NaN fails too
    )


def read_pid(value: Any) -> int | None:
    """``process.pid`` as an int (OTLP JSON readers may give it as text)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.isdigit():
        return int(value)
    return None


def plain(value: Any) -> Any:
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
