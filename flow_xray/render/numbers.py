"""The viewer page's binary columns (`flow_xray.render.payload`): numbers and span ids.

Each 8-byte value is stored as 8 planes (every value's first byte, then every
second byte, ...), which gzip packs far better than the values side by side.
Times are integers (nanoseconds) when ``k / 1e6`` gives every value back
exactly, less an earlier column equal in most calls (self time: a leaf's is its
latency), then each stored as the difference to the one before (start times) or
as it is (latencies), whichever gzips smaller; other numbers as 64-bit floats;
lowercase hex ids as their bytes. ``static/payload.js`` reads
them in the page.
"""

from __future__ import annotations

import itertools
import math
import operator
import re
import sys
import zlib
from array import array
from collections.abc import Sequence
from typing import Any, Final

SAMPLE: Final = 256  # a column's first values, judged before all of them
TRIAL: Final = 1 << 16  # a column's first values, compressed to choose how it is stored
LEVEL: Final = 1  # the page's gzip level (`flow_xray.render.payload`): 6 is ~4x slower for ~7% less
_EXACT: Final = 1 << 53  # ints a 64-bit float holds exactly
_NAN: Final = float("nan")
_SCALE: Final = 1e6  # times in ms from nanoseconds: k / 1e6 exactly
_INT: Final = frozenset((int,))
_HEX: Final = re.compile("[0-9a-f]*")


class Numbers:
    """A page's columns of numbers as bytes (`encode`). Each column of integers is kept
    (64-bit, 8 bytes a call) until the page is packed: a later column equal to an earlier
    one of the same scale in at least half the calls (a call's self time and its latency:
    every leaf) is stored as its difference from that one, nearly all zeros."""

    __slots__ = ("_ints",)

    def __init__(self) -> None:
        self._ints: dict[str, tuple[float, array[int]]] = {}

    def encode(
        self, key: str, values: Sequence[Any], types: set[type]
    ) -> tuple[str, bytes, list[Any] | None] | None:
        """Column ``key`` of numbers (None for null) as bytes: integers k standing for
        ``k / scale`` when that gives every value back exactly (``"N"`` stored as the
        difference of each to the one before, ``"K"`` as they are; the params ``[scale]``,
        or ``[scale, base]`` when each is stored less the integer of column ``base`` in
        the same call), else 64-bit floats (``"F"``, NaN for null, no params); None when
        a value is not finite or an int too big to be a float exactly (such a column is
        written as text), and for a short column of ints or one with nulls but no float
        (written as text: ints stay ints)."""
        if types == _INT and len(values) >= SAMPLE:  # (parents, counts: as bytes, not text)
            return self._integers(key, values, 1)
        if float not in types:
            return None
        present = [v for v in values if v is not None] if type(None) in types else values
        if int in types and any(type(v) is int and not -_EXACT < v < _EXACT for v in present):
            return None
        try:
            if not math.isfinite(math.fsum(present)):
                return None
        except OverflowError:
            return None
        if present is values:
            scaled = _scaled(values, _SCALE)
            if scaled is not None:
                return self._integers(key, scaled, _SCALE)
        else:
            values = [_NAN if v is None else v for v in values]
        floats = array("d", values)
        if sys.byteorder != "little":
            floats.byteswap()
        return ("F", _planes(floats.tobytes()), None)

    def _integers(
        self, key: str, ints: Sequence[int], scale: float
    ) -> tuple[str, bytes, list[Any]] | None:
        """`encode`'s integers, or None when one reaches 2**53."""
        if max(map(abs, ints), default=0) >= _EXACT:
            return None
        column = array("q", ints)
        params: list[Any] = [scale]
        stored = column
        base = self._base(column, scale)
        if base is not None:
            difference = array("q", map(operator.sub, column, self._ints[base][1]))
            if max(map(abs, difference), default=0) < _EXACT:
                stored = difference
                params.append(base)
        self._ints[key] = (scale, column)
        return _stored(stored, params)

    def _base(self, column: array[int], scale: float) -> str | None:
        """An earlier column of ``scale`` equal to ``column`` in at least half the calls
        (judged on a sample first)."""
        for key, (other_scale, other) in self._ints.items():
            if other_scale != scale or len(other) != len(column):
                continue
            sample = sum(map(operator.eq, column[:SAMPLE], other[:SAMPLE]))
            if 2 * sample >= min(len(column), SAMPLE) and 2 * sum(
                map(operator.eq, column, other)
            ) >= len(column):
                return key
        return None


def _stored(ints: array[int], params: list[Any]) -> tuple[str, bytes, list[Any]]:
    """Integers (each below 2**53) as planes: as the difference of each to the one before
    (``"N"``: start times, parents) or as they are (``"K"``: latencies, whose differences
    take twice their room), whichever of the two gzips smaller on the first `TRIAL`; as
    they are when a difference reaches 2**53 (where the page's float sums stop being
    exact)."""
    kind, data = "K", ints
    head = ints[:TRIAL]
    if _gzipped(_steps(head)) <= _gzipped(head):
        steps = _steps(ints)
        if max(map(abs, steps), default=0) < _EXACT:
            kind, data = "N", steps
    if sys.byteorder != "little":
        data = array("q", data)
        data.byteswap()
    return (kind, _planes(data.tobytes()), params)


def _steps(ints: array[int]) -> array[int]:
    """The difference of each integer to the one before (the first's to 0)."""
    return array("q", map(operator.sub, ints, itertools.chain((0,), ints)))


def _gzipped(ints: array[int]) -> int:
    """The size of ``ints`` as planes, compressed as the page is."""
    return len(zlib.compress(_planes(ints.tobytes()), LEVEL))


def _scaled(values: Sequence[float], scale: float) -> list[int] | None:
    """The values as integers k with ``k / scale == value``, or None when some value is not
    such a quotient (checked first on a sample)."""
    for part in (values[:SAMPLE], values):
        ints = [round(v * scale) for v in part]
        if any(map(operator.ne, map(operator.truediv, ints, itertools.repeat(scale)), part)):
            return None
    return ints


def _planes(data: bytes) -> bytes:
    """8-byte values as 8 planes: every value's first byte, then every second byte, ..."""
    return b"".join(data[i::8] for i in range(8))


def unplanes(data: bytes) -> bytes:
    """8 planes (`numbers`' bytes) back as 8-byte values side by side."""
    out = bytearray(len(data))
    size = len(data) // 8
    for i in range(8):
        out[i::8] = data[i * size : (i + 1) * size]
    return bytes(out)


def hex_width(values: Sequence[str]) -> int:
    """The byte width of strings that are all lowercase hex of the same even length (span
    ids), else 0."""
    length = len(values[0])
    if not length or length % 2 or any(len(v) != length for v in values):
        return 0
    return length // 2 if _HEX.fullmatch("".join(values)) else 0
