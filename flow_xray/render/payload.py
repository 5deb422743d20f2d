"""The trace viewer's embedded data: columns over a string table, gzip, base64.

A trace page of a million calls must stay small and open fast, so its calls
are not embedded as one JSON object each. Instead the page holds
``{"format": 2, "packed": "<base64>"}``, where the base64 text is the gzip of
one JSON document, a NUL character, then the detail texts separated by NULs::

    {"head": {...every payload key but the calls...},
     "count": n,
     "strings": [...],                 # each distinct string value once
     "texts": t,                       # how many detail texts follow
     "columns": [[key, kind, values, absent], ...]}
    \0<text 0>\0<text 1>...            # each distinct detail value once, as JSON text

Per column (one per field), ``kind`` says how ``values`` (one per call) read:
``"c"`` one value every call has (most often null), ``"v"`` the values
themselves (numbers, booleans, nulls), ``"f"`` numbers as base64 of
little-endian 64-bit floats (NaN for null: times, whose text would take
seconds to write for a million calls), ``"t"`` strings, each call its own (ids),
``"s"`` indexes into ``strings`` (-1 for null), ``"j"`` indexes into the texts,
``"J"`` the index of the first call's text (each call its own, in order: inputs);
a text is parsed when that call's field is first read (the details: inputs, output, traceback,
attributes, events, and any other non-scalar value). ``absent`` lists the calls
without the field. Compact JSON text never holds a raw NUL (JSON escapes
control characters), so the texts need no quoting: no escaping on the way in,
no parsing of a million strings on the way out. The browser inflates it with
its built-in ``DecompressionStream`` (``static/payload.js``); `unpack` reads it
back here. Base64 text needs no escaping inside a ``<script>`` element.
"""

from __future__ import annotations

import base64
import gzip
import itertools
import json
import math
import sys
import zlib
from array import array
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from flow_xray import jsontext
from flow_xray.jsontext import JsonText

FORMAT: Final = 2
_SEPARATOR: Final = "\0"
_LEVEL: Final = 1  # gzip level: 6 is ~4x slower for ~7% less
_SCALARS: Final = frozenset((int, float, bool, type(None)))
_STRINGS: Final = frozenset((str, type(None)))
# A column of one of these, all equal, is written once ("c"); bool is not (True == 1).
_CONSTANT_TYPES: Final = frozenset((str, int, type(None)))


def dumps(value: Any) -> str:
    """``value`` as compact JSON text that any trace can produce.

    Non-finite floats become strings, mapping keys that JSON cannot hold (a
    tuple, say) their ``str`` and other non-JSON values their ``repr``.

    Raises:
        ValueError: ``value`` contains itself (a circular reference).
    """
    try:
        return _encode(value)
    except (ValueError, TypeError):  # NaN/inf (ValueError) or a non-JSON key (TypeError)
        value = _finite(value)
    except RecursionError:  # nested deeper than the C encoder goes: the iterative one
        pass
    try:
        return _encode(value)
    except RecursionError:
        return jsontext.dumps(_finite(value), allow_nan=False, default=repr)


_encoder = json.JSONEncoder(
    ensure_ascii=False, allow_nan=False, default=repr, separators=(",", ":")
)
_encode = _encoder.encode
# The C encoder called directly (what ``encode`` does for a container) skips
# two Python calls per value: ~3x faster on the many small values of a trace.
_chunks: Any = getattr(json.encoder, "c_make_encoder", None)
if _chunks is not None:
    _chunks = _chunks({}, repr, json.encoder.encode_basestring, None, ":", ",", False, False, False)


def _dumps_value(value: Any) -> str:
    """`dumps` for one detail value, the common small containers fast."""
    if not value and type(value) in (dict, list):
        return "{}" if type(value) is dict else "[]"
    if _chunks is not None and type(value) in (dict, list):
        try:
            return "".join(_chunks(value, 0))
        except (ValueError, TypeError, RecursionError):
            pass
    return dumps(value)


