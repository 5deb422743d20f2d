"""Safe value → span attribute text: JSON where possible, capped, redacted, never raising.

This is the one path from a value to a span attribute: `encode_inputs` (a
call's arguments), `encode_output` (a return value), `encode_attribute`
(``attributes=``, ``trace.annotate``, usage fields), `encode_key` (a
user-chosen attribute name) and `encode_text` (exception messages and
tracebacks) share the same caps and redaction.

Everything here runs on every traced call, so nothing may raise into user code
and the common case (a few primitive arguments) takes a fast path straight to
the C JSON encoder (`flow_xray.serialize.fast`). Anything else goes through
the bounded walk (`flow_xray.serialize.walk`) that converts values to
JSON-compatible data, applies the caps of `Limits` and leaves a visible
`TRUNCATION_MARKER` wherever it cut something (`flow_xray.serialize.cut`).
The caps live in `flow_xray.serialize.limits`, the secret-name rule in
`flow_xray.serialize.secrets`.

Example:
    >>> from flow_xray.serialize.limits import get_limits
    >>> encode_inputs({"q": "hi", "api_key": "sk-1"}, get_limits(), 8192)
    '{"q":"hi","api_key":"[REDACTED]"}'
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

from flow_xray.attributes import MIME_JSON, MIME_TEXT
from flow_xray.interrupts import let_signals_through
from flow_xray.serialize.cut import (
    CUT,
    cap_text,
    dump,
    encode_json,
    encode_json_within,
    json_string,
    utf8_len,
)
from flow_xray.serialize.fast import checks_for, fast_object, plain_budget
from flow_xray.serialize.limits import Limits, get_limits
from flow_xray.serialize.reprs import MAX_INT_BITS, Reprs, type_name
from flow_xray.serialize.secrets import (
    REDACTED,
    hides_value,
    is_secret_name,
    scrub_text,
)
from flow_xray.serialize.walk import Walker, json_key

# User-named attribute keys (``attributes=``, ``trace.annotate``) are cut to this many chars.
MAX_KEY_CHARS: Final = 256


def _encode(value: Any, limits: Limits, max_bytes: int, reprs: Reprs | None) -> str:
    """Walk, dump, and shrink until the text fits `max_bytes`."""
    budget = max_bytes
    text = ""
    if reprs is None:
        reprs = {}
    for _ in range(4):
        walker = Walker(limits, budget, reprs)
        text, size = dump(walker.walk(value, 0))
        if size <= max_bytes:
            return text
        # The estimate missed (escapes, markers): shrink in proportion and retry.
        used = max(budget - walker.budget, 1)
        budget = min(budget - 1, used * max_bytes // size * 9 // 10)
        if budget <= 0:
            break
    return json_string(text, max_bytes)


def encode_inputs(
    arguments: Mapping[str, Any], limits: Limits, max_bytes: int, reprs: Reprs | None = None
) -> str:
    """Return the JSON object text of a call's bound arguments; never raises.

    Each argument is capped at ``limits.max_value_bytes`` first; when together
    they exceed `max_bytes` (the span's budget for inputs), the biggest are cut
    further so that small arguments are always kept whole. Secret argument
    names (and secret keys at any depth) become `REDACTED`. The result is
    valid JSON of at most `max_bytes` UTF-8 bytes (at least 2). `reprs` is
    the call's repr cache, shared with its output and error (see `Reprs`).
    """
    try:
        if type(arguments) is dict:
            value_bytes = limits.max_value_bytes
            fast = fast_object(
                arguments, limits, max_bytes if max_bytes < value_bytes else value_bytes
            )
            if fast is not None:
                return fast
            shared = _shared_inputs(arguments, limits, max_bytes, reprs)
            if shared is not None:
                return shared
        return _encode(arguments, limits, max_bytes, reprs)
    except BaseException as exc:  # recording contains everything
        let_signals_through()
        return json_string(f"<arguments not serializable: {type_name(exc)}>", max_bytes)


def _value_json(value: Any, limits: Limits, max_bytes: int, reprs: Reprs | None) -> str:
    """One value as JSON text of at most `max_bytes` bytes."""
    if plain_budget(value, 0, max_bytes, checks_for(limits)) >= 0:
        text = encode_json_within(value, max_bytes)
        if text is not None:
            return text
    return _encode(value, limits, max_bytes, reprs)


def _shared_inputs(
    arguments: dict[Any, Any], limits: Limits, max_bytes: int, reprs: Reprs | None
) -> str | None:
    """Arguments capped one by one, then the budget shared smallest first; None if it cannot fit."""
    if len(arguments) > limits.max_items or any(type(k) is not str for k in arguments):
        return None
    per_value = limits.max_value_bytes
    keys = {k: encode_json(encode_key(k, limits)) for k in arguments}
    texts = {
        k: '"' + REDACTED + '"'
        if is_secret_name(k, limits) and hides_value(k, v, limits)
        else _messages_json(v, limits, max_bytes, reprs)
        if _is_messages(v)
        else _value_json(v, limits, min(per_value, max_bytes), reprs)
        for k, v in arguments.items()
    }
    overhead = 2 + sum(utf8_len(k) + 2 for k in keys.values())
    sizes = {k: utf8_len(t) for k, t in texts.items()}
    room = max_bytes - overhead
    if sum(sizes.values()) > room:
        cap = _share(sizes.values(), room)
        if cap < 16:
            return None
        for key, size in sizes.items():
            if size > cap:
                value = arguments[key]
                texts[key] = (
                    _messages_json(value, limits, cap, reprs)
                    if _is_messages(value)
                    else _value_json(value, limits, cap, reprs)
                )
    text = "{" + ",".join(f"{keys[k]}:{texts[k]}" for k in arguments) + "}"
    return text if utf8_len(text) <= max_bytes else None


def _share(sizes: Iterable[int], room: int) -> int:
    """Water-filling: the cap under which the smallest sizes stay whole and the rest share
    what is left of ``room`` (0 when everything fits)."""
    order = sorted(sizes)
    left = room
    for i, size in enumerate(order):
        share = left // (len(order) - i)
        if size > share:
            return share
        left -= size
    return 0


def _is_messages(value: Any) -> bool:
    """Whether an argument is a chat conversation: a list of ``{"role": str, ...}`` dicts.

    Read by exact type: ``isinstance`` would consult a user object's ``__class__`` (a lazy
    object evaluates itself there) and a user mapping's ``get`` would run its code."""
    return (
        type(value) in (list, tuple)
        and 0 < len(value) <= 4096
        and all(type(m) is dict and type(m.get("role")) is str for m in value)
    )


