"""The trace viewer's embedded data: columns, binary where it counts, gzip, base64.

A trace page of a million calls must stay small and open fast, so its calls
are not embedded as one JSON object each. Instead the page holds
``{"format": 4, "packed": "<base64>"}``, where the base64 text is the gzip of
these bytes::

    <n: 4 bytes, little-endian>          # the length of the JSON document
    {"head": {...every payload key but the calls...},      # n bytes of UTF-8
     "count": rows, "strings": [...], "texts": t, "blob": b,
     "columns": [[key, kind, values, absent], ...]}
    <b bytes of binary columns>           # the blob
    \0<text 0>\0<text 1>...              # each detail value as JSON text (UTF-8)

Per column (one per field), ``kind`` says how ``values`` (one per call) read:
``"c"`` one value every call has (most often null), ``"v"`` the values
themselves (numbers, booleans, nulls), ``"t"`` strings, each call its own,
``"s"`` indexes into ``strings`` (-1 for null), ``"j"`` indexes into the texts,
``"J"`` the index of the first call's text (each call its own, in order: inputs),
``"p"`` ``[prefix, other]``: the prefix, then the other column's string (ids made
of span ids). The binary kinds name where their bytes start in the blob, and
store each value's 8 bytes as 8 planes (all first bytes, then all second bytes,
...), which gzip packs far better than the values side by side:
``"F"`` ``offset``: little-endian 64-bit floats, NaN for null; ``"N"`` and
``"K"`` ``[offset, scale]`` or ``[offset, scale, base]``: integers k (as
little-endian 64-bit two's complement) standing for ``k / scale``, used where
that gives back every value exactly (times: nanoseconds in ms; columns of
integers, the parents: scale 1), each stored as the difference to the one
before (``"N"``, start times) or as it is (``"K"``, latencies), and, with
``base``, less the k of column ``base`` in the same call (self times, less
the latency);
``"X"`` ``[offset, width]``: lowercase hexadecimal strings of ``width`` bytes
(span ids), as those bytes.
A text is parsed when that call's field is read. ``absent`` lists the calls
without the field. Compact JSON text never holds a raw NUL (JSON escapes
control characters), so the texts need no quoting. The browser inflates it with
its built-in ``DecompressionStream`` (``static/payload.js``); `unpack` reads it
back here. Base64 text needs no escaping inside a ``<script>`` element.
"""

from __future__ import annotations

import base64
import gzip
import itertools
import json
import math
import operator
import struct
import sys
import zlib
from array import array
from collections.abc import Mapping, Sequence
from typing import Any, Final

from flow_xray import jsontext
from flow_xray.hexids import HexIds, id_bytes
from flow_xray.jsontext import JsonText
from flow_xray.render.numbers import LEVEL, SAMPLE, Numbers, hex_width, unplanes

FORMAT: Final = 4
_READABLE: Final = (3, FORMAT)  # (format 3 had no "K" columns and no bases)
_SEPARATOR: Final = "\0"
_SCALARS: Final = frozenset((int, float, bool, type(None)))
_STRINGS: Final = frozenset((str, type(None)))
# A column of one of these (one type: True == 1), all equal, is written once ("c").
_CONSTANT_TYPES: Final = frozenset((str, int, bool, type(None)))


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
    columns: dict[str, Sequence[Any]],
    absent: Mapping[str, Sequence[int]] | None = None,
    *,
    consume: bool = False,
) -> dict[str, Any]:
    """The packed form of a trace page's data: ``head`` (every payload key but the calls)
    and the calls as columns (one list per field, ``absent`` listing per field the rows
    that lack it). A detail value given as `JsonText` goes in as that text. With
    ``consume``, each column is taken out of ``columns`` once packed (a million calls'
    columns are let go of while the page grows)."""
    count = len(next(iter(columns.values()), ()))
    tables = _Tables()
    missing = absent or {}
    prefixed = _prefixed(columns, missing)
    packed = []
    for key in list(columns):
        if key in prefixed:
            packed.append([key, "p", prefixed[key], []])
        else:
            packed.append(_column(key, columns[key], list(missing.get(key, ())), tables))
        if consume:
            del columns[key]
    body = {
        "head": dict(head),
        "count": count,
        "strings": list(tables.strings),
        "texts": len(tables.texts),
        "blob": tables.blob_size,
        "columns": packed,
    }
    del packed
    # Compressed a part at a time: the whole uncompressed data never exists at once.
    compressor = zlib.compressobj(LEVEL, zlib.DEFLATED, _GZIP_WBITS)
    document = _utf8(dumps(body))
    del body
    raw = [compressor.compress(struct.pack("<I", len(document)) + document)]
    del document
    for part in tables.blob:
        raw.append(compressor.compress(part))
    tables.blob.clear()
    texts = tables.texts
    for start in range(0, len(texts), _BATCH):
        batch = _SEPARATOR.join(("", *texts[start : start + _BATCH]))
        raw.append(compressor.compress(_utf8(batch)))
    raw.append(compressor.flush())
    return {"format": FORMAT, "packed": base64.b64encode(b"".join(raw)).decode("ascii")}