def pack(
    head: Mapping[str, Any],
    columns: Mapping[str, Sequence[Any]],
    absent: Mapping[str, Sequence[int]] | None = None,
) -> dict[str, Any]:
    """The packed form of a trace page's data: ``head`` (every payload key but the calls)
    and the calls as columns (one list per field, ``absent`` listing per field the rows
    that lack it). A detail value given as `JsonText` goes in as that text."""
    count = len(next(iter(columns.values()), ()))
    tables = _Tables()
    missing = absent or {}
    packed = [
        _column(key, values, list(missing.get(key, ())), tables) for key, values in columns.items()
    ]
    body = {
        "head": dict(head),
        "count": count,
        "strings": list(tables.strings),
        "texts": len(tables.texts),
        "columns": packed,
    }
    del packed
    # Compressed a batch of texts at a time: the whole text, and its bytes, never exist
    # at once (a million calls' page is ~400 MB before compression).
    compressor = zlib.compressobj(_LEVEL, zlib.DEFLATED, _GZIP_WBITS)
    raw = [compressor.compress(_utf8(dumps(body)))]
    del body
    texts = tables.texts
    for start in range(0, len(texts), _BATCH):
        batch = _SEPARATOR.join(("", *texts[start : start + _BATCH]))
        raw.append(compressor.compress(_utf8(batch)))
    raw.append(compressor.flush())
    return {"format": FORMAT, "packed": base64.b64encode(b"".join(raw)).decode("ascii")}


_GZIP_WBITS: Final = 16 + zlib.MAX_WBITS  # a gzip stream (what DecompressionStream("gzip") reads)
_BATCH: Final = 4096


def _utf8(text: str) -> bytes:
    # A lone surrogate can only sit inside a JSON string, where "\\udc80" is its escape.
    return text.encode("utf-8", "backslashreplace")


class _Tables:
    """What the columns index: distinct strings, and detail texts (with an index of
    the texts shared by several calls)."""

    __slots__ = ("shared", "strings", "texts")

    def __init__(self) -> None:
        self.strings: dict[str, int] = {}
        self.texts: list[str] = []
        self.shared: dict[str, int] = {}


def _column(key: str, values: Sequence[Any], absent: list[int], tables: _Tables) -> list[Any]:
    types = set(map(type, values))
    if len(types) == 1 and types <= _CONSTANT_TYPES and values.count(values[0]) == len(values):
        return [key, "c", values[0], absent]  # the same value in every call (often null)
    if float in types and types <= _NUMBERS:
        packed = _floats(values, int in types)
        if packed is not None:  # times: a million written as text would take seconds
            return [key, "f", packed, absent]
    if types <= _SCALARS:  # (a NaN or an infinity is written as text, as `dumps` does)
        return [key, "v", list(values), absent]
    if types <= _STRINGS:
        if _mostly_distinct(values):  # ids: inline, no table of a million strings
            return [key, "t", list(values), absent]
        distinct: dict[Any, None] = dict.fromkeys(values)
        return [key, "s", _indexes(distinct, values, tables.strings), absent]
    if types == _JSON_TEXT:
        encoded: Sequence[str] = values
    else:
        encoded = _texts(values, types)
    if _mostly_distinct(encoded):  # each call its own text (inputs): in row order
        base = len(tables.texts)
        tables.texts.extend(encoded)
        return [key, "J", base, absent]
    shared, texts = tables.shared, tables.texts
    for value in dict.fromkeys(encoded):
        if value not in shared:
            shared[value] = len(texts)
            texts.append(value)
    return [key, "j", list(map(shared.__getitem__, encoded)), absent]


_JSON_TEXT: Final = frozenset((JsonText,))
_NUMBERS: Final = frozenset((int, float, type(None)))


def _floats(values: Sequence[Any], ints: bool) -> str | None:
    """A column of numbers (None for null) as base64 of little-endian 64-bit floats, None
    holding NaN; None when a value is not finite or an int too big to be a float exactly."""
    present = [v for v in values if v is not None] if None in values else values
    if ints and any(type(v) is int and not -_EXACT < v < _EXACT for v in present):
        return None
    try:
        if not math.isfinite(math.fsum(present)):
            return None
    except OverflowError:
        return None
    if present is not values:
        values = [_NAN if v is None else v for v in values]
    numbers = array("d", values)
    if sys.byteorder != "little":
        numbers.byteswap()
    return base64.b64encode(numbers.tobytes()).decode("ascii")


_EXACT: Final = 1 << 53  # ints a 64-bit float holds exactly
_NAN: Final = float("nan")
_SAMPLE: Final = 256


def _mostly_distinct(values: Sequence[Any]) -> bool:
    """Whether a column's values are (nearly) all different, judged on its first ones.

    Such a column is written as it is: a table of them would only add indexes.
    Either way is correct; this only chooses the smaller page (gzip takes care
    of the repeats a sample misses).
    """
    sample = values[:_SAMPLE]
    return len(sample) == _SAMPLE and len(set(sample)) >= _SAMPLE * 9 // 10


