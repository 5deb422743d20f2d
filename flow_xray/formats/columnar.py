"""One column of the compact trace file: how a field's values become bytes and come back.

A column (one field of the calls of a chunk, in pre-order) is written in the
first of these forms that holds its values exactly (`encode_column`):

- ``float``: floats (or None) as 8-byte IEEE numbers, the rows that are None listed;
- ``table``: few distinct strings, ints, bools (or None: names, kinds, statuses,
  the trace id), as a table of them and each row's index into it;
- ``hex``: strings that are a fixed prefix and a fixed number of lowercase hex
  digits (span and node ids), or None, as the raw bytes those digits spell;
- ``json``: anything else, each value as its JSON text (a `JsonText` as it is,
  with ``default=repr`` for what JSON cannot hold, as the JSON file does),
  through a table when the texts repeat.

Numbers in the bytes are little-endian. Reading a column back is
`flow_xray.formats.columnar_read`. No OpenTelemetry here.

Example::

    encode_column(["ok", "ok", "error"])  # ("table", {}, [b'["ok", "error"]', b"\x00\x00\x01"])
"""

from __future__ import annotations

import json
import math
import sys
from array import array
from collections.abc import Sequence
from typing import Any, Final

from flow_xray import jsontext
from flow_xray.errors import TraceFileError
from flow_xray.hexids import id_bytes
from flow_xray.jsontext import JsonText

_STRING: Final = json.encoder.encode_basestring  # what json.dumps(ensure_ascii=False) uses

# (encoding name, its parameters, its blobs)
Encoded = tuple[str, dict[str, Any], list[bytes]]

_BIG_ENDIAN: Final = sys.byteorder == "big"
TEXTS: Final = "utf-8", "surrogatepass"  # lone surrogates are kept, not lost
SEPARATOR: Final = "\0"  # never in JSON text: a NUL inside a string is written \u0000
CODES: Final = (("B", 1 << 8), ("H", 1 << 16), ("I", 1 << 32))
_NONE = type(None)
# A table is worth it when the values repeat: at most this share of the rows are distinct.
_TABLE_SHARE: Final = 4


def little_endian(values: array[Any]) -> bytes:
    if _BIG_ENDIAN:
        values = array(values.typecode, values)
        values.byteswap()
    return values.tobytes()


def from_little_endian(typecode: str, data: bytes) -> array[Any]:
    values = array(typecode)
    if len(data) % values.itemsize:
        raise TraceFileError(f"a column of {values.itemsize}-byte numbers has {len(data)} bytes")
    values.frombytes(data)
    if _BIG_ENDIAN:
        values.byteswap()
    return values


def _nulls(values: Sequence[Any]) -> list[int]:
    return [i for i, value in enumerate(values) if value is None]


