"""A `SpanStore`'s attribute values packed a block of rows at a time. No OpenTelemetry.

The calls of one function write the same keys, and most of their values are the
same objects every time (the kind, the source location, the mime types). A
million-call capture kept one tuple of values per span (about 100 bytes) plus
a string object per varying text (49 bytes before its characters). A
`ValueBlock` keeps the rows of `BLOCK` spans by shape (their keys): values
every row of a shape shares once, the others as columns, and a column of ASCII
text as one string with its offsets. A row reads back as the tuple it was.
"""

from __future__ import annotations

import itertools
import operator
from array import array
from collections.abc import Sequence
from typing import Any, Final

BLOCK_BITS: Final = 10
BLOCK: Final = 1 << BLOCK_BITS  # rows per block
BLOCK_MASK: Final = BLOCK - 1
# Rows per block from which unpacking the whole block beats reading rows one by one.
_FEW: Final = BLOCK // 4


class _Text:
    """A column of ASCII strings kept as one string and where each one ends."""

    __slots__ = ("ends", "text")

    def __init__(self, text: str, values: Sequence[str]) -> None:
        self.text = text
        self.ends = array(
            "I" if len(text) < 1 << 32 else "Q", itertools.accumulate(map(len, values))
        )

    def __getitem__(self, slot: int) -> str:
        return self.text[self.ends[slot - 1] if slot else 0 : self.ends[slot]]

    def values(self) -> list[str]:
        ends = self.ends
        starts = itertools.chain((0,), ends)
        return list(map(self.text.__getitem__, map(slice, starts, ends)))


Column = tuple[Any, ...] | _Text


def _column(values: tuple[Any, ...]) -> Column:
    """A varying column: its strings joined when they are all plain ASCII `str`s."""
    if set(map(type, values)) == {str}:
        text = "".join(values)
        if text.isascii():
            return _Text(text, values)
    return values


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


class _Group:
    """The rows of one shape in a block: the first row's values (the shared ones are read
    from it) and a column per position whose values differ."""

    __slots__ = ("columns", "count", "template", "varying", "whole")

    def __init__(self, rows: list[tuple[Any, ...]]) -> None:
        self.count = len(rows)
        self.template = rows[0]
        self.varying: tuple[int, ...] = ()
        self.columns: list[Column] = []
        # Rows of differing lengths are not one shape after all: kept as they are.
        self.whole = tuple(rows) if len(set(map(len, rows))) != 1 else None
        if self.whole is not None:
            return
        varying = []
        for at, values in enumerate(zip(*rows, strict=True)):
            if not _same(values):
                varying.append(at)
                self.columns.append(_column(values))
        self.varying = tuple(varying)

    def row(self, slot: int) -> tuple[Any, ...]:
        if self.whole is not None:
            return self.whole[slot]
        if not self.varying:
            return self.template
        values = list(self.template)
        for at, column in zip(self.varying, self.columns, strict=True):
            values[at] = column[slot]
        return tuple(values)

    def rows(self) -> list[tuple[Any, ...]]:
        """Every row, in order."""
        count = self.count
        if self.whole is not None:
            return list(self.whole)
        if not self.varying:
            return [self.template] * count
        columns: list[Any] = [itertools.repeat(value, count) for value in self.template]
        for at, column in zip(self.varying, self.columns, strict=True):
            columns[at] = column.values() if type(column) is _Text else column
        return list(zip(*columns, strict=True))


class ValueBlock:
    """The attribute values of `BLOCK` consecutive rows, grouped by shape.

    ``shapes`` are the rows' interned shapes (one object per distinct key set
    and status), ``names`` their interned names, ``values`` their value tuples.
    Rows of one shape and name make a group: the calls of one function.
    """

    __slots__ = ("group_of", "groups", "slot_of")

    def __init__(
        self, shapes: Sequence[Any], names: Sequence[str], values: Sequence[tuple[Any, ...]]
    ) -> None:
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
        self.group_of = group_of
        self.slot_of = slot_of
        self.groups = [_Group(rows) for rows in members]

    def row(self, at: int) -> tuple[Any, ...]:
        """The values of the block's row ``at``."""
        return self.groups[self.group_of[at]].row(self.slot_of[at])

    def rows(self) -> list[tuple[Any, ...]]:
        """The values of every row, in order."""
        # Each group's rows are in row order: take the next of the row's group, row by row.
        groups = [iter(group.rows()) for group in self.groups]
        return list(map(next, map(groups.__getitem__, self.group_of)))


class PackedValues:
    """Each row's attribute values: a `ValueBlock` per `BLOCK` rows, the rows since the
    last full block as tuples (``recent``; `pack` them when there are `BLOCK`)."""

    __slots__ = ("blocks", "recent")

    def __init__(self) -> None:
        self.blocks: list[ValueBlock] = []
        self.recent: list[tuple[Any, ...]] = []

    def pack(self, shapes: Sequence[Any], names: Sequence[str]) -> None:
        """Pack ``recent``, given every row's shape and name."""
        start = len(self.blocks) << BLOCK_BITS
        end = start + len(self.recent)
        self.blocks.append(ValueBlock(shapes[start:end], names[start:end], self.recent))
        self.recent = []

    def __getitem__(self, row: int) -> tuple[Any, ...]:
        block = row >> BLOCK_BITS
        if block < len(self.blocks):
            return self.blocks[block].row(row & BLOCK_MASK)
        return self.recent[row - (len(self.blocks) << BLOCK_BITS)]

    def take(self, rows: Sequence[int]) -> list[tuple[Any, ...]]:
        """The values of ``rows``: one by one when they are few per block, else the blocks
        they are in unpacked whole."""
        blocks = set(map(BLOCK_BITS.__rrshift__, rows))
        if len(rows) < len(blocks) * _FEW:
            return list(map(self.__getitem__, rows))
        packed = len(self.blocks)
        unpacked = {b: self.blocks[b].rows() if b < packed else self.recent for b in blocks}
        return [unpacked[row >> BLOCK_BITS][row & BLOCK_MASK] for row in rows]
