"""Reading a column of the compact trace file (`flow_xray.formats.columnar` writes them).

A field's column over every chunk is a `Pieces`: one `Column` per run of chunks
written in one encoding. It gives one row's value at a time (`Column.value`, a
new object each time, for a node filled from the file) or many rows' (`Column.many`,
read-only values a page writes, JSON objects and arrays handed over as their
`JsonText` with ``raw``), and says what types of value it holds without decoding
them (`Column.kinds`), for the reader's checks. No OpenTelemetry here.
"""

from __future__ import annotations

import bisect
import itertools
import json
import json.scanner
import math
import operator
import re
from array import array
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Final

from flow_xray.errors import TraceFileError
from flow_xray.formats.columnar import CODES, SEPARATOR, TEXTS, from_little_endian
from flow_xray.hexids import HexIds
from flow_xray.jsontext import JsonText
from flow_xray.tree.decode import decode


class Column:
    """A column read back: `value` gives a row's value as a node holds it (a new object each
    time), `many` the rows' values read-only (JSON objects and arrays as `JsonText`)."""

    def value(self, row: int) -> Any:
        raise NotImplementedError

    def many(self, rows: Iterable[int], raw: bool = False) -> Sequence[Any]:
        """The rows' values, read-only (rows alike may share one object); with ``raw``,
        JSON objects and arrays as their `JsonText`."""
        return list(map(self.value, rows))

    def extend(self, encoding: str, params: dict[str, Any], blobs: list[bytes], rows: int) -> None:
        raise NotImplementedError

    def kinds(self) -> set[str]:
        """The type names of the values (`value_kinds`)."""
        raise NotImplementedError

    def number_bounds(self) -> tuple[float, float]:
        """The smallest and largest number among the values (NaN if any is NaN)."""
        return 0.0, 0.0

    def longest(self) -> int:
        """An upper bound of the length of the values that are strings."""
        return 0


def value_kinds(column: Column) -> set[str]:
    """The type names of a column's values (``"str"``, ``"NoneType"``, ``"dict"``, ...),
    told from the encoding and each JSON text's first character, without decoding."""
    return column.kinds()


class _Floats(Column):
    def __init__(self) -> None:
        self.numbers = array("d")
        self.nulls: set[int] = set()

    def extend(self, encoding: str, params: dict[str, Any], blobs: list[bytes], rows: int) -> None:
        numbers = from_little_endian("d", blobs[0])
        _count(numbers, rows)
        self.nulls.update(_rows(params.get("nulls"), len(self.numbers), rows))
        self.numbers.extend(numbers)

    def value(self, row: int) -> Any:
        return None if row in self.nulls else self.numbers[row]

    def kinds(self) -> set[str]:
        return {"float", "NoneType"} if self.nulls else {"float"}

    def number_bounds(self) -> tuple[float, float]:
        numbers = self.numbers
        if self.nulls:
            numbers = array("d", (v for i, v in enumerate(numbers) if i not in self.nulls))
        return _bounds(numbers)

    def many(self, rows: Iterable[int], raw: bool = False) -> Sequence[Any]:
        if self.nulls:
            return list(map(self.value, rows))
        return list(map(self.numbers.__getitem__, rows))


