"""Calls whose kept attributes are equal share one dict when a trace is written; equal is
not enough: ``False == 0 == 0.0`` and ``0.0 == -0.0`` in Python, and each must be written
as itself (found by the property test: a saved trace showed ``0.0`` for ``False``)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from flow_xray import TraceResult, trace

# Values Python finds equal (and hashes alike) that are written differently.
EQUAL_BUT_NOT_THE_SAME: list[tuple[Any, ...]] = [
    (0.0, False, 0, -0.0),
    (1, True, 1.0),
    ((0.0,), (False,), (0,), (-0.0,)),
    ((1, 2), (1.0, 2.0), (True, False)),
]


def _plain(value: Any) -> Any:
    return value


def _same(a: Any, b: Any) -> bool:
    """The same value, type for type (a tuple read back from a file is a list)."""
    if isinstance(a, (tuple, list)):
        return isinstance(b, list) and len(a) == len(b) and all(map(_same, a, b))
    if type(a) is not type(b):
        return False
    return a == b and (type(a) is not float or math.copysign(1, a) == math.copysign(1, b))


@pytest.mark.parametrize("values", EQUAL_BUT_NOT_THE_SAME, ids=repr)
@pytest.mark.parametrize("suffix", [".json", ".fxr"])
def test_one_capture_after_another_writes_each_value_as_itself(
    values: tuple[Any, ...], suffix: str, tmp_path: Path
) -> None:
    """A capture per value, each saved and loaded: the first one's dict is never reused."""
    for value in values:
        with trace.capture() as result:
            trace(attributes={"value": value})(_plain)(1)
        path = tmp_path / f"t{suffix}"
        result.save(path)
        (node,) = TraceResult.load(path).roots
        assert _same(value, node.attributes["value"]), (value, node.attributes["value"])


@pytest.mark.parametrize("values", EQUAL_BUT_NOT_THE_SAME, ids=repr)
def test_calls_in_one_capture_keep_their_own_values(
    values: tuple[Any, ...], tmp_path: Path
) -> None:
    """Calls of one function with these values in one capture: the saved file shows every
    call's own value, as the capture does."""
    with trace.capture() as result:
        for value in values:
            trace(attributes={"value": value})(_plain)(1)
    result.save(tmp_path / "t.json")
    loaded = [node.attributes["value"] for node in TraceResult.load(tmp_path / "t.json").roots]
    assert all(map(_same, values, loaded)), (values, loaded)
    assert loaded == [node.attributes["value"] for node in result.roots]
