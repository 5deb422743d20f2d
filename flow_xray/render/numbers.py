"""The viewer page's binary columns (`flow_xray.render.payload`): numbers and span ids.

Each 8-byte value is stored as 8 planes (every value's first byte, then every
second byte, ...), which gzip packs far better than the values side by side.
Times are integers (nanoseconds) each stored as the difference to the one
before when ``k / 1e6`` gives every value back exactly; other numbers as
64-bit floats; lowercase hex ids as their bytes. ``static/payload.js`` reads
them in the page.
"""

from __future__ import annotations

import itertools
import math
import operator
import re
import sys
from array import array
from collections.abc import Sequence
from typing import Any, Final

SAMPLE: Final = 256  # a column's first values, judged before all of them
_EXACT: Final = 1 << 53  # ints a 64-bit float holds exactly
_NAN: Final = float("nan")
_SCALE: Final = 1e6  # times in ms from nanoseconds: k / 1e6 exactly
_INT: Final = frozenset((int,))
_HEX: Final = re.compile("[0-9a-f]*")


def numbers(values: Sequence[Any], types: set[type]) -> tuple[str, bytes, float | None] | None:
    """A column of numbers (None for null) as bytes: scaled integers (``"N"``, with the
    scale) when that gives every value back exactly, else floats (``"F"``, NaN for null);
    None when a value is not finite or an int too big to be a float exactly (such a
    column is written as text), and for a short column of ints or one with nulls but no
    float (written as text: ints stay ints)."""
    if types == _INT and len(values) >= SAMPLE:  # (parents, counts: as bytes, not text)
        steps = _steps(values)
        return None if steps is None else ("N", steps, 1)
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
            return ("N", scaled, _SCALE)
    else:
        values = [_NAN if v is None else v for v in values]
    floats = array("d", values)
    if sys.byteorder != "little":
        floats.byteswap()
    return ("F", _planes(floats.tobytes()), None)


def _scaled(values: Sequence[float], scale: float) -> bytes | None:
    """The values as integers k with ``k / scale == value`` (see `_steps`), or None when some
    value is not such a quotient (checked first on a sample)."""
    for part in (values[:SAMPLE], values):
        ints = [round(v * scale) for v in part]
        if any(map(operator.ne, map(operator.truediv, ints, itertools.repeat(scale)), part)):
            return None
    return _steps(ints)


def _steps(ints: Sequence[int]) -> bytes | None:
    """Integers as the difference of each to the one before, 64-bit, in planes; None when one
    or a difference reaches 2**53 (where the page's float sums stop being exact)."""
    differences = list(map(operator.sub, ints, itertools.chain((0,), ints)))
    if max(map(abs, ints), default=0) >= _EXACT or max(map(abs, differences), default=0) >= _EXACT:
        return None
    steps = array("q", differences)
    del differences
    if sys.byteorder != "little":
        steps.byteswap()
    return _planes(steps.tobytes())


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
