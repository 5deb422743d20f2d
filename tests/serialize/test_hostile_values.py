"""Specification of containment: values whose repr, eq, hash or iteration raise are written."""

from __future__ import annotations

import dataclasses
import itertools
import threading
from typing import Any

from flow_xray.serialize import (
    encode_inputs,
    encode_output,
    safe_repr,
    to_jsonable,
)
from tests.serialize.serialize_support import DEFAULT, strict_loads


# --- hostile objects ---------------------------------------------------------
class BadRepr:
    def __repr__(self) -> str:
        raise RuntimeError("no repr")

    def __str__(self) -> str:
        raise RuntimeError("no str")


class BadEquality:
    """Raises from ``==`` and ``<``; hashes are distinct per instance (from a counter, never
    ``id()``), so a set of two is built without comparing them: the test's own set
    literal must not raise, only the serialiser's sorting may."""

    _instances = itertools.count()

    def __init__(self) -> None:
        self._hash = next(BadEquality._instances)

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("no eq")

    def __lt__(self, other: object) -> bool:
        raise RuntimeError("no lt")

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        return "BadEquality()"


class BadItems(dict):  # type: ignore[type-arg]
    def items(self) -> Any:
        raise RuntimeError("no items")


class BadHash:
    def __hash__(self) -> int:
        raise RuntimeError("no hash")

    def __repr__(self) -> str:
        return "BadHash()"


def test_safe_repr_reports_a_failing_repr() -> None:
    """safe_repr of an object whose __repr__ raises names the type and the exception."""
    assert safe_repr(BadRepr(), 100) == "<BadRepr object (repr failed: RuntimeError)>"


def test_safe_repr_caps_length() -> None:
    """safe_repr cuts to max_chars and appends the marker."""
    assert safe_repr("a" * 50, 10) == "'aaaaaaaaa…[truncated]"


def test_bad_repr_and_str_are_contained() -> None:
    """A value whose __repr__ and __str__ both raise is captured as a description."""
    text = encode_inputs({"x": BadRepr()}, DEFAULT, 500)
    assert strict_loads(text) == {"x": "<BadRepr object (repr failed: RuntimeError)>"}


def test_repr_returning_a_non_string_is_contained() -> None:
    """A __repr__ returning a non-str (a TypeError in repr()) is contained."""

    class Weird:
        def __repr__(self) -> Any:
            return 42

    assert safe_repr(Weird(), 100) == "<Weird object (repr failed: TypeError)>"


def test_raising_eq_lt_and_hash_are_contained() -> None:
    """Objects whose __eq__/__lt__/__hash__ raise serialise, in lists and in sets."""
    value = {"list": [BadEquality(), BadHash()], "set": {BadEquality(), BadEquality()}}
    out = strict_loads(encode_inputs(value, DEFAULT, 1000))
    assert out == {
        "list": ["BadEquality()", "BadHash()"],
        "set": ["BadEquality()", "BadEquality()"],
    }


def test_dict_subclass_with_raising_items_is_read_directly() -> None:
    """A dict subclass whose items() raises is still written from its stored entries."""
    bad = BadItems(a=1)
    assert to_jsonable({"d": bad}, DEFAULT) == {"d": {"a": 1}}


def test_raising_dataclass_field_is_contained() -> None:
    """A dataclass field whose getter raises is written as unavailable; the rest stays."""

    @dataclasses.dataclass
    class Pair:
        ok: int
        gone: int

    pair = Pair(1, 2)
    del pair.gone  # reading the field now raises AttributeError
    assert to_jsonable(pair, DEFAULT) == {"ok": 1, "gone": "<unavailable: AttributeError>"}


def test_list_subclass_with_raising_iteration_is_contained() -> None:
    """A sequence whose iteration raises becomes an error description string."""

    class Exploding(list):  # type: ignore[type-arg]
        def __iter__(self) -> Any:
            raise RuntimeError("nope")

    out = to_jsonable([Exploding([1])], DEFAULT)
    assert out == ["<Exploding object (serialization failed: RuntimeError)>"]


def test_encode_functions_never_raise_on_hostile_values() -> None:
    """encode_inputs and encode_output return valid JSON for a zoo of hostile values."""
    cyclic: list[Any] = []
    cyclic.append(cyclic)
    zoo = [BadRepr(), BadEquality(), BadItems(a=1), BadHash(), (i for i in range(2)), cyclic]
    zoo += [threading.Lock(), type, object(), 10**5000, b"\xff" * 10, memoryview(b"abc")]
    for value in zoo:
        strict_loads(encode_inputs({"v": value}, DEFAULT, 300))
        text, mime = encode_output(value, DEFAULT, 300)
        assert mime == "application/json"
        strict_loads(text)
