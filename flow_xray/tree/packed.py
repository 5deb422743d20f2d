"""A `SpanStore`'s attribute values packed a block of rows at a time. No OpenTelemetry.

The calls of one function write the same keys, and most of their values are the
same objects every time (the kind, the source location, the mime types). A
million-call capture kept one tuple of values per span (about 100 bytes) plus
a string object per varying text (49 bytes before its characters). A
block (`pack_block`) keeps `BLOCK` spans' rows by shape (their keys) and name: values
every row of a shape shares once, the others as columns, and a column of ASCII
text as one string with its offsets. A row reads back as the tuple it was.
"""

from __future__ import annotations

import itertools
import operator
from array import array
from collections.abc import Sequence
from typing import Any, Final, Literal

BLOCK_BITS: Final = 9
BLOCK: Final = 1 << BLOCK_BITS  # rows per block
BLOCK_MASK: Final = BLOCK - 1
# Rows per block from which unpacking the whole block beats reading rows one by one.
_FEW: Final = BLOCK // 4


# Blocks are plain tuples of tuples, strings and bytes (arrays of ints as their bytes),
# not objects: the garbage collector stops tracking such a tuple once it has looked at it,
# so the blocks of a million calls add nothing to its full passes (nor make them come
# more often). An array is an object it tracks for as long as it lives.
#
# A text column: ``(text, ends, kind)``, a column of plain ASCII strings joined, and
# where each ends (an array of this kind, as bytes). A group, the rows of one shape and
# name: ``(count, template, varying, columns, texts, whole)``, its number of rows, the
# first row's values (the shared ones are read from it), the positions whose values
# differ, a column per such position, whether each is a text column, and the rows as
# they are when they do not have one length (else None). A block: ``(group_of, slot_of,
# groups)``, each row's group and place in it (arrays of unsigned shorts, as bytes), and
# the groups.
TextColumn = tuple[str, bytes, Literal["I", "Q"]]
Group = tuple[
    int,
    tuple[Any, ...],
    tuple[int, ...],
    tuple[Any, ...],
    tuple[bool, ...],
    tuple[Any, ...] | None,
]
Block = tuple[bytes, bytes, tuple[Group, ...]]


def _text_column(values: tuple[Any, ...]) -> TextColumn | None:
    """The column as one text and ends, when its values are all plain ASCII `str`s."""
    if set(map(type, values)) != {str}:
        return None
    text = "".join(values)
    if not text.isascii():
        return None
    kind: Literal["I", "Q"] = "I" if len(text) < 1 << 32 else "Q"
    return text, array(kind, itertools.accumulate(map(len, values))).tobytes(), kind


def _text_at(column: TextColumn, slot: int) -> str:
    text, data, kind = column
    ends = memoryview(data).cast(kind)
    return text[ends[slot - 1] if slot else 0 : ends[slot]]


def _text_values(column: TextColumn) -> list[str]:
    text, data, kind = column
    ends = array(kind, data)
    return list(map(text.__getitem__, map(slice, itertools.chain((0,), ends), ends)))


def _same(values: tuple[Any, ...]) -> bool:
    """Whether every value is the first: the same object, or equal `str`s or `int`s (whose
    equality is exact: ``0.0 == -0.0`` and ``1 == True`` are not the same value)."""
    first = values[0]
    if all(map(operator.is_, values, itertools.repeat(first))):
        return True
    return (  # (the equality test first: it stops at the first value that differs)
        type(first) in _EXACT
        and all(map(operator.eq, values, itertools.repeat(first)))
        and set(map(type, values)) == {type(first)}
    )


_EXACT: Final = frozenset((str, int))


def _group(rows: list[tuple[Any, ...]]) -> Group:
    """The rows of one shape and name in a block, packed."""
    if len(set(map(len, rows))) != 1:  # not one shape after all: kept as they are
        return len(rows), rows[0], (), (), (), tuple(rows)
    varying, columns, texts = [], [], []
    # The columns as slices of one list of every row's values: zip(*rows) would hold an
    # iterator per row, hundreds of objects a collection may find alive (and count as
    # long-lived).
    width = len(rows[0])
    every = list(itertools.chain.from_iterable(rows))
    for at in range(width):
        values = tuple(every[at::width])
        if not _same(values):
            text = _text_column(values)
            varying.append(at)
            columns.append(values if text is None else text)
            texts.append(text is not None)
    return len(rows), rows[0], tuple(varying), tuple(columns), tuple(texts), None


