"""Reading the compact trace file (`flow_xray.formats.compact`) into lazily built nodes.

The file's frames are read one at a time into one `Pieces` column per field
(ids stay raw bytes, times typed arrays, values the JSON text they were
written as). The tree is then made of `LazyNode`s, as a capture makes it:
only ``name``, ``status`` and the links up front, the other fields read from
the columns when a node is first used, or many nodes' at once for a page
(`FileRows.columns`, inputs and output handed over as their JSON text). Every
value's type is checked when the file is read (without decoding values), so a
damaged or foreign file is one `TraceFileError`, never a traceback. No OpenTelemetry here.
"""

from __future__ import annotations

import json
import struct
import zlib
from collections.abc import Sequence
from typing import Any, Final

from flow_xray.analysis.accounting import count
from flow_xray.errors import TraceFileError
from flow_xray.formats.columnar import from_little_endian
from flow_xray.formats.columnar_read import Pieces, blob_count, value_kinds
from flow_xray.formats.compact import FORMAT, MAGIC, VERSION
from flow_xray.formats.flow_xray_json import FIELD_TYPES, check_usage
from flow_xray.formats.parsed import MAX_ID_CHARS, MAX_UNIX_NANOS
from flow_xray.jsontext import gc_paused
from flow_xray.tree.lazy import LAZY_FIELDS, lazy_nodes
from flow_xray.tree.model import SPAN_FIELDS, TraceNode, TraceResult, new_node

_LENGTH: Final = struct.Struct("<I")
_RAW: Final = frozenset(("inputs", "output"))  # handed to a page as their JSON text
_MAX_MS: Final = MAX_UNIX_NANOS / 1e6
_IDS: Final = frozenset(("id", "trace_id", "span_id", "parent_id"))


def is_compact(data: bytes) -> bool:
    """Whether ``data`` starts as a compact trace file does (any version)."""
    return bool(data) and (data[:4] == MAGIC[:4] or MAGIC.startswith(data))


def read_compact(data: bytes) -> TraceResult:
    """The trace in a compact file's bytes, its accounting done (as a JSON file's).

    Raises:
        TraceFileError: another version's file, a file cut short or damaged.
    """
    if len(data) < len(MAGIC) and MAGIC.startswith(data):
        raise TraceFileError("compact trace cut short (it ends before its last calls)")
    if data[: len(MAGIC)] != MAGIC:
        raise TraceFileError("not a compact flow-xray trace (its first bytes are damaged)")
    frames = _Frames(data)
    header, _ = frames.next()
    _check_header(header)
    columns = {name: Pieces() for name in SPAN_FIELDS}
    parents: list[int] = []
    while True:
        chunk, blobs = frames.next()
        if chunk.get("end") is True:
            break
        _add_chunk(chunk, blobs, columns, parents)
    if chunk.get("rows") != len(parents) or not frames.done():
        raise TraceFileError("damaged compact trace: its end does not match its calls")
    for name, column in columns.items():
        _check_column(name, column)
    dropped = header.get("dropped_spans", 0)
    with gc_paused():  # a million nodes, no cycles
        result = TraceResult(
            roots=_tree(FileRows(columns), parents),
            dropped_spans=dropped if type(dropped) is int and dropped > 0 else 0,
        )
        count(result)
    return result


class _Frames:
    """The frames of a file, each inflated (and its checksum checked) when it is reached."""

    __slots__ = ("at", "data")

    def __init__(self, data: bytes) -> None:
        self.data = memoryview(data)
        self.at = len(MAGIC)

    def done(self) -> bool:
        return self.at == len(self.data)

    def next(self) -> tuple[dict[str, Any], list[bytes]]:
        data, at = self.data, self.at
        if at + 4 > len(data):
            raise TraceFileError("compact trace cut short (it ends before its last calls)")
        (size,) = _LENGTH.unpack_from(data, at)
        if at + 4 + size > len(data):
            raise TraceFileError("compact trace cut short (it ends before its last calls)")
        self.at = at + 4 + size
        try:
            body = zlib.decompress(data[at + 4 : at + 4 + size])
        except zlib.error as exc:
            raise TraceFileError(f"damaged compact trace ({exc})") from None
        return _split(body)


def _split(body: bytes) -> tuple[dict[str, Any], list[bytes]]:
    """A frame's header and blobs."""
    try:
        (size,) = _LENGTH.unpack_from(body, 0)
        header = json.loads(body[4 : 4 + size].decode("ascii"))
    except (struct.error, UnicodeDecodeError, ValueError):
        raise TraceFileError("damaged compact trace (a frame's header is not JSON)") from None
    sizes = header.get("blobs") if isinstance(header, dict) else None
    if not isinstance(sizes, list) or not all(type(s) is int and s >= 0 for s in sizes):
        raise TraceFileError("damaged compact trace (a frame's header lists no blobs)")
    at, blobs = 4 + size, []
    for blob_size in sizes:
        blobs.append(body[at : at + blob_size])
        at += blob_size
    if at != len(body):
        raise TraceFileError("damaged compact trace (a frame's blobs do not add up)")
    return header, blobs


def _check_header(header: dict[str, Any]) -> None:
    if header.get("format") != FORMAT:
        raise TraceFileError("not a compact flow-xray trace (its header names no format)")
    version = header.get("version")
    if version != VERSION:
        writer = header.get("writer")
        by = f" (written by {writer})" if isinstance(writer, str) else ""
        raise TraceFileError(
            f"compact trace of format version {version!r}{by}: this flow-xray reads "
            f"version {VERSION}; open it with the flow-xray that wrote it"
        )
    fields = header.get("fields")
    missing = [n for n in SPAN_FIELDS if not isinstance(fields, list) or n not in fields]
    if missing:
        raise TraceFileError(f"compact trace without the fields {', '.join(missing)}")


