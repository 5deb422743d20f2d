"""The error path: an exception through N traced calls is formatted once, read as ``str`` does.

Each traced call an exception leaves records its traceback; each frame is
formatted once (the next call out reuses the frames below it), so the whole
path is linear in depth. Counted here, not timed: how many traceback entries
are formatted. ``tests/benchmarks/bench_error_path.py`` prints the times.
"""

from __future__ import annotations

import sys
import traceback
from collections.abc import Iterator
from typing import Any

import pytest

from flow_xray import trace
from flow_xray.attributes import ERROR_LOCATION
from flow_xray.serialize import exceptions


@trace
def down(n: int) -> int:
    if n == 0:
        raise ValueError("bottom")
    return down(n - 1)


@pytest.fixture
def formatted(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """Counts the traceback entries flow-xray formats (each `_formatted` call's entries)."""
    counts: list[int] = []
    real = exceptions._formatted

    def counting(entries: list[Any], limits: Any) -> Any:
        counts.append(len(entries))
        return real(entries, limits)

    monkeypatch.setattr(exceptions, "_formatted", counting)
    yield counts


@pytest.mark.parametrize("depth", [15, 150, 1000])
def test_each_frame_is_formatted_once_on_the_way_out(formatted: list[int], depth: int) -> None:
    """Through N traced frames, about N frames are formatted in all (not N²/2)."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 4 * depth + 200))
    try:
        with trace.capture() as result, pytest.raises(ValueError):
            down(depth)
    finally:
        sys.setrecursionlimit(limit)
    assert sum(formatted) <= depth + 1
    assert len(list(result)) == depth + 1


def test_the_recorded_traceback_is_pythons_own_without_flow_xray_frames() -> None:
    """The outermost call's traceback reads as ``traceback.format_exception`` prints it, the
    wrapper frames left out and the recursion folded the same way."""
    with trace.capture() as result, pytest.raises(ValueError) as raised:
        down(40)
    summary = [f for f in traceback.extract_tb(raised.value.__traceback__) if f.name == "down"]
    expected = "".join(traceback.StackSummary.from_list(summary).format())
    stack = result.roots[0].traceback or ""
    assert stack.startswith("Traceback (most recent call last):\n")
    assert expected in stack
    assert "[Previous line repeated 37 more times]" in stack
    assert stack.endswith("ValueError: bottom\n")


def test_every_call_on_the_path_has_its_own_raise_site() -> None:
    """Each failed call names where the exception was raised: the innermost frame."""
    with trace.capture() as result, pytest.raises(ValueError) as raised:
        down(5)
    line = traceback.extract_tb(raised.value.__traceback__)[-1].lineno
    assert {node.attributes[ERROR_LOCATION] for node in result} == {
        f"tests/reliability/test_error_path.py:{line}"
    }


def test_a_unicode_decode_error_reads_as_str_does() -> None:
    """A UnicodeDecodeError on 20 MB of input: Python's own message, not a tuple of reprs."""
    data = b"\xff" * 20_000_000

    @trace
    def decode() -> str:
        return data.decode("utf-8")

    with trace.capture() as result, pytest.raises(UnicodeDecodeError) as raised:
        decode()
    assert result.roots[0].error == f"UnicodeDecodeError: {raised.value}"


@pytest.mark.parametrize(
    "error",
    [
        ValueError(b"raw"),
        ValueError(1, "two", None),
        RuntimeError(2.5),
        OSError(2, "No such file or directory", "data.csv"),
        KeyError("missing"),
        UnicodeEncodeError("ascii", "caf\u00e9", 3, 4, "ordinal not in range(128)"),
    ],
    ids=lambda e: type(e).__name__,
)
def test_small_exception_messages_are_exactly_str(error: BaseException) -> None:
    """The recorded message of an exception with small built-in args is ``str(exc)``."""

    @trace
    def fails() -> None:
        raise error

    with trace.capture() as result, pytest.raises(type(error)):
        fails()
    assert result.roots[0].error == f"{type(error).__name__}: {error}"
