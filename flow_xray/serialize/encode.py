"""Safe value → span attribute text: JSON where possible, capped, redacted, never raising.

Everything here runs on every traced call, so nothing may raise into user code
and the common case (a few primitive arguments) takes a fast path straight to
the C JSON encoder. Anything else goes through a bounded walk that converts
values to JSON-compatible data, applies the caps of `Limits` and leaves a
visible `TRUNCATION_MARKER` wherever it cut something. The caps live in
`flow_xray.serialize.limits`, the secret-name rule in `flow_xray.serialize.secrets`.

This is the one path from a value to a span attribute: `encode_inputs` (a
call's arguments), `encode_output` (a return value), `encode_attribute`
(``attributes=``, ``trace.annotate``, usage fields) and `encode_text`
(exception messages and tracebacks) share the same caps and redaction. At
about 600 lines this module is past the usual size on purpose: the fast paths
and the bounded walk share one budget model and are easier to check side by side.

Example:
    >>> from flow_xray.serialize.limits import get_limits
    >>> encode_inputs({"q": "hi", "api_key": "sk-1"}, get_limits(), 8192)
    '{"q":"hi","api_key":"[REDACTED]"}'
"""

from __future__ import annotations

import datetime
import enum
import heapq
import itertools
import json
import json.encoder
import math
import re
import uuid
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence, Set as AbstractSet, ValuesView
from decimal import Decimal
from pathlib import PurePath
from typing import Any, Final

from flow_xray.attributes import MIME_JSON, MIME_TEXT
from flow_xray.serialize.limits import Limits, get_limits
from flow_xray.serialize.secrets import REDACTED, is_secret_name, scrub_text, secret_name_cache
from flow_xray.serialize.shapes import (
    array_summary,
    buffer_summary,
    cheap_repr,
    exception_args,
    fields,
    is_opaque,
    length,
)
from flow_xray.serialize.text import writable

# Every cut starts with this: ``…[truncated 12,345 chars]`` for text, ``…[truncated]``
# then ``+N more items`` / ``+N more keys`` for containers. Readers look for the prefix.
TRUNCATION_MARKER: Final = "…[truncated"
CUT: Final = TRUNCATION_MARKER + "]"
CYCLE: Final = "<cycle>"

# Bytes a text marker takes, with room for its count (``…[truncated 99,999,999 chars]``).
_MARKER_BYTES: Final = len("…[truncated 99,999,999,999 chars]".encode())
# Extra characters searched for credentials past a cut, so none is kept half.
_SCRUB_MARGIN: Final = 256
# A hard ceiling on walk depth keeps Python recursion safe whatever max_depth says.
_DEPTH_CEILING: Final = 64
# Ints beyond this many bits become a summary string: CPython refuses to print
# ints over 4300 digits, and JSON readers lose precision long before that.
_MAX_INT_BITS: Final = 1024
_FAST_INT: Final = 1 << 63
# Sets up to this size are ordered exactly (heapq.nsmallest: well under a millisecond);
# bigger ones by their first items met, so a 10M-element set costs what a small one does.
_SORT_MAX: Final = 4096
# An unknown object longer than this is summarised by its length, not its repr.
_REPR_MAX_LEN: Final = 1000
# User-named attribute keys (``attributes=``, ``trace.annotate``) are cut to this many chars.
MAX_KEY_CHARS: Final = 256
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


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


_encode_json = _json_encoder(ascii_only=False)
# Used only when the text holds lone surrogates, which are not valid UTF-8.
_encode_json_ascii = _json_encoder(ascii_only=True)


# Reprs computed during one traced call, by object id: inputs, output and the
# error message share it, so each object's ``__repr__`` runs once per call. The
# object is kept beside its text so that its id cannot be reused meanwhile.
Reprs = dict[int, tuple[Any, str]]


# --- small helpers -----------------------------------------------------------
def _type_name(value: Any) -> str:
    try:
        return str(type(value).__name__)
    except Exception:
        return "object"


def safe_repr(value: Any, max_chars: int) -> str:
    """Return ``repr(value)`` cut to `max_chars` (plus marker); never raises.

    Memory addresses (`` at 0x7f…``) are dropped so output is deterministic.
    A failing ``__repr__`` gives ``"<TypeName object (repr failed: ExcType)>"``;
    an int too big to print (over 1024 bits) ``"<int bits=N>"``.
    """
    if type(value) is int and int.bit_length(value) > _MAX_INT_BITS:
        return f"<int bits={int.bit_length(value)}>"
    try:
        text = repr(value)
    except Exception as exc:
        text = f"<{_type_name(value)} object (repr failed: {_type_name(exc)})>"
    text = writable(_ADDRESS.sub("", text[: max_chars + 64]))
    if len(text) > max_chars:
        text = text[: max(max_chars, 0)] + CUT
    return text


