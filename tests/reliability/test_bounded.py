"""Bounded means bounded: worst-case values finish quickly, user objects are never touched.

The time bound here is a hang guard (2 s where a full render takes many
seconds), not a speed target: ``tests/benchmarks/bench_worst_values.py``
measures the per-call cost.
"""

from __future__ import annotations

import contextlib
import time
import unittest.mock
from typing import Any

import pytest
from worst_values import WORST, HugeArgsError, ReprCounter

from flow_xray import trace

HANG_GUARD_S = 2.0


@trace
def takes(value: Any) -> None:
    """A traced call with one argument and no output."""


@trace
def returns(value: Any) -> Any:
    """A traced call that returns its argument."""
    return value


@pytest.mark.parametrize("name", list(WORST))
def test_worst_values_are_captured_in_bounded_time(name: str) -> None:
    """Each worst shape, as argument and as return value, is captured well inside the guard."""
    value = WORST[name]()
    with trace.capture() as result:
        started = time.perf_counter()
        takes(value)
        assert returns(value) is value
        elapsed = time.perf_counter() - started
    assert elapsed < HANG_GUARD_S, f"{name}: {elapsed:.2f} s"
    assert all(len(str(n.inputs)) < 20_000 for n in result)


def test_generators_and_iterators_are_not_consumed() -> None:
    """A generator argument is shown by its repr and still yields everything afterwards."""
    gen = (i for i in range(3))
    with trace.capture():
        takes(gen)
    assert list(gen) == [0, 1, 2]


def test_repr_runs_once_per_call() -> None:
    """An unknown object's __repr__ runs once per call, whatever the retries of the cut."""
    ReprCounter.calls = 0
    with trace.capture():
        takes(ReprCounter())
    assert ReprCounter.calls == 1


def test_an_exception_with_50_mb_of_args_fails_fast() -> None:
    """Raising an exception that carries 50 MB of bytes through @trace stays fast."""

    @trace
    def fails(payload: bytes) -> None:
        raise HugeArgsError(payload)

    payload = bytes(50_000_000)
    with trace.capture() as result, contextlib.suppress(HugeArgsError):
        started = time.perf_counter()
        fails(payload)
    assert time.perf_counter() - started < HANG_GUARD_S
    assert len(result.roots[0].error or "") < 300


def _state(mock: unittest.mock.MagicMock) -> tuple[Any, ...]:
    return (sorted(mock._mock_children), list(mock.mock_calls), sorted(vars(type(mock))))


@pytest.mark.parametrize("kind", ["llm", "chain", "tool"])
def test_a_returned_magicmock_gains_no_attributes(kind: str) -> None:
    """A MagicMock passed in and returned (an LLM call stubbed in a test) is left untouched."""
    mock = unittest.mock.MagicMock()
    before = _state(mock)

    @trace(kind=kind)
    def call(client: Any) -> Any:
        return client

    with trace.capture():
        assert call(mock) is mock
    assert _state(mock) == before


def test_a_dataframe_like_object_is_summarised_without_repr() -> None:
    """Objects of numpy/pandas-named modules with a shape are summarised by shape and dtype."""
    frame = WORST["DataFrame-like (duck-typed)"]()
    with trace.capture() as result:
        takes(frame)
    assert result.roots[0].inputs["value"] == ("<pandas.FakeFrame shape=(10000000, 3) dtype=mixed>")
