"""Views of a `flow_xray.tree.spans.SpanStore`'s columns that make no object per row:
statuses read from the rows' shapes, trace ids as bytes. No OpenTelemetry."""

from __future__ import annotations

import bisect
from array import array
from collections.abc import Iterator, Sequence
from typing import overload

from flow_xray.hexids import big_endian


class Statuses(Sequence[str]):
    """The rows' statuses, read from their shapes (no list of a million references)."""

    __slots__ = ("shapes",)

    def __init__(self, shapes: Sequence[tuple[str, str | None, tuple[str, ...]]]) -> None:
        self.shapes = shapes

    def __len__(self) -> int:
        return len(self.shapes)

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[str]: ...

    def __getitem__(self, index: int | slice) -> str | Sequence[str]:
        if isinstance(index, slice):
            return [shape[0] for shape in self.shapes[index]]
        return self.shapes[index][0]

    def __iter__(self) -> Iterator[str]:
        return (shape[0] for shape in self.shapes)


def trace_id_bytes(
    run_starts: Sequence[int], high: array[int], low: array[int], count: int, rows: Sequence[int]
) -> bytes:
    """The trace ids of ``rows`` of ``count``, 16 bytes each, most significant first.

    A store keeps a trace id per run of rows: run ``i`` starts at row
    ``run_starts[i]``, its id is ``high[i] << 64 | low[i]``. A script's loop of
    top-level calls makes a run per row.
    """
    runs = (
        rows if len(run_starts) == count else [bisect.bisect_right(run_starts, r) - 1 for r in rows]
    )
    words = array("Q", bytes(16 * len(rows)))
    words[0::2] = array("Q", map(high.__getitem__, runs))
    words[1::2] = array("Q", map(low.__getitem__, runs))
    return big_endian(words)  # (each half most significant byte first)
