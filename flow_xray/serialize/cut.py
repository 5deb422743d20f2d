"""Text and JSON cut to a byte size, with a visible marker where something was cut.

Every cut starts with `TRUNCATION_MARKER`: ``…[truncated 12,345 chars]`` for
text, ``…[truncated]`` then ``+N more items`` / ``+N more keys`` for
containers (written by the walk, `flow_xray.serialize.walk`). The compact
JSON encoder every value path dumps with lives here too, with the last resort
that always fits (`json_string`). No OpenTelemetry here.
"""

from __future__ import annotations

import json
import json.encoder
from collections.abc import Callable
from typing import Any, Final

from flow_xray.serialize.limits import Limits
from flow_xray.serialize.secrets import scrub_text

# Readers look for the prefix.
TRUNCATION_MARKER: Final = "…[truncated"
CUT: Final = TRUNCATION_MARKER + "]"

# Bytes a text marker takes, with room for its count (``…[truncated 99,999,999 chars]``).
MARKER_BYTES: Final = len("…[truncated 99,999,999,999 chars]".encode())
# Extra characters searched for credentials past a cut, so none is kept half.
SCRUB_MARGIN: Final = 256


def _json_encoder(ascii_only: bool) -> Callable[[Any], str]:
    """A compact JSON encoder; the C one called directly when available.

    `JSONEncoder.encode` builds a fresh C encoder on every call, which is most
    of its cost for small values; one built once is about twice as fast.
    """
    encoder = json.JSONEncoder(
        ensure_ascii=ascii_only, check_circular=False, allow_nan=False, separators=(",", ":")
    )
    make: Any = getattr(json.encoder, "c_make_encoder", None)
    if make is None:
        return encoder.encode
    quote: Any = (
        json.encoder.encode_basestring_ascii if ascii_only else json.encoder.encode_basestring
    )
    try:
        chunks = make(None, encoder.default, quote, None, ":", ",", False, False, False)
    except Exception:
        return encoder.encode

    def encode(value: Any) -> str:
        if type(value) is str:
            return quote(value)  # type: ignore[no-any-return]
        return "".join(chunks(value, 0))

    return encode


_encode_json_std = _json_encoder(ascii_only=False)
# Used only when the text holds lone surrogates, which are not valid UTF-8.
_encode_json_ascii = _json_encoder(ascii_only=True)


def _encode_within_std(value: Any, max_bytes: int) -> str | None:
    """`encode_json_within` with the standard library's encoder."""
    try:
        text = _encode_json_std(value)
        if text.isascii():
            return text if len(text) <= max_bytes else None
        return text if len(text.encode("utf-8")) <= max_bytes else None
    except ValueError:  # NaN/Infinity, or lone surrogates in the UTF-8 check
        return None


def _text_dict_size_std(mapping: dict[str, str]) -> int:
    """`text_dict_size` without orjson: the characters of keys and values, 7 more an entry."""
    return len("".join(mapping)) + len("".join(mapping.values())) + 7 * len(mapping)


Encoders = tuple[
    Callable[[Any], str], Callable[[Any, int], "str | None"], Callable[[dict[str, str]], int]
]


def _orjson_encoders() -> Encoders | None:
    """orjson's encoder where it is installed (5-10 times the standard library's speed: a
    traced call encodes its inputs and its output), for what it writes as `json` does.

    Anything else orjson would write its own way goes to the standard library's encoder:
    subclasses of the built-in types, dataclasses and dates (it refuses them: passed
    through), keys that are not text, ints past 64 bits and lone surrogates (it raises).
    What reaches it is plain data (the fast paths check it, the walk makes it): floats
    finite (orjson writes NaN and infinities as null where `json` refuses them; the fast
    paths leave them to the walk, which writes them as text), no enum member or UUID
    (orjson writes those, `json` refuses them). Its floats keep their shortest form, an
    exponent written ``1e-7`` (`json`: ``1e-07``).
    """
    try:
        import orjson  # noqa: PLC0415  (an optional accelerator: the standard library without it)
    except ImportError:
        return None
    dumps: Any = orjson.dumps
    options = (
        orjson.OPT_PASSTHROUGH_SUBCLASS
        | orjson.OPT_PASSTHROUGH_DATACLASS
        | orjson.OPT_PASSTHROUGH_DATETIME
    )
    refused = (TypeError, ValueError, OverflowError)  # (orjson.JSONEncodeError is a TypeError)

    def encode(value: Any) -> str:
        try:
            return dumps(value, option=options).decode()  # type: ignore[no-any-return]
        except refused:
            return _encode_json_std(value)

    def within(value: Any, max_bytes: int) -> str | None:
        try:
            data = dumps(value, option=options)  # UTF-8: its length is the size
        except refused:
            return _encode_within_std(value, max_bytes)
        return data.decode() if len(data) <= max_bytes else None

    def text_dict_size(mapping: dict[str, str]) -> int:
        try:
            return len(dumps(mapping))
        except refused:  # (lone surrogates)
            return _text_dict_size_std(mapping)

    return encode, within, text_dict_size