def _messages_json(messages: Any, limits: Limits, max_bytes: int, reprs: Reprs | None) -> str:
    """A conversation capped per message, not as a whole: each message at most
    ``limits.max_value_bytes`` (a long one keeps its role, its text cut with the count of
    elided characters), the list within `max_bytes` (the messages share it as the
    arguments do); past ``limits.max_items`` messages a marker counts the rest."""
    kept = list(messages[: limits.max_items])
    more = len(messages) - len(kept)
    tail = [encode_json(f"{CUT} +{more} more items")] if more else []
    per = min(limits.max_value_bytes, max_bytes)
    texts = [_value_json(m, limits, per, reprs) for m in kept]
    room = max_bytes - 2 - len(texts) - sum(utf8_len(t) + 1 for t in tail)
    sizes = [utf8_len(t) for t in texts]
    if sum(sizes) > room:
        cap = _share(sizes, room)
        if cap < 64:  # too many messages for the room: cut the list as one value
            return _value_json(messages, limits, max_bytes, reprs)
        texts = [
            _value_json(m, limits, cap, reprs) if size > cap else text
            for m, text, size in zip(kept, texts, sizes, strict=True)
        ]
    return "[" + ",".join([*texts, *tail]) + "]"


def encode_output(
    value: Any, limits: Limits, max_bytes: int, reprs: Reprs | None = None
) -> tuple[str, str]:
    """Return ``(text, mime)`` for a return value; never raises.

    A str comes back as itself (cut to `max_bytes`) with ``text/plain``;
    anything else as JSON text of at most `max_bytes` bytes with ``application/json``.
    `reprs` is the call's repr cache (see `Reprs`).
    """
    try:
        kind = type(value)
        if kind is dict:  # the common result: its scalars checked inline
            fast = fast_object(value, limits, max_bytes)
            if fast is not None:
                return fast, MIME_JSON
        scalar = _SCALARS.get(kind)
        if scalar is not None:  # the commonest results, their JSON text made directly
            text = scalar(value)
            if text is not None and len(text) <= max_bytes:  # (ASCII: chars are bytes)
                return text, MIME_JSON
        if issubclass(kind, str):  # by type: a lazy proxy's __class__ is never read
            return cap_text(str.__str__(value), max_bytes, limits), MIME_TEXT
        if plain_budget(value, 0, max_bytes, checks_for(limits)) >= 0:
            text = encode_json_within(value, max_bytes)
            if text is not None:
                return text, MIME_JSON
        return _encode(value, limits, max_bytes, reprs), MIME_JSON
    except BaseException as exc:  # recording contains everything
        let_signals_through()
        return json_string(f"<output not serializable: {type_name(exc)}>", max_bytes), MIME_JSON


