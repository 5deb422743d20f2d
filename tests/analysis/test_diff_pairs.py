"""Run diffs of real traced runs that differ in known ways, and of the demo agent's seeds."""

from __future__ import annotations

import pytest
from diff_pipeline import run_pipeline

from flow_xray import TraceResult
from flow_xray.analysis.diff import TraceDiff
from flow_xray.examples.demo_agent import Weather, run_demo


def changes(diff: TraceDiff) -> list[tuple[str, str, tuple[str, ...]]]:
    """(change, path, fields) of every call that is not the same."""
    return [(c.change, " > ".join(c.path), c.fields) for c in diff if c.change != "same"]


def test_two_runs_of_the_same_code_are_equal() -> None:
    """Nothing changed between two runs: equal, exit-status-wise, whatever the timings."""
    diff = run_pipeline().diff(run_pipeline())
    assert diff.equal
    assert diff.summary().startswith("no differences in 6 calls, wall time ")


def test_a_renamed_output() -> None:
    """The LLM answers with another name: its output and the agent's output changed."""
    diff = run_pipeline().diff(run_pipeline(answer_prefix="Lyon"))
    assert changes(diff) == [
        ("changed", "agent", ("output",)),
        ("changed", "agent > answer", ("output",)),
    ]
    answer = diff.changed[1].output
    assert answer is not None
    assert answer.changes[0].text is not None
    assert ("delete", "Paris") in answer.changes[0].text
    assert ("insert", "Lyon") in answer.changes[0].text
    assert diff.summary().startswith("2 outputs changed, wall time ")


def test_an_extra_retry() -> None:
    """The weather API times out once before answering: the failed attempt is the one
    added call; the attempt that answered matches the first run's only attempt."""
    diff = run_pipeline().diff(run_pipeline(retries=1))
    assert changes(diff) == [
        ("added", "agent > get_weather > weather_api #1", ()),
        ("changed", "agent > get_weather > weather_api #2", ("inputs",)),
    ]
    assert diff.summary().startswith("+1 call, 1 new error, 1 input changed, wall time ")


def test_a_removed_tool_call() -> None:
    """The search tool is not called: one removed call, and what used its result changed."""
    diff = run_pipeline().diff(run_pipeline(use_search=False))
    assert changes(diff) == [
        ("changed", "agent", ("output",)),
        ("removed", "agent > search", ()),
        ("changed", "agent > summarize", ("inputs", "output")),
        ("changed", "agent > answer", ("inputs", "output")),
    ]
    assert diff.summary().startswith("-1 call, 2 inputs changed, 3 outputs changed, ")


def test_a_slower_call() -> None:
    """The search sleeps 150 ms more: reported on the call and in the wall time, yet the
    runs are equal (timing never makes runs differ)."""
    diff = run_pipeline().diff(run_pipeline(search_ms=150))
    search = next(c for c in diff if c.name == "search")
    before, after = search.latency_ms
    assert before is not None and after is not None and after >= 150
    assert search.latency_delta_ms == after - before
    assert diff.equal
    wall = diff.summary().split("wall time ")[1]
    assert wall.startswith("+") and (" ms (+" in wall or " times as long)" in wall)


def test_a_new_error() -> None:
    """The summary raises (the agent carries on without it): a new error on that call."""
    diff = run_pipeline().diff(run_pipeline(fail_summary=True))
    assert changes(diff) == [
        ("changed", "agent", ("output",)),
        ("changed", "agent > summarize", ("status", "error", "output")),
        ("changed", "agent > answer", ("inputs", "output")),
    ]
    assert diff.summary().startswith("1 new error, 1 input changed, 3 outputs changed, ")


def test_saved_runs_diff_like_live_ones(tmp_path: object) -> None:
    """A run saved to JSON and loaded back diffs exactly as the live one does."""
    from pathlib import Path

    folder = Path(str(tmp_path))
    before, after = run_pipeline(), run_pipeline(retries=1)
    before.save(folder / "a.json")
    after.save(folder / "b.json")
    loaded = TraceResult.load(folder / "a.json").diff(TraceResult.load(folder / "b.json"))
    assert changes(loaded) == changes(before.diff(after))


@pytest.mark.slow
def test_two_seeds_of_the_demo_agent() -> None:
    """Seed 4's weather answers at once (21 C, clear); seed 5's times out first (23 C,
    rainy): the extra attempt is added, and the weather and the final answer changed."""
    assert (Weather.from_seed(4), Weather.from_seed(5)) == (
        Weather(0, 21, "clear"),
        Weather(1, 23, "rainy"),
    )
    diff = run_demo(seed=4).diff(run_demo(seed=5))
    found = changes(diff)
    assert [c for c in found if c[0] != "changed"] == [
        ("added", "research_agent > get_weather > weather_api #1", ())
    ]
    changed = {path: fields for kind, path, fields in found if kind == "changed"}
    assert changed["research_agent > get_weather > weather_api #2"] == ("inputs", "output")
    assert "output" in changed["research_agent > chat.completions.create #2"]
    assert "inputs" in changed["research_agent > chat.completions.create #2"]
    [answer] = [c for c in diff if c.path[-1] == "chat.completions.create #2"]
    assert answer.output is not None
    message = next(c for c in answer.output.changes if c.path == "choices[0].message.content")
    assert message.text is not None and ("insert", "23") in message.text
    assert diff.summary().startswith("+1 call, 1 new error, ")


@pytest.mark.slow
def test_the_same_seed_twice_is_equal() -> None:
    """Seeded runs are reproducible: the same seed gives equal runs."""
    assert run_demo(seed=5).diff(run_demo(seed=5)).equal