def _add_chunk(
    chunk: dict[str, Any], blobs: list[bytes], columns: dict[str, Pieces], parents: list[int]
) -> None:
    rows, described = chunk.get("rows"), chunk.get("columns")
    if type(rows) is not int or rows <= 0 or not isinstance(described, list) or not blobs:
        raise TraceFileError("damaged compact trace (a chunk without rows or columns)")
    base = len(parents)
    chunk_parents = from_little_endian("q", blobs[0])
    if len(chunk_parents) != rows or not all(
        -1 <= parent < base + at for at, parent in enumerate(chunk_parents)
    ):
        raise TraceFileError("damaged compact trace (a call's parent is not a call before it)")
    parents += chunk_parents
    at, seen = 1, set()
    for entry in described:
        if not (isinstance(entry, list) and len(entry) == 4 and isinstance(entry[2], dict)):
            raise TraceFileError("damaged compact trace (a column is not described)")
        name, encoding, params, count = entry
        if not isinstance(name, str) or not isinstance(encoding, str):
            raise TraceFileError("damaged compact trace (a column is not described)")
        if count != blob_count(encoding, params) or at + count > len(blobs):
            raise TraceFileError(f"damaged compact trace (column {name!r} has no blobs)")
        parts, at = blobs[at : at + count], at + count
        if name in columns and name not in seen:
            seen.add(name)
            if encoding == "copy":
                params = {**params, "source": _copied(name, params, columns)}
            columns[name].extend(encoding, params, parts, rows)
    if len(seen) != len(columns):
        raise TraceFileError("damaged compact trace (a chunk lacks a column)")


def _copied(name: str, params: dict[str, Any], columns: dict[str, Pieces]) -> Pieces:
    """The column a ``copy`` column copies: node ids copy span ids, nothing else is copied."""
    if name != "id" or params.get("of") != "span_id":
        raise TraceFileError(f"damaged compact trace (column {name!r} copies another)")
    return columns["span_id"]


def _check_column(name: str, column: Pieces) -> None:
    """Each value of the right type (from its encoding and first character) and range."""
    allowed = (str,) if name == "name" else FIELD_TYPES.get(name)
    names = {t.__name__ for t in allowed} if allowed is not None else None  # None: any value
    for piece in column.columns():
        wrong = value_kinds(piece) - names if names is not None else set()
        if wrong:
            raise TraceFileError(f"damaged compact trace: {name!r} holds {sorted(wrong)[0]} values")
        if name in ("latency_ms", "start_ms"):
            low, high = piece.number_bounds()
            if not -_MAX_MS <= low <= high <= _MAX_MS:  # NaN fails too
                raise TraceFileError(f"compact trace: {name!r} holds a time no span can have")
        if name in _IDS and piece.longest() > MAX_ID_CHARS:
            raise TraceFileError(f"compact trace: {name!r} holds ids longer than {MAX_ID_CHARS}")


def _tree(rows: FileRows, parents: Sequence[int]) -> list[TraceNode]:
    count = len(parents)
    everything = range(count)
    names = rows.columns_of("name", everything)
    statuses = rows.columns_of("status", everything)
    meta = rows.columns_of("meta", everything, raw=True)
    with_meta = {at for at, text in enumerate(meta) if text != "{}"}
    del meta
    nodes = lazy_nodes(rows.block, everything, names, statuses, with_meta)
    roots: list[TraceNode] = []
    for node, parent in zip(nodes, parents, strict=True):
        if parent < 0:
            roots.append(node)
        else:
            nodes[parent].children.append(node)
    return roots


_META: Final = LAZY_FIELDS.index("meta")
_BUILT: Final = tuple(name for name in SPAN_FIELDS if name not in LAZY_FIELDS)  # name, status


class FileRows:
    """Reads `LazyNode` details from the file's columns (a `flow_xray.tree.lazy.RowReader`)."""

    __slots__ = ("fields", "readers")

    def __init__(self, fields: dict[str, Pieces]) -> None:
        self.fields = fields
        self.readers = tuple(fields[name].reader() for name in LAZY_FIELDS)

    def block(self, base: int) -> FileBlock:
        return FileBlock(self, base)

    def columns_of(self, name: str, rows: Sequence[int], raw: bool = False) -> Sequence[Any]:
        return self.fields[name].many(rows, raw)

    def columns(self, rows: Sequence[int]) -> list[Sequence[Any]]:
        return [self.fields[name].many(rows, name in _RAW) for name in LAZY_FIELDS]

    def node(self, row: int) -> TraceNode:
        values = dict(zip(LAZY_FIELDS, self.values(row), strict=True))
        for name in _BUILT:
            values[name] = self.fields[name].value(row)
        return new_node(**values)

    def values(self, row: int) -> list[Any]:
        """The row's `LAZY_FIELDS` (a `LazyNode` fills from these), each read through its
        column's own reader (`Pieces.reader`)."""
        values = [read(row) for read in self.readers]
        if values[_META]:
            check_usage(values[_META], f"{row}")
        return values


class FileBlock:
    """The `flow_xray.tree.lazy.NodeSource` of a block of nodes: positions from ``base``."""

    __slots__ = ("base", "reader")

    def __init__(self, reader: FileRows, base: int) -> None:
        self.reader = reader
        self.base = base

    def node(self, at: int) -> TraceNode:
        return self.reader.node(self.base + at)

    def values(self, at: int) -> list[Any]:
        return self.reader.values(self.base + at)