def _int_json(value: int) -> str | None:
    return int.__repr__(value) if -_INT64 <= value < _INT64 else None


def _float_json(value: float) -> str | None:
    return float.__repr__(value) if value - value == 0.0 else None  # not NaN or infinite


# JSON text of exact scalar types (as `encode_json` writes it), or None to take the usual path.
_SCALARS: Final[dict[type, Any]] = {
    int: _int_json,
    float: _float_json,
    bool: lambda value: "true" if value else "false",
    type(None): lambda value: "null",
}

# OpenTelemetry attribute ints are 64-bit; bigger ones are stored as text.
_INT64: Final = 1 << 63
_PRIMITIVES: Final = (str, bool, int, float)


def int_attribute(value: int) -> int | str:
    """An int as an OpenTelemetry attribute value: itself within 64 bits, else text.

    OTLP ints are signed 64-bit (the protobuf encoder refuses bigger ones and
    drops the attribute); bigger ones become their decimal digits, and those
    beyond 1024 bits (which CPython may refuse to print) ``<int bits=N>``.
    """
    if -_INT64 <= value < _INT64:
        return value
    bits = int.bit_length(value)
    return int.__repr__(value) if bits <= MAX_INT_BITS else f"<int bits={bits}>"


def encode_text(text: str, max_bytes: int, limits: Limits | None = None) -> str:
    """Plain text as stored on a span: at most `max_bytes` UTF-8 bytes, marker included.

    Credentials inside are scrubbed under `limits` (default: the process-wide
    ones); lone surrogates (not valid UTF-8) come out escaped. Never raises.
    """
    try:
        return cap_text(str.__str__(text), max_bytes, get_limits() if limits is None else limits)
    except BaseException as exc:  # recording contains everything
        let_signals_through()
        return f"<text not serializable: {type_name(exc)}>"


def encode_key(key: Any, limits: Limits) -> str:
    """A user-chosen attribute name (``attributes=``, ``trace.annotate``) as a writable key.

    Converted as dict keys are (`json_key`: str as is, other types by their
    JSON or repr text), lone surrogates escaped, cut to `MAX_KEY_CHARS` chars
    with a marker, and scrubbed of credentials like any text. Never raises.

    Example:
        >>> encode_key("file-\\udc80", get_limits())
        'file-\\\\udc80'
    """
    try:
        cut = type(key) is str and len(key) > MAX_KEY_CHARS
        if cut:  # cut before escaping: a huge key costs what a short one does
            key = key[:MAX_KEY_CHARS]
        name = json_key(key)
        if cut or len(name) > MAX_KEY_CHARS:
            name = name[:MAX_KEY_CHARS] + CUT
        if limits.redact and len(name) >= 8:
            name = scrub_text(name, limits)
        return name
    except BaseException as exc:  # recording contains everything
        let_signals_through()
        return f"<key not serializable: {type_name(exc)}>"


def encode_attribute(
    value: Any, limits: Limits, *, key: str | None = None, arrays: bool = True
) -> Any:
    """Return a user-supplied value as a valid OpenTelemetry attribute value; never raises.

    ``key`` is the user's name for it (``attributes=``, ``trace.annotate``): a
    secret name gives `REDACTED`. Booleans, floats and 64-bit ints stay as they
    are; text is capped at ``limits.max_value_bytes``; with ``arrays`` a list or
    tuple of str/bool/int/float of one type stays a list (up to
    ``limits.max_items`` items, each capped); anything else becomes JSON text,
    as return values do.
    """
    try:
        if key is not None and is_secret_name(key, limits) and hides_value(key, value, limits):
            return REDACTED
        kind = type(value)
        if kind is bool or kind is float:
            return value
        if kind is int:
            return int_attribute(value)
        if kind is str:
            return encode_text(value, limits.max_value_bytes, limits)
        if arrays and (kind is list or kind is tuple) and value and len(value) <= limits.max_items:
            first = type(value[0])
            if first in _PRIMITIVES and all(type(v) is first for v in value):
                if first is str:
                    cap = max(limits.max_value_bytes // len(value), 64)
                    return [encode_text(v, cap, limits) for v in value]
                if first is not int or all(-_INT64 <= v < _INT64 for v in value):
                    return list(value)
        return encode_output(value, limits, limits.max_value_bytes)[0]
    except BaseException as exc:  # recording contains everything
        let_signals_through()
        return f"<{type_name(value)} not serializable: {type_name(exc)}>"


__all__ = [
    "MAX_KEY_CHARS",
    "encode_attribute",
    "encode_inputs",
    "encode_key",
    "encode_output",
    "encode_text",
    "int_attribute",
]