def _group_row(group: Group, slot: int) -> tuple[Any, ...]:
    _, template, varying, columns, texts, whole = group
    if whole is not None:
        return whole[slot]  # type: ignore[no-any-return]
    if not varying:
        return template
    values = list(template)
    for at, column, text in zip(varying, columns, texts, strict=True):
        values[at] = _text_at(column, slot) if text else column[slot]
    return tuple(values)


def _group_rows(group: Group) -> list[tuple[Any, ...]]:
    """Every row of a group, in order."""
    count, template, varying, columns, texts, whole = group
    if whole is not None:
        return list(whole)
    if not varying:
        return [template] * count
    parts: list[Any] = [itertools.repeat(value, count) for value in template]
    for at, column, text in zip(varying, columns, texts, strict=True):
        parts[at] = _text_values(column) if text else column
    return list(zip(*parts, strict=True))


def pack_block(
    shapes: Sequence[Any], names: Sequence[str], values: Sequence[tuple[Any, ...]]
) -> Block:
    """The attribute values of consecutive rows (at most `BLOCK`), grouped by shape.

    ``shapes`` are the rows' interned shapes (one object per distinct key set
    and status), ``names`` their interned names, ``values`` their value tuples.
    Rows of one shape and name make a group: the calls of one function.
    """
    numbers: dict[tuple[int, int], int] = {}
    members: list[list[tuple[Any, ...]]] = []
    group_of = array("H")
    slot_of = array("H")
    for key, row in zip(zip(map(id, shapes), map(id, names), strict=True), values, strict=True):
        number = numbers.get(key)
        if number is None:
            number = numbers[key] = len(members)
            members.append([])
        rows = members[number]
        group_of.append(number)
        slot_of.append(len(rows))
        rows.append(row)
    return group_of.tobytes(), slot_of.tobytes(), tuple(map(_group, members))


def block_row(block: Block, at: int) -> tuple[Any, ...]:
    """The values of the block's row ``at``."""
    group_of, slot_of, groups = block
    return _group_row(groups[memoryview(group_of).cast("H")[at]], memoryview(slot_of).cast("H")[at])


def block_rows(block: Block) -> list[tuple[Any, ...]]:
    """The values of every row of the block, in order."""
    group_of, _, groups = block
    # Each group's rows are in row order: take the next of the row's group, row by row.
    every = [iter(_group_rows(group)) for group in groups]
    return list(map(next, map(every.__getitem__, array("H", group_of))))


class PackedValues:
    """Each row's attribute values: a block (`pack_block`) per `BLOCK` rows, the rows since the
    last full block as tuples (``recent``; `pack` them when there are `BLOCK`)."""

    __slots__ = ("blocks", "recent")

    def __init__(self) -> None:
        self.blocks: list[Block] = []
        self.recent: list[tuple[Any, ...]] = []

    def pack(self, shapes: Sequence[Any], names: Sequence[str]) -> None:
        """Pack ``recent``, given every row's shape and name."""
        start = len(self.blocks) << BLOCK_BITS
        end = start + len(self.recent)
        self.blocks.append(pack_block(shapes[start:end], names[start:end], self.recent))
        self.recent = []

    def __getitem__(self, row: int) -> tuple[Any, ...]:
        block = row >> BLOCK_BITS
        if block < len(self.blocks):
            return block_row(self.blocks[block], row & BLOCK_MASK)
        return self.recent[row - (len(self.blocks) << BLOCK_BITS)]

    def take(self, rows: Sequence[int]) -> list[tuple[Any, ...]]:
        """The values of ``rows``: one by one when they are few per block, else the blocks
        they are in unpacked whole."""
        blocks = set(map(BLOCK_BITS.__rrshift__, rows))
        if len(rows) < len(blocks) * _FEW:
            return list(map(self.__getitem__, rows))
        packed = len(self.blocks)
        unpacked = {b: block_rows(self.blocks[b]) if b < packed else self.recent for b in blocks}
        return [unpacked[row >> BLOCK_BITS][row & BLOCK_MASK] for row in rows]