def _prefixed(
    columns: Mapping[str, Sequence[Any]], absent: Mapping[str, Sequence[int]]
) -> dict[str, list[str]]:
    """The string columns that are, row for row, one prefix and another column's string
    (a call's ``id`` is ``"n"`` and its ``span_id``): ``{key: [prefix, other]}``."""
    found = _prefixed_ids(columns, absent)
    strings = {  # (columns of ids: nearly all different)
        key: values
        for key, values in columns.items()
        if key not in found
        and values
        and not absent.get(key)
        and type(values[0]) is str
        and _mostly_distinct(values)
    }
    for key, values in strings.items():
        first = values[0]
        for other, others in strings.items():
            if other == key or other in found or len(others[0]) >= len(first):
                continue
            if not first.endswith(others[0]):
                continue
            prefix = first[: len(first) - len(others[0])]
            if all(map(operator.eq, map(operator.add, itertools.repeat(prefix), others), values)):
                found[key] = [prefix, other]  # (a str column equal to its own copy: never
                break  # both, `other in found` keeps the one it points at written out)
    return found


def _prefixed_ids(
    columns: Mapping[str, Sequence[Any]], absent: Mapping[str, Sequence[int]]
) -> dict[str, list[str]]:
    """`_prefixed` of the columns of ids kept as bytes (`HexIds`): told from their bytes."""
    ids = {key: v for key, v in columns.items() if type(v) is HexIds and not absent.get(key)}
    found: dict[str, list[str]] = {}
    for key, values in ids.items():
        for other, others in ids.items():
            if (
                other != key
                and other not in found
                and len(others.prefix) < len(values.prefix)
                and values.prefix.endswith(others.prefix)
                and values.width == others.width
                and values.data == others.data
            ):
                found[key] = [values.prefix[: len(values.prefix) - len(others.prefix)], other]
                break
    return found


_GZIP_WBITS: Final = 16 + zlib.MAX_WBITS  # a gzip stream (what DecompressionStream("gzip") reads)
_BATCH: Final = 4096


def _utf8(text: str) -> bytes:
    # A lone surrogate can only sit inside a JSON string, where "\\udc80" is its escape.
    return text.encode("utf-8", "backslashreplace")


class _Tables:
    """What the columns index: distinct strings, and detail texts (with an index of
    the texts shared by several calls)."""

    __slots__ = ("blob", "blob_size", "numbers", "shared", "strings", "texts")

    def __init__(self) -> None:
        self.numbers = Numbers()
        self.strings: dict[str, int] = {}
        self.texts: list[str] = []
        self.shared: dict[str, int] = {}
        self.blob: list[bytes] = []
        self.blob_size = 0

    def add_blob(self, data: bytes) -> int:
        """Add ``data`` to the binary part; its offset there."""
        offset = self.blob_size
        self.blob.append(data)
        self.blob_size += len(data)
        return offset


def _column(key: str, values: Sequence[Any], absent: list[int], tables: _Tables) -> list[Any]:
    ids = id_bytes(values)
    if ids is not None:  # span ids kept as their bytes (`HexIds`): in as they are
        return [key, "X", [tables.add_blob(ids[0]), ids[1]], absent]
    if values and values[0] is None and values.count(None) == len(values):
        return [key, "c", None, absent]  # (None equals only None: no look at the types)
    types = set(map(type, values))
    if len(types) == 1 and types <= _CONSTANT_TYPES and values.count(values[0]) == len(values):
        return [key, "c", values[0], absent]  # the same value in every call
    binary = tables.numbers.encode(key, values, types) if types <= _NUMBERS else None
    if binary is not None:  # times: a million written as text would take seconds
        kind, data, params = binary
        offset = tables.add_blob(data)
        return [key, kind, offset if params is None else [offset, *params], absent]
    if types <= _SCALARS:  # (a NaN or an infinity is written as text, as `dumps` does)
        return [key, "v", list(values), absent]
    if types <= _STRINGS:
        return [key, *_strings(values, types, tables), absent]
    if types == _JSON_TEXT:
        encoded: Sequence[str] = values
    else:
        encoded = _texts(values, types)
    constant = _constant_text(encoded)
    if constant is not _NOT_ONE:
        return [key, "c", constant, absent]  # (no metadata, no events: shared)
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


def _strings(values: Sequence[str | None], types: set[type], tables: _Tables) -> list[Any]:
    """A column of strings (None for null): kind and values."""
    if _mostly_distinct(values):  # ids: inline, no table of a million strings
        width = hex_width(values) if types == _STR else 0  # type: ignore[arg-type]
        if width:
            return ["X", [tables.add_blob(bytes.fromhex("".join(values))), width]]  # type: ignore[arg-type]
        return ["t", list(values)]
    distinct: dict[Any, None] = dict.fromkeys(values)
    return ["s", _indexes(distinct, values, tables.strings)]


