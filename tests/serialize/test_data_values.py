"""Values of the data libraries people trace (the real numpy and pandas): numpy scalars as
their numbers, arrays and frames by shape, and each class looked at once, not per value."""

from __future__ import annotations

import gc
import json
from typing import Any

import numpy as np
import pandas as pd
import pytest

from flow_xray import trace
from flow_xray.serialize import encode_inputs, to_jsonable
from flow_xray.serialize.memo import ClassMemo, per_class
from tests.serialize.serialize_support import DEFAULT


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (np.int64(7), 7),
        (np.int8(-3), -3),
        (np.uint64(2**64 - 1), 2**64 - 1),
        (np.float32(0.5), 0.5),
        (np.float64(1.25), 1.25),
        (np.bool_(True), True),
        (np.str_("text"), "text"),
        (np.array(5), 5),  # a 0-d array: its one value
    ],
)
def test_a_numpy_scalar_is_its_python_value(value: Any, expected: Any) -> None:
    """What numpy's ``item()`` gives: loss values and step counts read as numbers."""
    converted = to_jsonable(value, DEFAULT)
    assert converted == expected
    assert type(converted) is type(expected)


def test_numpy_scalars_that_are_not_json_numbers_are_their_python_values() -> None:
    """A complex scalar is shown as Python shows it; a datetime64 as the date it is."""
    assert to_jsonable(np.complex128(1 + 2j), DEFAULT) == "(1+2j)"
    assert to_jsonable(np.datetime64("2024-01-02"), DEFAULT) == "2024-01-02"


def test_a_nan_numpy_float_is_text_as_python_nan_is() -> None:
    assert to_jsonable(np.float64("nan"), DEFAULT) == to_jsonable(float("nan"), DEFAULT)
    assert to_jsonable(np.float32("inf"), DEFAULT) == "Infinity"


def test_small_arrays_and_frames_are_their_values() -> None:
    """Up to 64 values: a numpy array as its nested lists, a Series by index, a DataFrame
    row by row (what a failing row of ``df.apply`` or ``iterrows`` held)."""
    row = pd.Series({"user": np.int64(12), "amount": 99.5, "country": "fr"})
    frame = pd.DataFrame({"x": [1, 2], "y": ["a", "b"]}, index=["r1", "r2"])
    assert to_jsonable(
        {"m": np.arange(6).reshape(2, 3), "row": row, "frame": frame, "col": np.zeros(64)},
        DEFAULT,
    ) == {
        "m": [[0, 1, 2], [3, 4, 5]],
        "row": {"user": 12, "amount": 99.5, "country": "fr"},
        "frame": {"r1": {"x": 1, "y": "a"}, "r2": {"x": 2, "y": "b"}},
        "col": [0.0] * 64,
    }


def test_bigger_arrays_and_frames_are_summarised_by_shape_and_dtype() -> None:
    frame = pd.DataFrame({"a": np.arange(1_000), "b": ["x"] * 1_000})
    assert to_jsonable(
        {"m": np.zeros((3, 40)), "df": frame, "s": frame["a"], "col": np.arange(65, dtype="i4")},
        DEFAULT,
    ) == {
        "m": "<ndarray shape=(3, 40) dtype=float64>",
        "df": "<pandas.DataFrame shape=(1000, 2) dtype=mixed>",
        "s": "<pandas.Series shape=(1000,) dtype=int64>",
        "col": "<ndarray shape=(65,) dtype=int32>",
    }


def test_each_dtype_is_named_as_numpy_names_it() -> None:
    """Arrays of many dtypes one after another, each named by its own dtype's text."""
    dtypes = ["int64", ">i4", "<i4", "float16", "complex64", "U3", "S2", "bool", [("x", "i2")]]
    arrays = [np.zeros(100, dtype=dtype) for dtype in dtypes] * 2
    assert to_jsonable(arrays, DEFAULT) == [
        f"<ndarray shape=(100,) dtype={array.dtype}>" for array in arrays
    ]


def test_a_frame_whose_rows_cannot_be_keyed_is_summarised() -> None:
    """A DataFrame with a repeated index has no row-by-row form: its summary, nothing lost."""
    frame = pd.DataFrame({"x": [1, 2]}, index=["same", "same"])
    assert to_jsonable(frame, DEFAULT) == "<pandas.DataFrame shape=(2, 1) dtype=mixed>"


def test_an_object_array_holding_itself_stops_at_the_depth_cap() -> None:
    looped = np.empty(1, dtype=object)
    looped[0] = looped
    converted = to_jsonable(looped, DEFAULT)
    depth = 0
    while isinstance(converted, list):
        converted, depth = converted[0], depth + 1
    assert isinstance(converted, str) and depth <= DEFAULT.max_depth


def test_a_traced_training_step_records_numbers_and_shapes() -> None:
    """The common ML loop: numpy floats in a list, an int step, a batch; a float back."""

    @trace
    def step(batch: Any, losses: list[Any], epoch: Any) -> Any:
        return np.float64(sum(losses)) / len(losses)

    losses = [np.float64(i) / 4 for i in range(8)]
    with trace.capture() as result:
        step(np.ones((32, 10), dtype=np.float32), losses, np.int64(3))
    node = result.roots[0]
    assert node.inputs == {
        "batch": "<ndarray shape=(32, 10) dtype=float32>",
        "losses": [i / 4 for i in range(8)],
        "epoch": 3,
    }
    assert node.output == 0.875
    json.loads(encode_inputs({"losses": losses}, DEFAULT, 4096))  # valid JSON


class _Counted:
    """A class whose answer is asked through a memo (counts the computations)."""


def test_a_class_is_looked_at_once_and_forgotten_with_it() -> None:
    """`per_class` computes once per class and keeps nothing of a class that is gone."""
    calls: list[str] = []

    @per_class
    def name_of(cls: type) -> str:
        calls.append(cls.__name__)
        return cls.__name__

    assert [name_of(_Counted) for _ in range(3)] == ["_Counted"] * 3
    assert calls == ["_Counted"]

    memo: ClassMemo[str] = ClassMemo()
    for index in range(50):  # classes made and dropped, as mocks make one per instance
        made = type(f"Made{index}", (), {})
        memo.put(made, "answer")
        assert memo.get(made) == "answer"
        del made
    gc.collect()
    assert memo._table == {}  # each entry left with its class


def test_a_class_with_the_id_of_a_dead_one_gets_its_own_answer() -> None:
    """An entry found under a class's id but made for another class is never its answer."""
    memo: ClassMemo[str] = ClassMemo()
    old, new = type("Old", (), {}), type("New", (), {})
    memo.put(old, "old answer")
    memo._table[id(new)] = memo._table[id(old)]  # as if ``new`` had the address ``old`` had
    assert memo.get(new) is None
    memo.put(new, "new answer")
    assert (memo.get(new), memo.get(old)) == ("new answer", "old answer")
