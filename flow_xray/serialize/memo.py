"""Answers about classes, worked out once per class and kept while it lives. No OpenTelemetry.

The bounded walk (`flow_xray.serialize.walk`) and the shapes it reads
(`flow_xray.serialize.shapes`) ask the same questions of every value: what
depends on the class alone is answered once (a list of 100 numpy floats looks at
its class once).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class ClassMemo(Generic[T]):
    """Answers about classes, each kept while its class lives (a weak reference, dropped
    with the class; an id reused by a new class is told apart).

    For what is read from the class alone (its MRO's dicts, its module) and asked of
    every value. A class changed after it was first asked about (an attribute added to
    it, an ABC registered for it) keeps its first answer.
    """

    __slots__ = ("_table",)

    def __init__(self) -> None:
        self._table: dict[int, tuple[weakref.ref[type], T]] = {}

    def get(self, cls: type) -> T | None:
        entry = self._table.get(id(cls))
        return entry[1] if entry is not None and entry[0]() is cls else None

    def put(self, cls: type, answer: T) -> None:
        key, table = id(cls), self._table
        try:
            ref = weakref.ref(cls, lambda _: table.pop(key, None))
        except TypeError:  # (every class can be weakly referenced; kept unremembered if not)
            return
        table[key] = (ref, answer)


def per_class(compute: Callable[[type], T]) -> Callable[[type], T]:
    """``compute(cls)`` remembered per class (see `ClassMemo`); ``compute`` never raises."""
    memo: ClassMemo[tuple[T]] = ClassMemo()

    def answer(cls: type) -> T:
        known = memo.get(cls)
        if known is None:
            known = (compute(cls),)
            memo.put(cls, known)
        return known[0]

    answer.__doc__ = compute.__doc__
    return answer


__all__ = ["ClassMemo", "per_class"]
