"""Bounded means bounded: worst-case values finish quickly, user objects are never touched.

The time bound here is a hang guard (2 s where a full render takes many
seconds), not a speed target: ``tests/benchmarks/bench_worst_values.py``
measures the per-call cost.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import time
import tracemalloc
import unittest.mock
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import pytest
from worst_values import WORST, WORST_ERRORS, CustomStrError, HugeArgsError, ReprCounter, WithAsDict

from flow_xray import trace
from flow_xray.tracing.recording import user_attribute_limit

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


@pytest.mark.parametrize("size", [2, 1_000_000])
def test_asdict_of_an_object_that_is_not_a_namedtuple_is_never_called(size: int) -> None:
    """An object with an _asdict() of its own is not a known record: shown by its (default)
    repr, its _asdict() never run, whatever its length."""
    WithAsDict.calls = 0
    record = WithAsDict(size)
    with trace.capture() as result:
        assert returns(record) is record
    assert WithAsDict.calls == 0
    node = result.roots[0]
    assert node.inputs["value"] == "<worst_values.WithAsDict object>"
    assert node.output == "<worst_values.WithAsDict object>"


class _Endless(Mapping[str, int]):
    """A mapping whose items() never ends (stops after 10**6 here, so a failure is finite)."""

    read = 0

    def __getitem__(self, key: str) -> int:
        return 0

    def __len__(self) -> int:
        return 1

    def __iter__(self) -> Iterator[str]:
        for i in itertools.count():
            _Endless.read += 1
            if i >= 1_000_000:
                return
            yield f"k{i}"


def test_an_endless_attributes_mapping_is_read_up_to_a_bound(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """attributes= is read for at most 64 (<= max_items) + 1 pairs; the rest left, one warning."""
    _Endless.read = 0
    with caplog.at_level(logging.WARNING, logger="flow_xray"):

        @trace(attributes=_Endless())
        def step() -> None:
            """A traced call with endless static attributes."""

    limit = user_attribute_limit()
    assert _Endless.read <= limit + 1
    assert [r.getMessage() for r in caplog.records] == [
        f"flow-xray: attributes= has more than {limit} items; keeping the first {limit}"
    ]
    with trace.capture() as result:
        step()
    user = [k for k in result.roots[0].attributes if k.startswith("k")]
    assert len(user) == limit


def test_a_million_attributes_cost_what_a_few_do(caplog: pytest.LogCaptureFixture) -> None:
    """attributes= with 1M keys decorates and calls fast, with one warning and no SDK warning."""
    many = {f"k{i}": i for i in range(1_000_000)}
    with caplog.at_level(logging.WARNING):
        started = time.perf_counter()

        @trace(attributes=many)
        def step() -> None:
            """A traced call with a million static attributes."""

        with trace.capture() as result:
            step()
            step()
        elapsed = time.perf_counter() - started
    assert elapsed < HANG_GUARD_S, f"{elapsed:.2f} s"
    assert len(caplog.records) == 1
    node = result.roots[0]
    assert sum(k.startswith("k") for k in node.attributes) == user_attribute_limit()
    assert node.kind == "chain" and node.inputs == {}  # flow-xray's own attributes all kept


@pytest.mark.slow
def test_annotate_with_a_million_keys_keeps_a_bounded_few() -> None:
    """trace.annotate(**huge) records the first few keys and no SDK warning per key."""
    many = {f"k{i}": i for i in range(1_000_000)}

    @trace
    def step() -> None:
        trace.annotate(**many)

    with trace.capture() as result:
        step()
    assert len(result.roots[0].meta) == user_attribute_limit()


@pytest.mark.parametrize("name", list(WORST_ERRORS))
def test_an_exception_with_big_args_is_recorded_without_materialising_them(name: str) -> None:
    """KeyError, OSError, custom __str__ with 50 MB args: message built from bounded reprs."""
    error = WORST_ERRORS[name]()

    @trace
    def fails() -> None:
        raise error

    tracemalloc.start()
    try:
        with trace.capture() as result, contextlib.suppress(BaseException):
            fails()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 5_000_000, f"{name}: {peak:,} bytes"
    node = result.roots[0]
    assert node.error is not None and len(node.error) < 2_200
    assert len(node.traceback or "") < 40_000


def test_an_exception_passed_as_an_argument_is_shown_without_rendering_its_args() -> None:
    """An exception value carrying 50 MB shows as Type(<bounded args>), nothing rendered in full."""
    error = HugeArgsError(bytes(50_000_000), "why")
    tracemalloc.start()
    try:
        with trace.capture() as result:
            assert returns(error) is error
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 5_000_000, f"{peak:,} bytes"
    shown = "HugeArgsError(<bytes len=50000000 b'\\x00\\x00"
    node = result.roots[0]
    assert node.inputs["value"].startswith(shown) and node.inputs["value"].endswith("'why')")
    assert node.output == node.inputs["value"]


@pytest.mark.parametrize(
    ("error", "message"),
    [
        (KeyError("k" * 10_000_000), "KeyError: 'kkkkkkkk"),
        (OSError(2, "No such file", "p" * 10**7), "FileNotFoundError: [Errno 2] No such file: 'p"),
        (OSError(bytes(10_000_000)), "OSError: <bytes len=10000000 b'\\x00"),
        (CustomStrError("a", "b" * 10_000_000), "CustomStrError: ('a', 'bbbb"),
        (KeyError("k"), "KeyError: 'k'"),
        (OSError(2, "No such file", "f.txt"), "FileNotFoundError: [Errno 2] No such file: 'f.txt'"),
        (CustomStrError("small"), "CustomStrError: failed with ('small',)"),
    ],
)
def test_exception_messages_keep_their_usual_form(error: BaseException, message: str) -> None:
    """Big args are cut inside the message format users know; small ones are exactly str(exc)."""

    @trace
    def fails() -> None:
        raise error

    with trace.capture() as result, contextlib.suppress(BaseException):
        fails()
    assert (result.roots[0].error or "").startswith(message)


class _Counted:
    """An object that counts its __repr__ calls."""

    calls = 0

    def __repr__(self) -> str:
        _Counted.calls += 1
        return "Counted()"


def _returned(value: Any) -> Any:
    return value


def _in_value_error(value: Any) -> Any:
    raise ValueError(value)


def _in_key_error(value: Any) -> Any:
    raise KeyError(value)


def _yielded(value: Any) -> Any:
    yield value
    raise ValueError(value)


@pytest.mark.parametrize("form", [_returned, _in_value_error, _in_key_error, _yielded])
def test_an_arguments_repr_runs_once_per_call(form: Callable[[Any], Any]) -> None:
    """An argument also returned, yielded or carried by the exception has its __repr__ run once."""
    traced = trace(form)
    _Counted.calls = 0
    with trace.capture() as result, contextlib.suppress(ValueError, KeyError):
        value = traced(_Counted())
        if form is _yielded:
            list(value)
    assert _Counted.calls == 1
    node = result.roots[0]
    assert node.inputs == {"value": "Counted()"}
    assert node.error in (None, "ValueError: Counted()", "KeyError: Counted()")