def _texts(values: Sequence[Any], types: set[type]) -> list[str]:
    """Each value's JSON text (a `JsonText` is one already); calls often share one object
    for a detail (an empty dict, a function's source location), so each object is encoded
    once."""
    if JsonText in types:  # mostly distinct texts: no table of a million ids
        done: dict[int, str] = {}
        texts: list[str] = []
        add = texts.append
        for value in values:
            if type(value) is JsonText:
                add(value)
            else:
                text = done.get(id(value))
                if text is None:
                    text = done[id(value)] = _dumps_value(value)
                add(text)
        return texts
    ids = list(map(id, values))
    objects = dict(zip(ids, values, strict=True))
    encoded = {key: _dumps_value(value) for key, value in objects.items()}
    return list(map(encoded.__getitem__, ids))


def _indexes(
    distinct: Mapping[Any, None], values: Sequence[str | None], table: dict[str, int]
) -> list[int]:
    """Each value's index in ``table`` (-1 for None), adding the new ``distinct`` ones."""
    fresh = [value for value in distinct if value is not None and value not in table]
    table.update(zip(fresh, range(len(table), len(table) + len(fresh)), strict=True))
    lookup: Any = table.get  # None is never a key: it gets the default
    return list(map(lookup, values, itertools.repeat(-1)))


def unpack(embedded: Mapping[str, Any]) -> dict[str, Any]:
    """The payload again (``nodes`` as rows of dicts) from `pack`'s form; others as they are.

    Raises:
        ValueError: the packed data is not this format.
    """
    if "packed" not in embedded:
        return dict(embedded)
    if embedded.get("format") != FORMAT:
        raise ValueError(f"unknown packed payload format {embedded.get('format')!r}")
    document, *texts = (
        gzip.decompress(base64.b64decode(embedded["packed"])).decode("utf-8").split(_SEPARATOR)
    )
    body = json.loads(document)
    strings = body["strings"]
    if len(texts) != body["texts"]:
        raise ValueError(f"packed payload holds {len(texts)} texts, says {body['texts']}")
    count = body["count"]
    rows: list[dict[str, Any]] = [{} for _ in range(count)]
    for key, kind, values, absent in body["columns"]:
        missing = set(absent)
        read = _reader(kind, strings, texts)
        for i, (row, value) in enumerate(zip(rows, _values(kind, values, count), strict=True)):
            if i not in missing:
                row[key] = read(value)
    return {**body["head"], "nodes": rows}


def _values(kind: str, values: Any, count: int) -> Sequence[Any]:
    """A packed column's values, one per call (`_reader` makes each what it stands for)."""
    if kind == "c":
        return [values] * count
    if kind == "f":
        numbers = array("d", base64.b64decode(values))
        if sys.byteorder != "little":
            numbers.byteswap()
        return [None if math.isnan(v) else v for v in numbers]
    if kind == "J":
        return range(values, values + count)
    return values  # type: ignore[no-any-return]


def _reader(kind: str, strings: Sequence[str], texts: Sequence[str]) -> Callable[[Any], Any]:
    """What a packed value of this column kind stands for: a string, a parsed text, itself."""
    if kind == "s":
        return lambda index: None if index < 0 else strings[index]
    if kind in ("j", "J"):
        return lambda index: jsontext.loads(texts[index])
    return lambda value: value


def read_page(page: str) -> dict[str, Any]:
    """The data a viewer page embeds (unpacked), e.g. to check what a written page holds.

    Raises:
        ValueError: the page has no embedded data.
    """
    start = page.find(_DATA_TAG)
    end = page.find("</script>", start)
    if start < 0 or end < 0:
        raise ValueError("not a flow-xray viewer page: no embedded data")
    return unpack(json.loads(page[start + len(_DATA_TAG) : end]))


_DATA_TAG: Final = '<script type="application/json" id="fx-data">'


def _finite(value: Any) -> Any:
    """Copy of ``value`` with NaN/inf replaced by their text and keys made strings.

    Iterative, so any depth works. Each container is copied once (by identity):
    a shared one stays shared, and one that contains itself gives a copy that
    does too, which `json.dumps` then rejects instead of this loop never ending.
    """
    root: list[Any] = [value]
    copies: dict[int, Any] = {}
    stack: list[tuple[Any, Any, Any]] = [(root, 0, value)]
    while stack:
        holder, key, item = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            holder[key] = str(item)
        elif isinstance(item, (Mapping, list, tuple)) and id(item) in copies:
            holder[key] = copies[id(item)]
        elif isinstance(item, Mapping):
            copy = {str(k): v for k, v in item.items()}
            holder[key] = copies[id(item)] = copy
            stack.extend((copy, k, v) for k, v in copy.items())
        elif isinstance(item, (list, tuple)):
            items = list(item)
            holder[key] = copies[id(item)] = items
            stack.extend((items, i, v) for i, v in enumerate(items))
    return root[0]
