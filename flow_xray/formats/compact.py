"""The compact trace file (``.fxr``): a trace's calls as compressed columns, written as a stream.

``TraceResult.save("t.fxr")`` (or ``save(path, format="compact")``) writes it,
`flow_xray.formats.registry.load_trace` (``TraceResult.load``, ``flow-xray view``)
tells it from JSON by its first bytes. It holds exactly what the JSON envelope
holds (every field of every node but the accounting ones, which a loaded trace
gets counted again, as a JSON file's), at a few dozen bytes per call instead of
hundreds, and it is written and read a chunk of calls at a time: neither side
ever holds the whole file's text.

Layout: the 8 bytes `MAGIC`, then frames. A frame is a 4-byte little-endian
length and that many bytes of one zlib stream (its checksum catches damage);
inside, a 4-byte length, a JSON header, and the binary blobs the header lists.

1. the file header: ``{"format": "flow-xray columns", "version": 1, "fields": [...],
   "dropped_spans": N, "writer": "flow-xray 0.4.0"}``;
2. one frame per chunk of up to `CHUNK_ROWS` calls in pre-order: ``{"rows": n,
   "columns": [[field, encoding, parameters, blob count], ...], "blobs": [sizes]}``
   with the calls' ``parent`` (the row of each one's parent, -1 for a root) as
   8-byte integers first, then each field's column (`flow_xray.formats.columnar`;
   ``id``, when it is ``n`` and the span id as flow-xray makes it, is written as
   ``copy`` of ``span_id`` with that prefix, and takes no bytes);
3. the end: ``{"end": true, "rows": N}``. A file without it was cut short.

Reading is `flow_xray.formats.compact_read`. No OpenTelemetry here.
"""

from __future__ import annotations

import json
import os
import struct
import zlib
from array import array
from collections.abc import Iterator, Sequence
from operator import attrgetter
from typing import Any, Final

from flow_xray.files import write_chunks_atomic
from flow_xray.formats.columnar import Encoded, encode_column, little_endian
from flow_xray.hexids import HexIds
from flow_xray.jsontext import gc_paused
from flow_xray.tree.columns import lazy_columns
from flow_xray.tree.lazy import LAZY_FIELDS
from flow_xray.tree.model import SPAN_FIELDS, TraceNode, TraceResult, child_nodes

MAGIC: Final = b"\x89FXR\r\n\x1a\n"  # not text; line-end translation and truncation show
FORMAT: Final = "flow-xray columns"
VERSION: Final = 1
SUFFIX: Final = ".fxr"
CHUNK_ROWS: Final = 1 << 16
LEVEL: Final = 1  # ids and times hardly compress: level 6 saves ~3% more, ~20% slower
_LENGTH: Final = struct.Struct("<I")
_EAGER: Final = tuple(name for name in SPAN_FIELDS if name not in LAZY_FIELDS)


def save_compact(result: TraceResult, path: str | os.PathLike[str]) -> None:
    """Write ``result`` to ``path`` as a compact file, a chunk at a time (`flow_xray.files`
    rules: a regular file is replaced only once complete)."""
    write_chunks_atomic(path, compact_chunks(result))


def compact_chunks(result: TraceResult, chunk_rows: int = CHUNK_ROWS) -> Iterator[bytes]:
    """The bytes of ``result``'s compact file, a frame at a time."""
    from flow_xray import __version__  # noqa: PLC0415  (the package imports this layer)

    yield MAGIC
    header = {
        "format": FORMAT,
        "version": VERSION,
        "fields": list(SPAN_FIELDS),
        "dropped_spans": result.dropped_spans,
        "writer": f"flow-xray {__version__}",
    }
    yield _frame(header, [])
    nodes, parents = preorder(result.roots)
    for start in range(0, len(nodes), chunk_rows):
        with gc_paused():  # many new objects, no cycles
            frame = _chunk(nodes[start : start + chunk_rows], parents[start : start + chunk_rows])
        yield frame
    yield _frame({"end": True, "rows": len(nodes)}, [])


def _chunk(nodes: Sequence[TraceNode], parents: array[int]) -> bytes:
    columns = node_columns(nodes)
    described: list[list[Any]] = []
    blobs = [little_endian(parents)]
    for name in SPAN_FIELDS:
        values = columns.pop(name) if name != "span_id" else columns["span_id"]
        encoded: Encoded = (
            ("copy", {"of": "span_id", "prefix": "n"}, [])
            if name == "id" and _node_ids(values, columns["span_id"])
            else encode_column(values)
        )
        encoding, params, parts = encoded
        described.append([name, encoding, params, len(parts)])
        blobs += parts
    return _frame({"rows": len(nodes), "columns": described}, blobs)


def _node_ids(ids: Sequence[Any], span_ids: Sequence[Any]) -> bool:
    """Whether each id is flow-xray's for its span: ``n`` and the span id (not stored twice)."""
    if type(ids) is HexIds and type(span_ids) is HexIds:  # (both kept as bytes: no texts)
        return ids == span_ids.with_prefix("n")
    return set(map(type, span_ids)) == {str} and ids == ["n" + s for s in span_ids]


def _frame(header: dict[str, Any], blobs: list[bytes]) -> bytes:
    head = json.dumps({**header, "blobs": [len(b) for b in blobs]}).encode("ascii")
    packer = zlib.compressobj(LEVEL)
    parts = [packer.compress(_LENGTH.pack(len(head))), packer.compress(head)]
    parts += [packer.compress(blob) for blob in blobs]
    parts.append(packer.flush())
    body = b"".join(parts)
    return _LENGTH.pack(len(body)) + body


def preorder(roots: Sequence[TraceNode]) -> tuple[list[TraceNode], array[int]]:
    """Every node under ``roots`` in pre-order, and each one's parent's row (-1: a root)."""
    nodes: list[TraceNode] = []
    parents = array("q")
    add_node, add_parent = nodes.append, parents.append
    stack: list[tuple[TraceNode, int]] = [(root, -1) for root in reversed(roots)]
    pop, push = stack.pop, stack.extend
    while stack:
        node, parent = pop()
        row = len(nodes)
        add_node(node)
        add_parent(parent)
        children = child_nodes(node)
        if children:
            push([(child, row) for child in reversed(children)])
    return nodes, parents


def node_columns(nodes: Sequence[TraceNode]) -> dict[str, Sequence[Any]]:
    """The `SPAN_FIELDS` of ``nodes`` as columns; unfilled lazy nodes stay so
    (`flow_xray.tree.columns.lazy_columns`)."""
    columns: dict[str, Sequence[Any]] = {
        name: list(map(attrgetter(name), nodes)) for name in _EAGER
    }
    columns.update(zip(LAZY_FIELDS, lazy_columns(nodes), strict=True))
    return columns