def _constant_text(encoded: Sequence[str]) -> Any:
    """The value of the one short text every call has (it is written into the document), or
    `_NOT_ONE` (also for a text that is not JSON: a span's, shown as the page reads it)."""
    first = encoded[0] if encoded else None
    if first is None or len(first) > _SHORT or encoded.count(first) != len(encoded):
        return _NOT_ONE
    try:
        return jsontext.loads(first)
    except ValueError:
        return _NOT_ONE


_NOT_ONE: Final = object()
_JSON_TEXT: Final = frozenset((JsonText,))
_SHORT: Final = 256  # a text this short can go into the document (it is not nested deep)
_NUMBERS: Final = frozenset((int, float, type(None)))


_SAMPLE: Final = SAMPLE
_STR: Final = frozenset((str,))


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
    if _mostly_distinct(list(map(id, values[:_SAMPLE]))):  # each call its own object
        return _encoded(list(values), types)
    ids = list(map(id, values))
    objects = dict(zip(ids, values, strict=True))
    encoded = dict(zip(objects, _encoded(list(objects.values()), types), strict=True))
    return list(map(encoded.__getitem__, ids))


def _encoded(values: list[Any], types: set[type]) -> list[str]:
    """Each value's `_dumps_value`: dicts and lists all at once by the C encoder (no Python
    call per value), one at a time when one of them needs more (NaN, a tuple key, depth)."""
    if _chunks is not None and types <= _CONTAINERS:
        try:
            return list(map("".join, map(_chunks, values, itertools.repeat(0))))
        except (ValueError, TypeError, RecursionError):
            pass
    return list(map(_dumps_value, values))


_CONTAINERS: Final = frozenset((dict, list))


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
    if "packed" not in embedded:  # (a diff page packs its parts: each unpacked)
        return {key: _part(value) for key, value in embedded.items()}
    if embedded.get("format") not in _READABLE:
        raise ValueError(f"unknown packed payload format {embedded.get('format')!r}")
    data = gzip.decompress(base64.b64decode(embedded["packed"]))
    (size,) = struct.unpack_from("<I", data)
    body = json.loads(data[4 : 4 + size].decode("utf-8"))
    blob = data[4 + size : 4 + size + body["blob"]]
    _, *texts = data[4 + size + body["blob"] :].decode("utf-8").split(_SEPARATOR)
    if len(texts) != body["texts"]:
        raise ValueError(f"packed payload holds {len(texts)} texts, says {body['texts']}")
    count = body["count"]
    ints: dict[str, list[int]] = {}  # each integer column's k, for the columns based on it
    values = {
        key: _values(key, kind, value, count, body["strings"], texts, blob, ints)
        for key, kind, value, _ in body["columns"]
        if kind != "p"
    }
    for key, _, (prefix, other), _ in (c for c in body["columns"] if c[1] == "p"):
        values[key] = [prefix + v for v in values[other]]
    rows: list[dict[str, Any]] = [{} for _ in range(count)]
    for key, _, _, absent in body["columns"]:
        missing = set(absent)
        for i, (row, value) in enumerate(zip(rows, values[key], strict=True)):
            if i not in missing:
                row[key] = value
    return {**body["head"], "nodes": rows}


def _values(
    key: str,
    kind: str,
    values: Any,
    count: int,
    strings: Sequence[str],
    texts: Sequence[str],
    blob: bytes,
    ints: dict[str, list[int]],
) -> Sequence[Any]:
    """A packed column's values, one per call (an integer column's k kept in ``ints``)."""
    if kind == "c":
        return [values] * count
    if kind == "s":
        return [None if index < 0 else strings[index] for index in values]
    if kind in ("j", "J"):
        indexes = range(values, values + count) if kind == "J" else values
        return [jsontext.loads(texts[index]) for index in indexes]
    if kind == "X":
        offset, width = values
        data = blob[offset : offset + width * count].hex()
        return [data[i : i + 2 * width] for i in range(0, 2 * width * count, 2 * width)]
    if kind in ("F", "N", "K"):
        offset, scale, *base = (values, None) if kind == "F" else values
        numbers = array("d" if kind == "F" else "q", unplanes(blob[offset : offset + 8 * count]))
        if sys.byteorder != "little":
            numbers.byteswap()
        if scale is None:
            return [None if math.isnan(v) else v for v in numbers]
        ks = list(itertools.accumulate(numbers) if kind == "N" else numbers)
        if base:
            ks = list(map(operator.add, ks, ints[base[0]]))
        ints[key] = ks
        if scale == 1 and type(scale) is int:  # integers
            return ks
        return [k / scale for k in ks]
    return values  # type: ignore[no-any-return]


def _part(value: Any) -> Any:
    """A payload's value unpacked when it is packed (an empty head: the rows alone)."""
    if not isinstance(value, Mapping) or "packed" not in value:
        return value
    data = unpack(value)
    return data["nodes"] if set(data) == {"nodes"} else data


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
