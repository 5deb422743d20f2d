"""Specification of the bounded walk (`to_jsonable`): any value to JSON-compatible data."""

from __future__ import annotations

import collections
import dataclasses
import datetime
import decimal
import enum
import json
import math
import os
import pathlib
import subprocess
import sys
import threading
import uuid
from collections.abc import Callable
from typing import Any, NoReturn

from flow_xray.serialize import (
    encode_inputs,
    to_jsonable,
)
from tests.serialize.serialize_support import DEFAULT, strict_loads


# --- JSON conversion ---------------------------------------------------------
def test_primitives_pass_through_unchanged() -> None:
    """str, int, float, bool and None are already JSON and come back as they are."""
    value = {"s": "x", "i": -3, "f": 1.5, "t": True, "n": None}
    assert to_jsonable(value, DEFAULT) == value


def test_non_string_keys_are_converted_like_json_dumps() -> None:
    """int, float, bool and None keys become the strings json.dumps would write."""
    keys = {2: "a", 2.5: "b", True: "c", None: "d"}
    assert to_jsonable(keys, DEFAULT) == json.loads(json.dumps(keys))


def test_other_keys_use_their_repr() -> None:
    """A tuple key is written as its repr."""
    assert to_jsonable({(1, 2): "x"}, DEFAULT) == {"(1, 2)": "x"}


def test_tuples_and_deques_become_lists() -> None:
    """Sequences other than list are written as JSON arrays."""
    assert to_jsonable(((1, 2), collections.deque([3])), DEFAULT) == [[1, 2], [3]]


def test_sets_are_sorted() -> None:
    """Sets and frozensets come out sorted, whatever their insertion order."""
    assert to_jsonable({3, 1, 2}, DEFAULT) == [1, 2, 3]
    assert to_jsonable(frozenset({"b", "a"}), DEFAULT) == ["a", "b"]


def test_unorderable_sets_are_sorted_by_repr() -> None:
    """A set mixing types that cannot be compared is ordered by each element's repr."""
    assert to_jsonable({1, "a", None}, DEFAULT) == ["a", 1, None]


def test_set_order_does_not_depend_on_hash_seed() -> None:
    """Two interpreters with different hash seeds write the same text for the same set."""
    code = (
        "from flow_xray.serialize import encode_inputs, Limits;"
        "print(encode_inputs({'s': {'pear', 'fig', 1, 'kiwi', (2, 'x')}}, Limits(), 1000))"
    )
    outputs = {
        subprocess.run(
            [sys.executable, "-c", code],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in ("1", "2", "3")
    }
    assert len(outputs) == 1


def test_dataclasses_become_objects_without_copying() -> None:
    """A dataclass becomes a dict of its fields, even when a field cannot be copied."""

    @dataclasses.dataclass
    class Job:
        name: str
        lock: Any

    out = to_jsonable(Job("x", threading.Lock()), DEFAULT)
    assert out["name"] == "x"
    assert out["lock"].startswith("<unlocked _thread.lock object")


def test_pydantic_models_become_objects(e2e_missing: Callable[[str], NoReturn]) -> None:
    """A real pydantic model is written as its fields, read without calling model_dump()."""
    try:
        import pydantic
    except ImportError:
        e2e_missing("pydantic is not installed (pip install -e '.[test,e2e]')")

    class Model(pydantic.BaseModel):
        a: int
        when: datetime.date

        def model_dump(self, **kwargs: Any) -> dict[str, Any]:
            raise AssertionError("model_dump() must not run")

    assert to_jsonable(Model(a=1, when=datetime.date(2024, 1, 2)), DEFAULT) == {
        "a": 1,
        "when": "2024-01-02",
    }


def test_a_model_dump_of_an_unknown_type_never_runs() -> None:
    """An object merely having model_dump() is not a record: its repr is used, the method
    never called."""

    class Model:
        def model_dump(self) -> dict[str, Any]:
            raise AssertionError("model_dump() must not run")

        def __repr__(self) -> str:
            return "Model(?)"

    assert to_jsonable(Model(), DEFAULT) == "Model(?)"


def test_namedtuples_become_objects() -> None:
    """Objects with _asdict() (namedtuples) are written with their field names."""
    point = collections.namedtuple("Point", "x y")(1, 2)
    assert to_jsonable(point, DEFAULT) == {"x": 1, "y": 2}


def test_enums_become_their_value() -> None:
    """An enum member is written as its value."""

    class Color(enum.Enum):
        RED = "red"

    assert to_jsonable([Color.RED], DEFAULT) == ["red"]


def test_standard_scalars_become_strings() -> None:
    """datetime, date, time, timedelta, UUID, Decimal and paths have readable string forms."""
    values = [
        datetime.datetime(2024, 5, 6, 7, 8, 9),
        datetime.date(2024, 5, 6),
        datetime.time(7, 8),
        datetime.timedelta(seconds=90),
        uuid.UUID(int=1),
        decimal.Decimal("1.10"),
        pathlib.PurePosixPath("/a/b"),
    ]
    assert to_jsonable(values, DEFAULT) == [
        "2024-05-06T07:08:09",
        "2024-05-06",
        "07:08:00",
        "0:01:30",
        "00000000-0000-0000-0000-000000000001",
        "1.10",
        "/a/b",
    ]


def test_bytes_are_summarised_with_length_and_prefix() -> None:
    """bytes become '<bytes len=N b'...'…>' with a short prefix, never the whole payload."""
    out = to_jsonable(b"\x89PNG" + b"\x00" * 10_000, DEFAULT)
    assert out.startswith("<bytes len=10004 b'\\x89PNG")
    assert len(out) < 200


def test_non_finite_floats_become_strings() -> None:
    """NaN and infinities are written as strings so the JSON stays standard."""
    text = encode_inputs({"v": [math.nan, math.inf, -math.inf]}, DEFAULT, 100)
    assert strict_loads(text) == {"v": ["NaN", "Infinity", "-Infinity"]}


def test_huge_ints_are_summarised() -> None:
    """An int too long to print as a JSON number becomes a summary string."""
    assert to_jsonable(10**5000, DEFAULT) == "<int bits=16610>"


def test_other_objects_use_repr_without_memory_addresses() -> None:
    """Unknown objects fall back to repr, with ' at 0x…' removed so output is deterministic."""

    class Thing:
        pass

    out = to_jsonable(Thing(), DEFAULT)
    assert out.startswith("<") and out.endswith(".Thing object>")
    assert "0x" not in out


def test_generators_are_not_consumed() -> None:
    """A generator is shown by repr and still yields every item afterwards."""
    gen = (i for i in range(3))
    assert "generator object" in to_jsonable(gen, DEFAULT)
    assert list(gen) == [0, 1, 2]


def test_attribute_magic_does_not_fake_known_shapes() -> None:
    """An object answering every attribute (a mock) is not taken for a namedtuple or model."""

    class Anything:
        def __getattr__(self, name: str) -> Any:
            return lambda *a, **k: {"fake": True}

        def __repr__(self) -> str:
            return "Anything()"

    assert to_jsonable(Anything(), DEFAULT) == "Anything()"