def encode_column(values: Sequence[Any]) -> Encoded:
    """The values of one column of a chunk, in the first form that holds them exactly."""
    found = id_bytes(values)
    if found is not None and _distinct_ids(*found) > max(256, len(values) // _TABLE_SHARE):
        data, width = found  # ids kept as bytes (`HexIds`), too many for a table: as they are
        return "hex", {"prefix": "", "digits": 2 * width, "nulls": []}, [data]
    types = set(map(type, values))
    if types <= {float, _NONE} and float in types:
        nulls = _nulls(values)
        numbers = array("d", [0.0 if v is None else v for v in values] if nulls else values)
        return "float", {"nulls": nulls}, [little_endian(numbers)]
    if types <= {str, _NONE} or types <= {int, _NONE} or types <= {bool, _NONE}:
        encoded = _table(values)  # few distinct values (one trace id): a table first
        if encoded is not None:
            return encoded
    if types <= {str, _NONE} and str in types:
        encoded = _hex(values, _NONE in types)
        if encoded is not None:
            return encoded
    return _json(values)


def _distinct_ids(data: bytes, width: int) -> int:
    """How many different ids of ``width`` bytes ``data`` holds (as `_table` counts them)."""
    if width % 8:
        return len({data[at : at + width] for at in range(0, len(data), width)})
    words = memoryview(data).cast("Q")
    step = width // 8
    return len(set(zip(*(words[part::step] for part in range(step)), strict=True)))


def _hex(values: Sequence[str | None], with_nulls: bool) -> Encoded | None:
    """Ids: a common prefix then a fixed number of lowercase hex digits (None for none)."""
    nulls = _nulls(values) if with_nulls else []
    first = next(v for v in values if v is not None)
    digits = len(first.lstrip("n"))  # flow-xray's node ids are "n" and the span id
    prefix = first[: len(first) - digits]
    if digits < 2 or digits % 2:
        return None
    width = len(prefix) + digits
    if nulls:  # a None row holds zeros, and is listed
        zero = prefix + "0" * digits
        values = [zero if v is None else v for v in values]
    joined = "".join(values)  # type: ignore[arg-type]
    count = len(values)
    if len(joined) != width * count or (prefix and joined[::width] != prefix * count):
        return None
    if prefix:
        if joined.count(prefix) != count:
            return None
        joined = joined.replace(prefix, "")
    if not joined.isascii() or joined != joined.lower():
        return None
    try:
        raw = bytes.fromhex(joined)
    except ValueError:
        return None
    if len(raw) * 2 != len(joined):  # fromhex skips whitespace
        return None
    return "hex", {"prefix": prefix, "digits": digits, "nulls": nulls}, [raw]


def _table(values: Sequence[Any]) -> Encoded | None:
    distinct = dict.fromkeys(values)
    if len(distinct) > max(256, len(values) // _TABLE_SHARE):
        return None
    table = json.dumps(list(distinct))  # flat: strs, ints or bools; lone surrogates escaped
    return "table", {}, [table.encode("ascii"), _codes(values, distinct)]


def _codes(values: Sequence[Any], distinct: dict[Any, None]) -> bytes:
    """Each value's position in ``distinct``, as numbers as wide as its size needs."""
    position = {value: at for at, value in enumerate(distinct)}
    typecode = next(code for code, limit in CODES if len(distinct) <= limit)
    return little_endian(array(typecode, map(position.__getitem__, values)))


def _json(values: Sequence[Any]) -> Encoded:
    few = len(values) // _TABLE_SHARE
    if set(map(type, values)) == {JsonText}:
        texts: Sequence[str] = values
    else:
        objects = {id(value): value for value in values}
        if len(objects) <= few:  # rows share objects (a function's attributes): each once
            text_of = ValueTexts()
            of_object = {key: text_of.text(value) for key, value in objects.items()}
            texts = list(map(of_object.__getitem__, map(id, values)))
        else:
            texts = list(map(ValueTexts().text, values))
    distinct = dict.fromkeys(texts)
    if len(distinct) <= few:
        table = SEPARATOR.join(distinct).encode(*TEXTS)
        return "json", {"table": True}, [table, _codes(texts, distinct)]
    return "json", {"table": False}, [SEPARATOR.join(texts).encode(*TEXTS)]


class ValueTexts:
    """Each value's JSON text (``json.dumps(value, ensure_ascii=False, default=repr)``, as
    the JSON file writes it): a `JsonText` as it is, a container once per object (rows often
    share one: a function's attributes)."""

    __slots__ = ("seen",)

    def __init__(self) -> None:
        self.seen: dict[int, str] = {}

    def text(self, value: Any) -> str:
        kind = type(value)
        if kind is JsonText:
            return value  # type: ignore[no-any-return]
        if kind is str:
            return _STRING(value)
        if value is None:
            return "null"
        if kind is bool:
            return "true" if value else "false"
        if kind is int:
            return int.__repr__(value)
        if kind is float and math.isfinite(value):
            return float.__repr__(value)
        if kind is dict or kind is list:
            found = self.seen.get(id(value))
            if found is None:
                found = self.seen[id(value)] = jsontext.dumps(value, default=repr)
            return found
        return jsontext.dumps(value, default=repr)
