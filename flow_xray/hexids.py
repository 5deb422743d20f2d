"""A column of ids kept as their bytes: span and trace ids of a million calls without a
million strings. No OpenTelemetry.

A trace's columns (`flow_xray.tree.columns`) hold each call's ``span_id``,
``trace_id`` and ``id`` as lowercase hex text. Read from a capture's store or a
compact file, where the ids are numbers or bytes, `HexIds` keeps them so: each
row's text is made only when it is read, and the viewer page
(`flow_xray.render.payload`) and the compact file (`flow_xray.formats.compact`),
which write ids as bytes, take `HexIds.data` as it is.
"""

from __future__ import annotations

import sys
from array import array
from collections.abc import Iterator, Sequence
from typing import Any, overload


class HexIds(Sequence[str]):
    """Row ``i`` is ``prefix`` and bytes ``i * width`` to ``(i + 1) * width`` of ``data``
    as lowercase hex. Read-only; equal to any sequence of the same texts."""

    __slots__ = ("data", "prefix", "width")

    def __init__(self, data: bytes, width: int, prefix: str = "") -> None:
        if width <= 0 or len(data) % width:
            raise ValueError(f"{len(data)} bytes are not ids of {width} bytes")
        self.data = data
        self.width = width
        self.prefix = prefix

    @classmethod
    def of_ints(cls, ids: Sequence[int], prefix: str = "") -> HexIds:
        """Span ids (ints of 64 bits) as 8-byte ids."""
        return cls(big_endian(array("Q", ids)), 8, prefix)

    def with_prefix(self, prefix: str) -> HexIds:
        """The same ids with ``prefix`` before this column's own."""
        return HexIds(self.data, self.width, prefix + self.prefix)

    def texts(self) -> list[str]:
        """Every row's text."""
        text, step, prefix = self.data.hex(), 2 * self.width, self.prefix
        return [prefix + text[at : at + step] for at in range(0, len(text), step)]

    def __len__(self) -> int:
        return len(self.data) // self.width

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> list[str]: ...

    def __getitem__(self, index: int | slice) -> str | list[str]:
        if isinstance(index, slice):
            start, stop, step = index.indices(len(self))
            if step == 1:
                part = HexIds(self.data[start * self.width : stop * self.width], self.width)
                return part.with_prefix(self.prefix).texts() if stop > start else []
            return [self[at] for at in range(start, stop, step)]
        count = len(self)
        at = index + count if index < 0 else index
        if not 0 <= at < count:
            raise IndexError("id index out of range")
        width = self.width
        return self.prefix + self.data[at * width : (at + 1) * width].hex()

    def __iter__(self) -> Iterator[str]:
        return iter(self.texts())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, HexIds):
            return (self.data, self.width, self.prefix) == (other.data, other.width, other.prefix)
        if isinstance(other, Sequence) and not isinstance(other, (str, bytes)):
            return len(other) == len(self) and self.texts() == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # (equal to lists, as a list is)

    def __repr__(self) -> str:
        return f"HexIds({len(self)} ids of {self.width} bytes, prefix {self.prefix!r})"


def big_endian(words: array[int]) -> bytes:
    """64-bit words as bytes, most significant first (what hex text reads); ``words`` is
    turned around in place on a little-endian machine."""
    if sys.byteorder == "little":
        words.byteswap()
    return words.tobytes()


def id_bytes(values: Any) -> tuple[bytes, int] | None:
    """``values``' ids as bytes and the byte width of each, when they are a `HexIds` without
    a prefix; else None (a list of texts, say: the caller reads them as texts)."""
    if type(values) is HexIds and not values.prefix:
        return values.data, values.width
    return None


__all__ = ["HexIds", "big_endian", "id_bytes"]
