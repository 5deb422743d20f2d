"""analysis/timing.py: the critical path is one chain, root to leaf, that decides the wall time."""

from __future__ import annotations

from typing import Any

import pytest

from flow_xray.analysis.timing import critical_path, finish_columns, tree_shape


def columns(*calls: tuple[int, float, float | None]) -> dict[str, Any]:
    """Columns of calls given as (parent row, start_ms, latency_ms), rows in pre-order."""
    return {
        "parent": [c[0] for c in calls],
        "start_ms": [c[1] for c in calls],
        "latency_ms": [c[2] for c in calls],
    }


def path(*calls: tuple[int, float, float | None]) -> list[int]:
    return critical_path(tree_shape(columns(*calls)))


def test_a_sequential_loop_has_a_path_of_two_calls() -> None:
    """A loop of 1,000 calls one after another: the root and the last call, not all of them."""
    loop = [(-1, 0.0, 1000.0)] + [(0, float(k), 1.0) for k in range(1000)]
    assert path(*loop) == [0, 1000]


def test_each_step_takes_the_child_that_ends_last() -> None:
    """Parallel children: the one still running at the end is on the path, then its own."""
    calls = [
        (-1, 0.0, 100.0),
        (0, 0.0, 95.0),  # 1: ends at 95, the last of the root's children
        (1, 0.0, 50.0),  # 2
        (1, 10.0, 70.0),  # 3: ends at 80, the last of 1's children
        (0, 5.0, 85.0),  # 4: ends at 90
        (0, 20.0, 30.0),  # 5
    ]
    assert path(*calls) == [0, 1, 3]


def test_of_two_children_ending_together_the_longer_one() -> None:
    """The longer contributed more of the wall time."""
    calls = [(-1, 0.0, 100.0), (0, 60.0, 40.0), (0, 10.0, 90.0), (0, 80.0, 20.0)]
    assert path(*calls) == [0, 2]


def test_a_call_that_never_ended_runs_until_its_parent_ends() -> None:
    """A child that never ended is on the path (it was still running when its parent ended)."""
    calls = [(-1, 0.0, 100.0), (0, 0.0, 90.0), (0, 50.0, None), (2, 60.0, 5.0)]
    assert path(*calls) == [0, 2, 3]


def test_of_several_roots_the_one_ending_last() -> None:
    """Traces with several roots (threads, detached tasks): the chain starts at the last one."""
    calls = [(-1, 0.0, 10.0), (0, 1.0, 2.0), (-1, 5.0, 20.0), (2, 6.0, 3.0), (-1, 7.0, 1.0)]
    assert path(*calls) == [2, 3]


def test_no_calls_no_path() -> None:
    """An empty trace has an empty path."""
    assert path() == []


def test_a_call_without_children_owns_exactly_its_latency() -> None:
    """Far into a long trace, end minus start rounds (1e9 + 0.1 - 1e9 is not 0.1): a call
    without children owns its latency as recorded; a negative or missing one gives 0 / None."""
    table = columns(
        (-1, 0.0, 2e9), (0, 1e9, 0.1), (0, 1.5e9, 7), (0, 1.6e9, -1.0), (0, 1.7e9, None)
    )
    table["status"] = ["ok"] * 5
    finish_columns(table)
    own = table["self_ms"]
    assert own[1:] == [0.1, 7.0, 0.0, None]
    assert type(own[2]) is float
    # the root: all but its children's time, the one that never ended running to its end
    assert own[0] == pytest.approx(2e9 - 0.1 - 7.0 - 0.3e9)


def test_a_parents_own_time_stays_on_the_nanosecond_grid() -> None:
    """Far into a trace, a parent's end minus its start and children rounds (1e9 + 0.3 - 1e9
    is not 0.3); its own time is given back in whole nanoseconds, as its times were."""
    table = columns((-1, 1e9, 0.3), (0, 1e9 + 0.1, 0.1))
    table["status"] = ["ok"] * 2
    finish_columns(table)
    assert table["self_ms"] == [0.2, 0.1]