#: ``encode_json(value)``: compact JSON text of plain data with finite floats (orjson's
#: where installed, see `_orjson_encoders`); raises ``ValueError`` for NaN or infinities
#: only where orjson is not installed. ``encode_json_within(value, max_bytes)``: the same
#: text if it is at most ``max_bytes`` UTF-8 bytes, else None (also None for what cannot
#: be UTF-8 or, without orjson, for NaN and infinities). ``text_dict_size(mapping)``: the
#: size of a dict of text to text as JSON, to budget with: its UTF-8 bytes with orjson,
#: else an estimate from its characters (`_text_dict_size_std`).
encode_json, encode_json_within, text_dict_size = _orjson_encoders() or (
    _encode_json_std,
    _encode_within_std,
    _text_dict_size_std,
)


def utf8_len(text: str) -> int:
    """The UTF-8 size of ``text`` (lone surrogates counted as their 3 bytes)."""
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def dump(tree: Any) -> tuple[str, int]:
    """Encode JSON-compatible data; return the text and its UTF-8 size."""
    text = encode_json(tree)
    if text.isascii():
        return text, len(text)
    try:
        return text, len(text.encode("utf-8"))
    except UnicodeEncodeError:
        text = _encode_json_ascii(tree)
        return text, len(text)


def truncated(chars: int) -> str:
    """The marker for text cut by ``chars`` characters: ``…[truncated 12,345 chars]``."""
    return f"{TRUNCATION_MARKER} {chars:,} chars]" if chars > 0 else CUT


def json_string(text: str, max_bytes: int) -> str:
    """The last resort: a JSON string of a prefix of `text` plus the marker."""
    floor = dump(CUT)[1]
    if max_bytes < floor:
        return '""'
    keep = min(len(text), max_bytes)
    while keep > 0:
        out, size = dump(text[:keep] + CUT)
        if size <= max_bytes:
            return out
        keep = min(keep - 1, keep * (max_bytes - floor) // max(size - floor, 1))
    return dump(CUT)[0]


def scrubbed_head(text: str, chars: int, limits: Limits | None) -> str:
    """The first ``chars`` (plus a margin) of ``text``, writable and scrubbed of credentials."""
    head = text if len(text) <= chars + SCRUB_MARGIN else text[: chars + SCRUB_MARGIN]
    if limits is not None and limits.redact and len(head) >= 8:
        head = scrub_text(head, limits)
    return head


def cap_text(text: str, max_bytes: int, limits: Limits | None = None) -> str:
    """Cut plain text to `max_bytes` UTF-8 bytes, marker (with the count cut) included.

    With `limits`, credentials are scrubbed first (see `scrub_text`), only in
    the part that can be kept; lone surrogates come out escaped.
    """
    total = len(text)
    head = scrubbed_head(text, max_bytes, limits)
    tail = total - min(total, max_bytes + SCRUB_MARGIN)  # chars never looked at
    if tail == 0 and head.isascii() and len(head) <= max_bytes:
        return head
    part = head[: max_bytes + 1]
    data = part.encode("utf-8", "backslashreplace")
    if tail == 0 and len(part) == len(head) and len(data) <= max_bytes:
        return data.decode("utf-8")
    cut = max_bytes - MARKER_BYTES
    if cut < 0:
        return data[: max(max_bytes, 0)].decode("utf-8", "ignore")
    kept = data[:cut].decode("utf-8", "ignore")
    return kept + truncated(len(head) + tail - len(kept))


__all__ = [
    "CUT",
    "MARKER_BYTES",
    "SCRUB_MARGIN",
    "TRUNCATION_MARKER",
    "cap_text",
    "dump",
    "encode_json",
    "json_string",
    "scrubbed_head",
    "truncated",
    "utf8_len",
]
