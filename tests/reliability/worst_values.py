"""The worst argument shapes the audit found, built fresh for each use (shared by test and bench).

Each builder returns a value that, rendered in full, costs seconds or
hundreds of megabytes; captured, it must cost about what a small value does.
"""

from __future__ import annotations

import argparse
import array
import collections
import functools
import time
from collections.abc import Callable
from typing import Any


class ReprCounter:
    """An object whose ``__repr__`` is big and counts its calls (it must run once per call)."""

    calls = 0

    def __repr__(self) -> str:
        ReprCounter.calls += 1
        return "ReprCounter(" + "x" * 1_000_000 + ")"


class WithAsDict:
    """A record of ``size`` fields whose ``_asdict()`` builds its dict on each call (and counts)."""

    calls = 0

    def __init__(self, size: int = 1_000_000) -> None:
        self.size = size

    def __len__(self) -> int:
        return self.size

    def _asdict(self) -> dict[str, int]:
        WithAsDict.calls += 1
        return {f"field_{i}": i for i in range(self.size)}


class SlowLazy:
    """A Django-style lazy object: reading its ``__class__`` (what ``isinstance`` does) or any
    attribute runs its query (a second here)."""

    @property  # type: ignore[misc]
    def __class__(self) -> type:
        time.sleep(1.0)
        return dict

    def __getattr__(self, name: str) -> Any:
        time.sleep(1.0)
        raise AttributeError(name)

    def __repr__(self) -> str:
        return "<SlowLazy: not evaluated>"


class BlockingAsDict:
    """Not a namedtuple, yet with an ``_asdict()`` that blocks for 30 s."""

    def _asdict(self) -> dict[str, Any]:
        time.sleep(30)
        return {}


class UserOrdered:
    """A user object with a comparison that does some work (as a real ``__lt__`` may)."""

    def __init__(self, key: int) -> None:
        self.key = key

    def __lt__(self, other: UserOrdered) -> bool:
        time.sleep(0.0001)
        return self.key < other.key


class HugeArgsError(Exception):
    """An exception carrying 50 MB of bytes in its args."""


class CustomStrError(Exception):
    """An exception with its own ``__str__`` over its args (a common pattern)."""

    def __str__(self) -> str:
        return f"failed with {self.args!r}"


# Exceptions carrying 50 MB, built fresh for each use: raising one through a traced
# call must cost what raising a small one does (``str(exc)`` would build 50-200 MB).
WORST_ERRORS: dict[str, Callable[[], BaseException]] = {
    "Exception(50 MB bytes)": lambda: HugeArgsError(bytes(50_000_000)),
    "KeyError(50 MB str)": lambda: KeyError("k" * 50_000_000),
    "KeyError(50 MB bytes)": lambda: KeyError(bytes(50_000_000)),
    "OSError(2, msg, 50 MB path)": lambda: OSError(2, "No such file", "p" * 50_000_000),
    "custom __str__ (50 MB bytes)": lambda: CustomStrError(bytes(50_000_000)),
    "custom __str__ (list of 1M)": lambda: CustomStrError(list(range(1_000_000))),
    "UnicodeDecodeError on 50 MB": lambda: UnicodeDecodeError(
        "utf-8", b"\xff" * 50_000_000, 0, 1, "invalid start byte"
    ),
}


class FakeFrame:
    """Duck-typed like a pandas DataFrame (module name, shape, dtypes) without pandas."""

    __module__ = "pandas.core.frame"
    shape = (10_000_000, 3)
    dtypes = ("float64", "int64", "object")

    def __repr__(self) -> str:  # what a real one costs: every cell rendered
        return "\n".join("row" for _ in range(1_000_000))


FakeFrame.__module__ = "pandas.core.frame"

WORST: dict[str, Callable[[], Any]] = {
    "array.array of 10M doubles": lambda: array.array("d", bytes(80_000_000)),
    "UserList of 1M": lambda: collections.UserList(range(1_000_000)),
    "deque of 1M": lambda: collections.deque(range(1_000_000)),
    "set of 1M": lambda: set(range(1_000_000)),
    "frozenset of 200k str": lambda: frozenset(str(i) for i in range(200_000)),
    "dict.keys() of 1M": lambda: dict.fromkeys(range(1_000_000)).keys(),
    "dict.values() of 1M": lambda: dict.fromkeys(range(1_000_000)).values(),
    "generator": lambda: (i for i in range(10**9)),
    "bytes of 50 MB": lambda: bytes(50_000_000),
    "bytearray of 50 MB": lambda: bytearray(50_000_000),
    "memoryview of 50 MB": lambda: memoryview(bytearray(50_000_000)),
    "range(10**12)": lambda: range(10**12),
    "int 10**5000": lambda: 10**5000,
    "str of 50 MB": lambda: "s" * 50_000_000,
    "list of 1M": lambda: list(range(1_000_000)),
    "dict of 1M": lambda: dict.fromkeys(range(1_000_000), 1),
    "nested 10k deep": lambda: _nested(10_000),
    "1 MB __repr__": ReprCounter,
    "_asdict() of 1M": WithAsDict,
    "namedtuple holding 1M list": lambda: collections.namedtuple("P", "x y")(
        list(range(1_000_000)), 2
    ),
    "DataFrame-like (duck-typed)": FakeFrame,
    "exception holding 50 MB": lambda: HugeArgsError(bytes(50_000_000)),
    "functools.partial over 2M items": lambda: functools.partial(print, _BIG, key=_BIG),
    "argparse.Namespace over 2M items": lambda: argparse.Namespace(
        a=_BIG, b=dict.fromkeys(range(300_000))
    ),
    "ChainMap of 2 x 500k": lambda: collections.ChainMap(
        dict.fromkeys(range(500_000), 1), dict.fromkeys(range(500_000, 1_000_000), 2)
    ),
    "set of 4,000 user-ordered objects": lambda: {UserOrdered(i) for i in range(4000)},
    "lazy object (its query takes 1 s)": SlowLazy,
    "_asdict() that blocks 30 s (not a namedtuple)": BlockingAsDict,
}

_BIG: list[int] = list(range(2_000_000))


def _nested(depth: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(depth):
        value = [value]
    return value
