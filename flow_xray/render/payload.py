"""The trace viewer's embedded data: columns over a string table, gzip, base64.

A trace page of a million calls must stay small and open fast, so its rows
(`flatten_trace`) are not embedded as one JSON object per call. Instead the
page holds ``{"format": 1, "packed": "<base64>"}``, where the base64 text is
the gzip of one JSON document::

    {"head": {...every payload key but "nodes"...},
     "count": n,
     "strings": [...],                 # each distinct string value once
     "texts": [...],                   # each distinct detail value once, as JSON text
     "columns": [[key, kind, values, absent], ...]}

Per column (one per row key), ``kind`` says how ``values`` (one per row) read:
``"v"`` the values themselves (numbers, booleans, nulls), ``"s"`` indexes into
``strings`` (-1 for null), ``"j"`` indexes into ``texts``, each parsed when
that row's field is first read (the details: inputs, output, traceback,
attributes, events, and any other non-scalar value). ``absent`` lists the rows
without the key. The browser inflates it with its built-in
``DecompressionStream`` (``static/payload.js``); `unpack` reads it back here.
Base64 text needs no escaping inside a ``<script>`` element.
"""

from __future__ import annotations

import base64
import gzip
import json
import math
from collections.abc import Mapping, Sequence
from typing import Any, Final

from flow_xray import jsontext

FORMAT: Final = 1
_LEVEL: Final = 1  # gzip level: 6 is ~4x slower for ~7% less
_SCALARS: Final = frozenset((int, float, bool, type(None)))
_STRINGS: Final = frozenset((str, type(None)))
_ABSENT: Final = object()


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


def pack(payload: Mapping[str, Any]) -> dict[str, Any]:
    """The packed form of a trace payload whose ``nodes`` are flat rows (dicts)."""
    rows: Sequence[Mapping[str, Any]] = payload.get("nodes") or []
    head = {k: v for k, v in payload.items() if k != "nodes"}
    keys: dict[str, None] = {}
    last: Any = None
    for row in rows:
        row_keys = row.keys()
        if row_keys != last:
            keys.update(dict.fromkeys(row_keys))
            last = row_keys
    strings: dict[str, int] = {}
    texts: dict[str, int] = {}
    columns = [_column(key, rows, strings, texts) for key in keys]
    body = {
        "head": head,
        "count": len(rows),
        "strings": list(strings),
        "texts": list(texts),
        "columns": columns,
    }
    # A lone surrogate can only sit inside a JSON string, where "\\udc80" is its escape.
    text = dumps(body).encode("utf-8", "backslashreplace")
    raw = gzip.compress(text, compresslevel=_LEVEL, mtime=0)
    return {"format": FORMAT, "packed": base64.b64encode(raw).decode("ascii")}


def _column(
    key: str, rows: Sequence[Mapping[str, Any]], strings: dict[str, int], texts: dict[str, int]
) -> list[Any]:
    values = [row.get(key, _ABSENT) for row in rows]
    absent = [i for i, v in enumerate(values) if v is _ABSENT] if _ABSENT in values else []
    if absent:
        values = [None if v is _ABSENT else v for v in values]
    types = set(map(type, values))
    if types <= _SCALARS and all(math.isfinite(v) for v in values if type(v) is float):
        return [key, "v", values, absent]
    if types <= _STRINGS:
        add = strings.setdefault
        return [key, "s", [-1 if v is None else add(v, len(strings)) for v in values], absent]
    add = texts.setdefault
    return [key, "j", [add(_dumps_value(v), len(texts)) for v in values], absent]


def unpack(embedded: Mapping[str, Any]) -> dict[str, Any]:
    """The payload again (``nodes`` as rows of dicts) from `pack`'s form; others as they are.

    Raises:
        ValueError: the packed data is not this format.
    """
    if "packed" not in embedded:
        return dict(embedded)
    if embedded.get("format") != FORMAT:
        raise ValueError(f"unknown packed payload format {embedded.get('format')!r}")
    body = json.loads(gzip.decompress(base64.b64decode(embedded["packed"])))
    strings, texts = body["strings"], body["texts"]
    rows: list[dict[str, Any]] = [{} for _ in range(body["count"])]
    for key, kind, values, absent in body["columns"]:
        missing = set(absent)
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
