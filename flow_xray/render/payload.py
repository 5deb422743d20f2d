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
themselves (numbers, booleans, nulls), ``"t"`` strings, each call its own (ids),
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
from collections.abc import Mapping, Sequence
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
    text = _SEPARATOR.join((dumps(body), *tables.texts))
    # A lone surrogate can only sit inside a JSON string, where "\\udc80" is its escape.
    raw = gzip.compress(text.encode("utf-8", "backslashreplace"), compresslevel=_LEVEL, mtime=0)
    return {"format": FORMAT, "packed": base64.b64encode(raw).decode("ascii")}


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
    if types <= _SCALARS and all(math.isfinite(v) for v in values if type(v) is float):
        return [key, "v", list(values), absent]
    if types <= _STRINGS:
        distinct: dict[Any, None] = dict.fromkeys(values)
        if len(distinct) == len(values) and None not in distinct:
            return [key, "t", list(values), absent]  # every call its own (ids): inline
        return [key, "s", _indexes(distinct, values, tables.strings), absent]
    # Calls often share one object for a detail (an empty dict, a function's source
    # location): each object is encoded once.
    done: dict[int, str] = {}

    def text(value: Any) -> str:
        found = done.get(id(value))
        if found is None:
            found = done[id(value)] = _dumps_value(value)
        return found

    encoded = [v if type(v) is JsonText else text(v) for v in values]
    distinct = dict.fromkeys(encoded)
    if len(distinct) == len(encoded):  # every call its own text (inputs): in row order
        base = len(tables.texts)
        tables.texts.extend(encoded)
        return [key, "J", base, absent]
    shared, texts = tables.shared, tables.texts
    for value in distinct:
        if value not in shared:
            shared[value] = len(texts)
            texts.append(value)
    return [key, "j", list(map(shared.__getitem__, encoded)), absent]


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
        if kind == "c":
            kind, values = "v", [values] * count
        elif kind == "t":
            kind = "v"
        elif kind == "J":
            kind, values = "j", range(values, values + count)
        for i, (row, value) in enumerate(zip(rows, values, strict=True)):
            if i in missing:
                continue
            if kind == "s":
                row[key] = None if value < 0 else strings[value]
            elif kind == "j":
                row[key] = jsontext.loads(texts[value])
            else:
                row[key] = value
    return {**body["head"], "nodes": rows}


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