class _Hex(Column):
    def __init__(self) -> None:
        # Runs of chunks with one prefix and width: [first row, prefix, digits, raw bytes].
        self.parts: list[list[Any]] = []
        self.texts: list[str | None] = []  # each part's digits, made on first read
        self.starts: list[int] = []
        self.nulls: set[int] = set()
        self.rows = 0

    def extend(self, encoding: str, params: dict[str, Any], blobs: list[bytes], rows: int) -> None:
        prefix, digits = params.get("prefix"), params.get("digits")
        if not isinstance(prefix, str) or type(digits) is not int or digits <= 0:
            raise TraceFileError("a column of ids has no prefix or width")
        if len(blobs[0]) * 2 != digits * rows:
            raise TraceFileError("a column of ids holds the wrong number of ids")
        self.nulls.update(_rows(params.get("nulls"), self.rows, rows))
        last = self.parts[-1] if self.parts else None
        if last is not None and last[1] == prefix and last[2] == digits:
            last[3].append(blobs[0])
            self.texts[-1] = None
        else:
            self.parts.append([self.rows, prefix, digits, [blobs[0]]])
            self.texts.append(None)
            self.starts.append(self.rows)
        self.rows += rows

    def kinds(self) -> set[str]:
        return {"str", "NoneType"} if self.nulls else {"str"}

    def longest(self) -> int:
        return max(len(part[1]) + int(part[2]) for part in self.parts)

    def _text(self, part: int) -> str:
        text = self.texts[part]
        if text is None:
            text = self.texts[part] = b"".join(self.parts[part][3]).hex()
        return text

    def value(self, row: int) -> Any:
        if row in self.nulls:
            return None
        part = bisect.bisect_right(self.starts, row) - 1
        start, prefix, digits, _ = self.parts[part]
        at = (row - start) * digits
        return prefix + self._text(part)[at : at + digits]

    def many(self, rows: Iterable[int], raw: bool = False) -> Sequence[Any]:
        if len(self.parts) != 1:
            return list(map(self.value, rows))
        _, prefix, digits, blobs = self.parts[0]
        rows = rows if isinstance(rows, Sequence) else list(rows)
        if not self.nulls and not prefix and not digits % 2:
            if len(blobs) > 1:
                blobs[:] = [b"".join(blobs)]
            ids = _picked_ids(blobs[0], digits // 2, rows, self.rows)
            if ids is not None:
                return ids
        text = self._text(0)
        out: list[Any] = [prefix + text[r * digits : (r + 1) * digits] for r in rows]
        if self.nulls:
            nulls = self.nulls
            out = [None if r in nulls else v for r, v in zip(rows, out, strict=True)]
        return out


class _Table(Column):
    """Values through a table: a file's plain values, or (``texts``) JSON texts decoded."""

    def __init__(self, texts: bool) -> None:
        self.texts = texts
        self.table: list[Any] = []
        self.codes = array("B")
        self.shared: dict[bool, list[Any]] = {}

    def extend(self, encoding: str, params: dict[str, Any], blobs: list[bytes], rows: int) -> None:
        if self.texts:
            table: Any = blobs[0].decode(*TEXTS).split(SEPARATOR)
        else:
            table = _json_list(blobs[0])
            if any(isinstance(value, (list, dict)) for value in table):
                raise TraceFileError("a column's table holds containers (values are JSON texts)")
        size = len(table)
        typecode = next((code for code, limit in CODES if size <= limit), "I")
        codes = from_little_endian(typecode, blobs[1])
        _count(codes, rows)
        if codes and max(codes) >= size:
            raise TraceFileError("a column refers past the end of its table")
        base = len(self.table)
        self.table += table
        # Codes as narrow as the table allows (4 bytes a call each were 44 MB of a 1M-call file).
        wide = next((code for code, limit in CODES if base + size <= limit), "I")
        if self.codes.typecode != wide:
            self.codes = array(wide, self.codes)
        self.codes.extend(
            array(wide, codes) if not base else array(wide, [base + c for c in codes])
        )
        self.shared = {}

    def value(self, row: int) -> Any:
        item = self.table[self.codes[row]]
        return _read_json(item) if self.texts else item

    def kinds(self) -> set[str]:
        if self.texts:
            return set(map(_text_kind, self.table))
        return {type(v).__name__ for v in self.table}

    def number_bounds(self) -> tuple[float, float]:
        values = self.table
        if self.texts:
            values = [_read_json(t) for t in values if _text_kind(t) in ("int", "float")]
        numbers = [v for v in values if type(v) in (int, float)]
        return _bounds(numbers)

    def longest(self) -> int:
        return max((len(v) for v in self.table if isinstance(v, str)), default=0)

    def many(self, rows: Iterable[int], raw: bool = False) -> Sequence[Any]:
        table = self.table
        if self.texts:
            shared = self.shared.get(raw)
            if shared is None:
                shared = self.shared[raw] = list(map(_raw if raw else _read_json, table))
            table = shared
        codes = self.codes
        return [table[codes[row]] for row in rows]


class _Texts(Column):
    """JSON texts, each chunk's kept as the one string it was written as (its texts joined
    by `SEPARATOR`) with where each text ends: a string object per text costs 50 bytes
    and more besides its characters (126 MB of the 2M inputs and outputs of 1M calls)."""

    def __init__(self) -> None:
        self.parts: list[tuple[str, array[int]]] = []  # (joined texts, each text's end)
        self.starts: list[int] = []  # each part's first row
        self.rows = 0

    def extend(self, encoding: str, params: dict[str, Any], blobs: list[bytes], rows: int) -> None:
        joined = blobs[0].decode(*TEXTS) if rows else ""
        texts = joined.split(SEPARATOR) if rows else []
        _count(texts, rows)
        # Text i ends after the lengths of texts 0..i and the i separators between them.
        lengths = itertools.accumulate(map(len, texts))
        ends = array("I" if len(joined) < 1 << 32 else "Q", map(operator.add, lengths, range(rows)))
        self.parts.append((joined, ends))
        self.starts.append(self.rows)
        self.rows += rows

    def _text(self, row: int) -> str:
        part = bisect.bisect_right(self.starts, row) - 1
        joined, ends = self.parts[part]
        at = row - self.starts[part]
        return joined[ends[at - 1] + 1 if at else 0 : ends[at]]

    def _texts(self, rows: Iterable[int] | None = None) -> Iterable[str]:
        """The texts of ``rows`` (None: every row), made as they are read."""
        if rows is not None:
            rows = rows if isinstance(rows, (list, range)) else list(rows)
            if not _every_row(rows, self.rows):
                return map(self._text, rows)
        return itertools.chain.from_iterable(  # every row: each part split in C
            joined.split(SEPARATOR) for joined, ends in self.parts if ends
        )

    def value(self, row: int) -> Any:
        return _read_json(self._text(row))

    def kinds(self) -> set[str]:
        first = {text[:1] for text in self._texts()}
        if first & _NUMBER_STARTS:
            return set(map(_text_kind, self._texts()))
        return {_KIND_OF_FIRST.get(c, "invalid") for c in first}

    def number_bounds(self) -> tuple[float, float]:
        texts = [t for t in self._texts() if _text_kind(t) in ("int", "float")]
        return _bounds([_read_json(t) for t in texts])

    def longest(self) -> int:
        return max(map(len, self._texts()), default=0)

    def many(self, rows: Iterable[int], raw: bool = False) -> Sequence[Any]:
        if not raw:
            return list(map(_read_json, self._texts(rows)))
        json_text, opening = JsonText, _OPENING  # objects and arrays stay text: inline
        return [
            json_text(text) if text[:1] in opening else _read_json(text)
            for text in self._texts(rows)
        ]


def _picked_ids(data: bytes, width: int, rows: Sequence[int], count: int) -> HexIds | None:
    """The ids of ``rows`` of a column of ``count`` ids of ``width`` bytes, kept as bytes;
    None for ids other than 8 bytes wide picked a row at a time (read as texts)."""
    if _every_row(rows, count):
        return HexIds(data, width)
    if width != 8:
        return None
    words = memoryview(data).cast("Q")  # (each id's 8 bytes as they are: no byte order)
    return HexIds(array("Q", map(words.__getitem__, rows)).tobytes(), width)


def _every_row(rows: Sequence[int], count: int) -> bool:
    """Whether ``rows`` are ``0, 1, ... count - 1`` in order: a whole column read."""
    if len(rows) != count:
        return False
    if isinstance(rows, range):
        return rows == range(count)
    try:
        return array("q", rows) == array("q", range(count))
    except (TypeError, OverflowError):
        return False


def _count(values: Sequence[Any], rows: int) -> None:
    if len(values) != rows:
        raise TraceFileError(f"a column holds {len(values)} values for {rows} calls")


def _rows(listed: Any, base: int, rows: int) -> list[int]:
    """The rows a column lists (its None rows), checked and counted from ``base``."""
    if listed is None:
        return []
    if not isinstance(listed, list) or not all(type(r) is int and 0 <= r < rows for r in listed):
        raise TraceFileError("a column lists rows it does not have")
    return [base + r for r in listed] if base else listed


def _json_list(data: bytes) -> list[Any]:
    try:
        table = json.loads(data.decode("ascii"))
    except (UnicodeDecodeError, ValueError):
        raise TraceFileError("a column's table is not a JSON list") from None
    if not isinstance(table, list):
        raise TraceFileError("a column's table is not a JSON list")
    return table


def _read_json(text: str) -> Any:
    """A value from its JSON text, a new object each time."""
    try:  # the C scanner, called directly: most texts are short (`tree.decode.decode`)
        value, end = _SCAN(text, 0)
    except (StopIteration, ValueError, RecursionError):
        end = -1
    if end == len(text):
        return value
    value = decode(text, _JSON)  # deep or damaged
    if value is text:  # `decode` gives back text it cannot read
        raise TraceFileError(f"a value in the file is not JSON: {text[:40]!r}")
    return value


def _raw(text: str) -> Any:
    """A value for a page: a JSON object or array as its text (`JsonText`), a scalar decoded."""
    if text[:1] in _OPENING:
        return JsonText(text)
    return _read_json(text)


_OPENING: Final = ("{", "[")
_SCAN: Any = json.scanner.make_scanner(json.JSONDecoder())  # type: ignore[arg-type]


_JSON: Final = "application/json"


_ENCODINGS: Final[dict[str, Callable[[dict[str, Any]], Column]]] = {
    "float": lambda params: _Floats(),
    "hex": lambda params: _Hex(),
    "table": lambda params: _Table(texts=False),
    "json": lambda params: _Table(texts=True) if params.get("table") else _Texts(),
}
_BLOBS: Final = {"float": 1, "hex": 1, "table": 2}


def new_column(encoding: str, params: dict[str, Any]) -> Column:
    """An empty column for values written in ``encoding``.

    Raises:
        TraceFileError: an encoding this version does not know.
    """
    make = _ENCODINGS.get(encoding)
    if make is None:
        raise TraceFileError(
            f"a column is in an encoding this flow-xray does not know: {encoding!r}"
        )
    return make(params)


class Pieces(Column):
    """A field's column over every chunk: one `Column` per run of chunks written alike."""

    def __init__(self) -> None:
        self.pieces: list[tuple[int, str, Column]] = []  # (first row, encoding key, column)
        self.starts: list[int] = []
        self.rows = 0

    def extend(self, encoding: str, params: dict[str, Any], blobs: list[bytes], rows: int) -> None:
        """Add a chunk's values. A ``copy`` column's ``params`` hold the `Pieces` it copies
        (``source``), as the reader resolved its name."""
        key = f"{encoding}:{bool(params.get('table'))}"
        if not self.pieces or self.pieces[-1][1] != key:
            if encoding == "copy":
                column: Column = _Copy(params.get("source"), params.get("prefix"), self.rows)
            else:
                column = new_column(encoding, params)
            self.pieces.append((self.rows, key, column))
            self.starts.append(self.rows)
        self.pieces[-1][2].extend(encoding, params, blobs, rows)
        self.rows += rows

    def value(self, row: int) -> Any:
        start, _, column = self.pieces[bisect.bisect_right(self.starts, row) - 1]
        return column.value(row - start)

    def reader(self) -> Callable[[int], Any]:
        """`value`, the one column's own when all chunks were written alike (most fields:
        a node filled from the file reads twenty)."""
        return self.pieces[0][2].value if len(self.pieces) == 1 else self.value

    def many(self, rows: Iterable[int], raw: bool = False) -> Sequence[Any]:
        if len(self.pieces) == 1:
            return self.pieces[0][2].many(rows, raw)
        out: list[Any] = []
        for row in rows:
            start, _, column = self.pieces[bisect.bisect_right(self.starts, row) - 1]
            out += column.many((row - start,), raw)
        return out

    def kinds(self) -> set[str]:
        return set().union(*(column.kinds() for column in self.columns()))

    def longest(self) -> int:
        return max((column.longest() for column in self.columns()), default=0)

    def columns(self) -> list[Column]:
        """The pieces (for checks of every value)."""
        return [column for _, _, column in self.pieces]


class _Copy(Column):
    """Another field's values with a prefix: node ids, ``n`` and the span id."""

    def __init__(self, source: Any, prefix: Any, start: int) -> None:
        if not isinstance(source, Pieces) or not isinstance(prefix, str):
            raise TraceFileError("a column copies no column")
        self.source, self.prefix, self.start = source, prefix, start
        self.rows = 0

    def extend(self, encoding: str, params: dict[str, Any], blobs: list[bytes], rows: int) -> None:
        self.rows += rows

    def value(self, row: int) -> Any:
        return self.prefix + self.source.value(self.start + row)

    def many(self, rows: Iterable[int], raw: bool = False) -> Sequence[Any]:
        prefix, start = self.prefix, self.start
        found = self.source.many([start + r for r in rows] if start else rows)
        if type(found) is HexIds:
            return found.with_prefix(prefix)
        return [prefix + v for v in found]

    def kinds(self) -> set[str]:
        return self.source.kinds()  # str, or the copy is refused with its source

    def longest(self) -> int:
        return len(self.prefix) + self.source.longest()


def blob_count(encoding: str, params: dict[str, Any]) -> int:
    """How many blobs a column in ``encoding`` has."""
    if encoding == "json":
        return 2 if params.get("table") else 1
    return _BLOBS.get(encoding, 0)


_KIND_OF_FIRST: Final = {
    "{": "dict",
    "[": "list",
    '"': "str",
    "n": "NoneType",
    "t": "bool",
    "f": "bool",
    "N": "float",  # NaN
    "I": "float",  # Infinity
}
_NUMBER_STARTS: Final = frozenset("-0123456789")
_INT: Final = re.compile(r"-?(?:0|[1-9][0-9]*)")


def _text_kind(text: str) -> str:
    """The type name of the value a JSON text holds, from its first character (a number:
    ``int`` when it is digits only, ``float`` otherwise)."""
    first = text[:1]
    if first in _NUMBER_STARTS:
        return "int" if _INT.fullmatch(text) else "float"
    return _KIND_OF_FIRST.get(first, "invalid")


def _bounds(numbers: Sequence[Any]) -> tuple[float, float]:
    """The smallest and largest of ``numbers``; NaN when one is NaN (their sum is)."""
    if not numbers:
        return 0.0, 0.0
    total = sum(numbers)  # NaN with a NaN among them (or inf and -inf: out of range anyway)
    if total != total:
        return math.nan, math.nan
    return min(numbers), max(numbers)