def _utf8_len(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def _dump(tree: Any) -> tuple[str, int]:
    """Encode JSON-compatible data; return the text and its UTF-8 size."""
    text = _encode_json(tree)
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


def _json_string(text: str, max_bytes: int) -> str:
    """The last resort: a JSON string of a prefix of `text` plus the marker."""
    floor = _dump(CUT)[1]
    if max_bytes < floor:
        return '""'
    keep = min(len(text), max_bytes)
    while keep > 0:
        out, size = _dump(text[:keep] + CUT)
        if size <= max_bytes:
            return out
        keep = min(keep - 1, keep * (max_bytes - floor) // max(size - floor, 1))
    return _dump(CUT)[0]


def _scrubbed_head(text: str, chars: int, limits: Limits | None) -> str:
    """The first ``chars`` (plus a margin) of ``text``, writable and scrubbed of credentials."""
    head = text if len(text) <= chars + _SCRUB_MARGIN else text[: chars + _SCRUB_MARGIN]
    if limits is not None and limits.redact and len(head) >= 8:
        head = scrub_text(head, limits)
    return head


def _cap_text(text: str, max_bytes: int, limits: Limits | None = None) -> str:
    """Cut plain text to `max_bytes` UTF-8 bytes, marker (with the count cut) included.

    With `limits`, credentials are scrubbed first (see `scrub_text`), only in
    the part that can be kept; lone surrogates come out escaped.
    """
    total = len(text)
    head = _scrubbed_head(text, max_bytes, limits)
    tail = total - min(total, max_bytes + _SCRUB_MARGIN)  # chars never looked at
    if tail == 0 and head.isascii() and len(head) <= max_bytes:
        return head
    part = head[: max_bytes + 1]
    data = part.encode("utf-8", "backslashreplace")
    if tail == 0 and len(part) == len(head) and len(data) <= max_bytes:
        return data.decode("utf-8")
    cut = max_bytes - _MARKER_BYTES
    if cut < 0:
        return data[: max(max_bytes, 0)].decode("utf-8", "ignore")
    kept = data[:cut].decode("utf-8", "ignore")
    return kept + truncated(len(head) + tail - len(kept))


def _summary(value: Any, size: int | None) -> str:
    count = "" if size is None else f" len={size}"
    return f"<{_type_name(value)}{count}>{CUT}"


def _json_key(key: Any) -> str:
    """Dict key → str the way `json.dumps` converts keys; repr for other types."""
    kind = type(key)
    if kind is str:
        return writable(key)
    if key is None or kind is bool:
        return "null" if key is None else ("true" if key else "false")
    if isinstance(key, enum.Enum):
        return safe_repr(key, 200)
    if isinstance(key, str):
        return writable(str.__str__(key))
    if isinstance(key, int) and int.bit_length(key) <= _MAX_INT_BITS:
        return int.__repr__(key)
    if isinstance(key, float):
        return float.__repr__(key) if math.isfinite(key) else _nonfinite(key)
    return safe_repr(key, 200)


def _nonfinite(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    return "Infinity" if value > 0 else "-Infinity"


class _Walker:
    """One bounded conversion of a value to JSON-compatible data.

    `budget` is the output size still allowed, estimated as compact JSON bytes
    while walking; once spent, containers stop early with a marker item, so the
    walk costs O(output), not O(input), for lists, dicts and strings.
    """

    __slots__ = ("budget", "depth_cap", "items_cap", "limits", "on_path", "reprs", "string_cap")

    def __init__(self, limits: Limits, budget: int, reprs: Reprs | None = None) -> None:
        self.limits = limits
        self.budget = budget
        self.string_cap = limits.max_string
        self.items_cap = limits.max_items
        self.depth_cap = min(limits.max_depth, _DEPTH_CEILING)
        # ids of the containers on the current path; never written to output.
        self.on_path: set[int] = set()
        # repr text by object id, shared by the retries of one encoding and by
        # every encoding of one call: each unknown object's __repr__ runs once.
        self.reprs: Reprs = {} if reprs is None else reprs

    def walk(self, value: Any, depth: int) -> Any:
        try:
            return self._convert(value, depth)
        except Exception as exc:
            failed = f"<{_type_name(value)} object (serialization failed: {_type_name(exc)})>"
            return self.text(failed)

    def text(self, value: str) -> str:
        room = self.budget - 2
        cap = self.string_cap if room >= self.string_cap else max(room, 0)
        total = len(value)
        value = writable(_scrubbed_head(value, cap, self.limits))
        length = len(value) + total - min(total, cap + _SCRUB_MARGIN)  # as if all were read
        if length > cap:
            keep = cap if cap == self.string_cap else max(cap - _MARKER_BYTES, 0)
            value = value[:keep] + truncated(length - keep)
        size = _utf8_len(value)
        if size > room + _MARKER_BYTES and size > len(value):
            # Non-ASCII text spends several bytes per char: cut by bytes instead.
            data = value.encode("utf-8")[: max(room - _MARKER_BYTES, 0)]
            kept = data.decode("utf-8", "ignore")
            value = kept + truncated(length - len(kept))
            size = _utf8_len(value)
        self.budget -= size + 3
        return value

    def _convert(self, value: Any, depth: int) -> Any:
        kind = type(value)
        if kind is str:
            return self.text(value)
        if value is None or kind is bool:
            self.budget -= 6
            return value
        if kind is int:
            return self._int(value)
        if kind is float:
            return self._float(value)
        if kind is dict:
            return self._mapping(value, dict.items(value), len(value), depth)
        if kind is list or kind is tuple:
            return self._sequence(value, value, len(value), depth)
        return self._other(value, depth)

    def _int(self, value: int) -> int | str:
        if int.bit_length(value) > _MAX_INT_BITS:
            return self.text(f"<int bits={int.bit_length(value)}>")
        self.budget -= 21 if value.bit_length() > 64 else 8
        return value

    def _float(self, value: float) -> float | str:
        if not math.isfinite(value):
            return self.text(_nonfinite(value))
        self.budget -= 25
        return value

    def _other(self, value: Any, depth: int) -> Any:
        if is_opaque(value):  # a mock: its own repr, nothing probed
            return self.text(self.repr(value))
        if isinstance(value, enum.Enum):
            return self.walk(value.value, depth)
        record = fields(value, self.items_cap)
        if record is not None:
            items, count = record
            if items is None:  # too long to call its _asdict()/model_dump(): a summary
                return self.text(_summary(value, count))
            return self._mapping(value, items, count, depth)
        if isinstance(value, str):
            return self.text(str.__str__(value))
        if isinstance(value, int):
            return self._int(int.__int__(value))
        if isinstance(value, float):
            return self._float(float.__float__(value))
        if isinstance(value, dict):
            return self._mapping(value, dict.items(value), dict.__len__(value), depth)
        if isinstance(value, Mapping):
            return self._mapping(value, value.items(), length(value), depth)
        if isinstance(value, (list, tuple, deque)):
            return self._sequence(value, iter(value), length(value), depth)
        if isinstance(value, (set, frozenset, AbstractSet)):
            return self._set(value, depth)
        # Arrays, then anything exposing a buffer (bytes, array.array, mmap...): a summary.
        summary = array_summary(value) or buffer_summary(value)
        if summary is not None:
            return self.text(summary)
        if isinstance(value, (datetime.date, datetime.time)):
            return self.text(value.isoformat())
        if isinstance(value, (datetime.timedelta, uuid.UUID, Decimal, PurePath)):
            return self.text(str(value))
        if isinstance(value, (Sequence, ValuesView)) and not isinstance(value, type):
            return self._sequence(value, iter(value), length(value), depth)
        if isinstance(value, BaseException):
            return self.text(self._exception(value))
        size = length(value)
        if size is not None and size > _REPR_MAX_LEN:  # its repr would be as big: summarise
            return self.text(_summary(value, size))
        return self.text(self.repr(value))

    def _exception(self, value: BaseException) -> str:
        """An exception's repr, ``Type(args)``, from bounded reprs of its args when they are big."""
        args = exception_args(value)
        if cheap_repr(args):
            return self.repr(value)
        shown = [bounded_repr(a, self.limits, self.string_cap, self.reprs) for a in args[:20]]
        if len(args) > 20:
            shown.append(f"{CUT} +{len(args) - 20} more items")
        return f"{_type_name(value)}({', '.join(shown)})"

    def repr(self, value: Any) -> str:
        """``safe_repr`` of ``value``, computed once per call (see `Reprs`)."""
        return repr_once(value, self.string_cap, self.reprs)

    def _mapping(self, owner: Any, items: Iterable[Any], size: int | None, depth: int) -> Any:
        if depth >= self.depth_cap:
            return self.text(_summary(owner, size))
        key_id = id(owner)
        if key_id in self.on_path:
            return self.text(CYCLE)
        self.on_path.add(key_id)
        try:
            out: dict[str, Any] = {}
            self.budget -= 2
            redact = self.limits.redact
            for count, (key, item) in enumerate(items):
                if count >= self.items_cap or self.budget <= 0:
                    more = "" if size is None else f"+{size - count} "
                    out[CUT] = f"{more}more keys"
                    break
                name = _json_key(key)
                if len(name) > self.string_cap:
                    name = name[: self.string_cap] + CUT
                if redact and len(name) >= 8:
                    name = scrub_text(name, self.limits)
                if name in out:
                    name = f"{name}#{count}"
                self.budget -= _utf8_len(name) + 4
                if redact and is_secret_name(name, self.limits):
                    self.budget -= len(REDACTED) + 2
                    out[name] = REDACTED
                else:
                    out[name] = self.walk(item, depth + 1)
            return out
        finally:
            self.on_path.discard(key_id)

    def _sequence(self, owner: Any, items: Iterable[Any], size: int | None, depth: int) -> Any:
        if depth >= self.depth_cap:
            return self.text(_summary(owner, size))
        key_id = id(owner)
        if key_id in self.on_path:
            return self.text(CYCLE)
        self.on_path.add(key_id)
        try:
            out: list[Any] = []
            self.budget -= 2
            for item in items:
                if len(out) >= self.items_cap or self.budget <= 0:
                    more = "" if size is None else f" +{size - len(out)} more items"
                    out.append(CUT + more)
                    break
                out.append(self.walk(item, depth + 1))
            return out
        finally:
            self.on_path.discard(key_id)

    def _set(self, value: AbstractSet[Any], depth: int) -> Any:
        size = length(value) or 0
        if depth >= self.depth_cap:
            return self.text(_summary(value, size))
        cap = self.items_cap + 1  # one extra tells _sequence that more follow
        # Too big to order within the cost cap: the first items met are ordered.
        items: Iterable[Any] = value if size <= _SORT_MAX else itertools.islice(value, cap)
        # Sorted so output does not depend on hash seeds; unorderable elements
        # (mixed types, raising __lt__) fall back to ordering by repr.
        try:
            ordered = heapq.nsmallest(cap, items) if size > cap else sorted(items)
        except Exception:
            items = value if size <= _SORT_MAX else itertools.islice(value, cap)
            ordered = heapq.nsmallest(cap, items, key=self.repr)
        return self._sequence(value, ordered, size, depth)


def repr_once(value: Any, max_chars: int, reprs: Reprs | None) -> str:
    """``safe_repr(value, max_chars)``, taken from `reprs` when this call already ran it.

    The cached text (cut at the cap of whoever ran it first) is cut again to
    `max_chars` when shorter is asked for. Never raises.
    """
    if reprs is None:
        return safe_repr(value, max_chars)
    key = id(value)
    found = reprs.get(key)
    if found is None or found[0] is not value:
        text = safe_repr(value, max_chars)
        reprs[key] = (value, text)
        return text
    text = found[1]
    return text if len(text) <= max_chars else text[:max_chars] + CUT


_PLAIN_REPR: Final = frozenset({str, int, float, bool, type(None), bytes})


def bounded_repr(value: Any, limits: Limits, max_chars: int, reprs: Reprs | None = None) -> str:
    """``repr(value)`` without rendering big contents: long text cut, big values summarised.

    Cheap reprs (`cheap_repr`) are the real one (once per call, from `reprs`);
    a long str is the repr of its head plus the marker; anything else big is
    the repr of its bounded walk (`to_jsonable`: ``<bytes len=50000000 …>``,
    lists cut with a count). Never raises.
    """
    try:
        if type(value) is str and len(value) > max_chars:
            return repr(value[:max_chars]) + truncated(len(value) - max_chars)
        if cheap_repr(value):
            if type(value) in _PLAIN_REPR:
                return repr(value)[: max_chars + 64]
            return repr_once(value, limits.max_string, reprs)[: max_chars + 64]
        converted = to_jsonable(value, limits, reprs)
        return converted if isinstance(converted, str) else safe_repr(converted, max_chars)
    except Exception as exc:
        return f"<{_type_name(value)} object (repr failed: {_type_name(exc)})>"


def to_jsonable(value: Any, limits: Limits, reprs: Reprs | None = None) -> Any:
    """Convert any value to JSON-compatible data under `limits`; never raises.

    Returns dicts with str keys, lists, str, int, float (finite), bool and None.
    The walk is bounded by `limits.max_value_bytes` worth of output, so huge
    inputs cost about as much as small ones. `reprs` is the call's repr cache.
    """
    try:
        return _Walker(limits, limits.max_value_bytes, reprs).walk(value, 0)
    except Exception as exc:  # the walker contains errors; this is the last line
        return f"<{_type_name(value)} object (serialization failed: {_type_name(exc)})>"


def _plain(
    value: Any, depth: int, budget: int, limits: Limits, secret: dict[str, bool] | None
) -> int:
    """Budget left after `value` if it is plain JSON needing no cut, else -1.

    Plain: str/int/float/bool/None and dicts (str keys, none secret) and
    lists/tuples of plain values within every cap. Such values go straight to
    the C encoder; NaN and infinities are left to it, and it refuses them.
    `budget` (estimated output bytes) bounds the work on big values.
    """
    kind = type(value)
    if kind is str:
        if len(value) > limits.max_string or (secret is not None and _holds_secret(value, limits)):
            return -1
        return budget - len(value) - 3
    if kind is int:
        return budget - 8 if -_FAST_INT < value < _FAST_INT else -1
    if kind is float or kind is bool or value is None:
        return budget - 8
    if depth >= limits.max_depth or budget < 0:
        return -1
    if kind is list or kind is tuple:
        if len(value) > limits.max_items:
            return -1
        for item in value:
            budget = _plain(item, depth + 1, budget - 1, limits, secret)
            if budget < 0:
                return -1
        return budget
    if kind is dict:
        if len(value) > limits.max_items:
            return -1
        for key, item in value.items():
            if type(key) is not str or len(key) > limits.max_string:
                return -1
            if secret is not None and secret.get(key, True) and is_secret_name(key, limits):
                return -1
            budget = _plain(item, depth + 1, budget - len(key) - 4, limits, secret)
            if budget < 0:
                return -1
        return budget
    return -1


def _holds_secret(text: str, limits: Limits) -> bool:
    """Whether scrubbing would change ``text`` (then the walk, which scrubs, takes over)."""
    return len(text) >= 8 and scrub_text(text, limits) is not text


def _fits(value: Any, max_bytes: int) -> str | None:
    """The JSON text of a plain value if it fits `max_bytes`, else None."""
    try:
        text = _encode_json(value)
        if text.isascii():
            return text if len(text) <= max_bytes else None
        return text if len(text.encode("utf-8")) <= max_bytes else None
    except ValueError:  # NaN/Infinity, or lone surrogates in the UTF-8 check
        return None


def _fast_object(arguments: dict[Any, Any], limits: Limits, max_bytes: int) -> str | None:
    """JSON for a dict of plain values (arguments, a result), secret top-level names
    redacted; None to take the walk."""
    if len(arguments) > limits.max_items:
        return None
    secret = secret_name_cache(limits) if limits.redact else None
    out: dict[Any, Any] | None = None
    budget = max_bytes
    for key, value in arguments.items():
        if type(key) is not str:
            return None
        if secret is not None and secret.get(key, True) and is_secret_name(key, limits):
            if out is None:
                out = dict(arguments)
            out[key] = REDACTED
            continue
        kind = type(value)  # scalars inline: the common case, worth skipping a call
        if kind is str:
            if len(value) > limits.max_string:
                return None
            if secret is not None and _holds_secret(value, limits):
                return None
            budget -= len(value)
        elif kind is int:
            if not -_FAST_INT < value < _FAST_INT:
                return None
        elif not (kind is float or kind is bool or value is None):
            budget = _plain(value, 1, budget - len(key) - 4, limits, secret)
            if budget < 0:
                return None
    return _fits(arguments if out is None else out, max_bytes)


def _encode(value: Any, limits: Limits, max_bytes: int, reprs: Reprs | None) -> str:
    """Walk, dump, and shrink until the text fits `max_bytes`."""
    budget = max_bytes
    text = ""
    if reprs is None:
        reprs = {}
    for _ in range(4):
        walker = _Walker(limits, budget, reprs)
        text, size = _dump(walker.walk(value, 0))
        if size <= max_bytes:
            return text
        # The estimate missed (escapes, markers): shrink in proportion and retry.
        used = max(budget - walker.budget, 1)
        budget = min(budget - 1, used * max_bytes // size * 9 // 10)
        if budget <= 0:
            break
    return _json_string(text, max_bytes)


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
            fast = _fast_object(arguments, limits, min(max_bytes, limits.max_value_bytes))
            if fast is not None:
                return fast
            shared = _shared_inputs(arguments, limits, max_bytes, reprs)
            if shared is not None:
                return shared
        return _encode(arguments, limits, max_bytes, reprs)
    except Exception as exc:
        return _json_string(f"<arguments not serializable: {_type_name(exc)}>", max_bytes)


def _value_json(value: Any, limits: Limits, max_bytes: int, reprs: Reprs | None) -> str:
    """One value as JSON text of at most `max_bytes` bytes."""
    secret = secret_name_cache(limits) if limits.redact else None
    if _plain(value, 0, max_bytes, limits, secret) >= 0:
        text = _fits(value, max_bytes)
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
    keys = {k: _encode_json(writable(k)) for k in arguments}
    texts = {
        k: '"' + REDACTED + '"'
        if is_secret_name(k, limits)
        else _value_json(v, limits, min(per_value, max_bytes), reprs)
        for k, v in arguments.items()
    }
    overhead = 2 + sum(_utf8_len(k) + 2 for k in keys.values())
    sizes = {k: _utf8_len(t) for k, t in texts.items()}
    room = max_bytes - overhead
    if sum(sizes.values()) > room:
        # Water-filling: the smallest values keep their size, the rest share what is left.
        order = sorted(sizes.values())
        cap, left = 0, room
        for i, size in enumerate(order):
            share = left // (len(order) - i)
            if size > share:
                cap = share
                break
            left -= size
        if cap < 16:
            return None
        for key, size in sizes.items():
            if size > cap:
                texts[key] = _value_json(arguments[key], limits, cap, reprs)
    text = "{" + ",".join(f"{keys[k]}:{texts[k]}" for k in arguments) + "}"
    return text if _utf8_len(text) <= max_bytes else None


def encode_output(
    value: Any, limits: Limits, max_bytes: int, reprs: Reprs | None = None
) -> tuple[str, str]:
    """Return ``(text, mime)`` for a return value; never raises.

    A str comes back as itself (cut to `max_bytes`) with ``text/plain``;
    anything else as JSON text of at most `max_bytes` bytes with ``application/json``.
    `reprs` is the call's repr cache (see `Reprs`).
    """
    try:
        if isinstance(value, str):
            return _cap_text(str.__str__(value), max_bytes, limits), MIME_TEXT
        if type(value) is dict:  # the common result: its scalars checked inline
            fast = _fast_object(value, limits, max_bytes)
            if fast is not None:
                return fast, MIME_JSON
        secret = secret_name_cache(limits) if limits.redact else None
        if _plain(value, 0, max_bytes, limits, secret) >= 0:
            text = _fits(value, max_bytes)
            if text is not None:
                return text, MIME_JSON
        return _encode(value, limits, max_bytes, reprs), MIME_JSON
    except Exception as exc:
        return _json_string(f"<output not serializable: {_type_name(exc)}>", max_bytes), MIME_JSON


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
    return int.__repr__(value) if bits <= _MAX_INT_BITS else f"<int bits={bits}>"


def encode_text(text: str, max_bytes: int, limits: Limits | None = None) -> str:
    """Plain text as stored on a span: at most `max_bytes` UTF-8 bytes, marker included.

    Credentials inside are scrubbed under `limits` (default: the process-wide
    ones); lone surrogates (not valid UTF-8) come out escaped. Never raises.
    """
    try:
        return _cap_text(str.__str__(text), max_bytes, get_limits() if limits is None else limits)
    except Exception as exc:
        return f"<text not serializable: {_type_name(exc)}>"


def encode_key(key: Any, limits: Limits) -> str:
    """A user-chosen attribute name (``attributes=``, ``trace.annotate``) as a writable key.

    Converted as dict keys are (`_json_key`: str as is, other types by their
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
        name = _json_key(key)
        if cut or len(name) > MAX_KEY_CHARS:
            name = name[:MAX_KEY_CHARS] + CUT
        if limits.redact and len(name) >= 8:
            name = scrub_text(name, limits)
        return name
    except Exception as exc:
        return f"<key not serializable: {_type_name(exc)}>"


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
        if key is not None and limits.redact and is_secret_name(key, limits):
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
    except Exception as exc:
        return f"<{_type_name(value)} not serializable: {_type_name(exc)}>"
