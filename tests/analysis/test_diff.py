"""Run diffs on plain data: structural matching, per-call changes, the summary line."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings, strategies as st

from flow_xray import TraceResult
from flow_xray.analysis.diff import diff_traces
from flow_xray.analysis.diff.align import ALIGN_CELLS, _name_alignment


def call(name: str, *children: dict[str, Any], **fields: Any) -> dict[str, Any]:
    """A node of a trace's JSON form: 10 ms by default, ok, no data."""
    return {"name": name, "latency_ms": 10.0, "children": list(children), **fields}


def run(*roots: dict[str, Any]) -> TraceResult:
    return TraceResult.from_dict({"nodes": list(roots)})


def agent(*children: dict[str, Any], latency: float = 100.0) -> TraceResult:
    return run(call("agent", *children, latency_ms=latency, output="done"))


def llm(answer: str, tokens: int = 100, cost: float = 0.001, **fields: Any) -> dict[str, Any]:
    meta = {"model": "gpt-4o-mini", "total_tokens": tokens, "estimated_cost_usd": cost}
    return call("llm", output=answer, meta=meta, kind="llm", **fields)


def tool(name: str, output: Any = "ok", **fields: Any) -> dict[str, Any]:
    return call(name, output=output, kind="tool", **fields)


def failed(name: str, error: str = "TimeoutError: slow") -> dict[str, Any]:
    return call(name, status="error", error=error, kind="tool")


def test_identical_runs_are_equal() -> None:
    """Two runs with the same calls and data are equal, and the summary says so."""
    a = agent(llm("hi"), tool("search"))
    diff = diff_traces(a, agent(llm("hi"), tool("search")))
    assert diff.equal
    assert diff.summary() == "no differences in 3 calls, wall time +0.0 ms (+0%)"


def test_a_changed_output_is_a_changed_call_with_a_text_diff() -> None:
    """An LLM answer that changed is one changed call, with a word-level diff of the text."""
    diff = diff_traces(agent(llm("Paris is sunny")), agent(llm("Paris is rainy")))
    [changed] = diff.changed
    assert (changed.path, changed.fields) == (("agent", "llm"), ("output",))
    assert changed.output is not None
    [text] = changed.output.changes
    assert text.text == (("equal", "Paris is "), ("delete", "sunny"), ("insert", "rainy"))
    assert diff.summary().startswith("1 output changed, wall time")


def test_an_extra_retry_is_one_added_call_the_failed_attempt() -> None:
    """The second run retried a tool after a timeout: the failed attempt is the added call,
    and the attempt that succeeded is matched with the first run's only attempt."""
    before = agent(call("get_weather", tool("weather_api", output={"temp": 21})))
    after = agent(
        call("get_weather", failed("weather_api"), tool("weather_api", output={"temp": 21}))
    )
    diff = diff_traces(before, after)
    [added] = diff.added
    assert added.path == ("agent", "get_weather", "weather_api #1")
    assert added.after is not None and added.after.status == "error"
    matched = [c for c in diff if c.path[-1] == "weather_api #2"]
    assert [c.change for c in matched] == ["same"]
    assert diff.summary().startswith("+1 call, 1 new error, wall time")


def test_a_removed_tool_call_is_removed_with_its_subtree() -> None:
    """A tool call missing from the second run is removed, with every call under it."""
    search = call("search", call("http_get"), call("parse"), kind="tool")
    before = agent(search, llm("hi"))
    diff = diff_traces(before, agent(llm("hi")))
    assert [c.path for c in diff.removed] == [
        ("agent", "search"),
        ("agent", "search", "http_get"),
        ("agent", "search", "parse"),
    ]
    assert diff.summary().startswith("-3 calls, ")
    assert diff.report() == ["- agent > search: removed (3 calls)"]


def test_a_slower_call_is_reported_but_not_a_difference() -> None:
    """Latency moves between runs: it is reported per call and in the summary, and two runs
    that differ only in timing are still equal."""
    before = agent(tool("search", latency_ms=40.0), latency=200.0)
    after = agent(tool("search", latency_ms=380.0), latency=540.0)
    diff = diff_traces(before, after)
    search = next(c for c in diff if c.name == "search")
    assert (search.change, search.latency_delta_ms) == ("same", 340.0)
    assert diff.equal
    assert diff.summary() == "no differences in 2 calls, wall time +340 ms (+170%)"


def test_a_new_error_is_a_status_change() -> None:
    """A call that succeeded before and raises now: status and error changed, a new error."""
    diff = diff_traces(agent(tool("search")), agent(failed("search", "ValueError: bad query")))
    [changed] = diff.changed
    assert changed.fields == ("status", "error", "output")
    assert diff.report()[0] == (
        "~ agent > search: status ok -> error (ValueError), output changed, latency +0.0 ms (+0%)"
    )
    assert diff.summary().startswith("1 new error, 1 output changed")


def test_a_changed_error_type_is_named() -> None:
    """Failing before and after with another exception: the line names both types."""
    diff = diff_traces(
        agent(failed("search", "ValueError: bad query")), agent(failed("search", "KeyError: 'q'"))
    )
    assert diff.report()[0].startswith(
        "~ agent > search: error type changed: ValueError -> KeyError"
    )
    assert diff.summary().startswith("1 error type changed")


def test_the_same_error_type_with_another_message_is_a_message_change() -> None:
    """Same exception type, other text: worded as a changed message, not a changed type."""
    diff = diff_traces(
        agent(failed("search", "ValueError: bad query")), agent(failed("search", "ValueError: x"))
    )
    assert diff.report()[0].startswith("~ agent > search: error message changed")
    assert diff.summary().startswith("1 error message changed")


def test_an_error_that_went_away_is_said_to_be_gone() -> None:
    """Failing before, succeeding now: the line says the error is gone and what it was."""
    diff = diff_traces(agent(failed("search", "TimeoutError: slow")), agent(tool("search")))
    assert diff.report()[0].startswith(
        "~ agent > search: error gone (was TimeoutError), status now ok"
    )
    assert diff.summary().startswith("1 error gone")


def test_calls_are_never_matched_by_span_id() -> None:
    """Span ids differ between runs (and here are even swapped): matching goes by name."""
    before = agent(tool("a", id="x1", span_id="1"), tool("b", id="x2", span_id="2"))
    after = agent(tool("a", id="x2", span_id="2"), tool("b", id="x1", span_id="1"))
    diff = diff_traces(before, after)
    assert diff.equal
    assert [(c.before.name, c.after.name) for c in diff if c.before and c.after] == [
        ("agent", "agent"),
        ("a", "a"),
        ("b", "b"),
    ]


def test_same_name_siblings_match_in_order() -> None:
    """Three ``llm`` calls in both runs match first to first, second to second."""
    before = agent(llm("one"), llm("two"), llm("three"))
    after = agent(llm("one"), llm("TWO"), llm("three"))
    diff = diff_traces(before, after)
    assert [c.path[-1] for c in diff.changed] == ["llm #2"]


def test_inputs_get_a_key_level_diff() -> None:
    """An inserted chat message is one added item, not every later message changed."""
    messages = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}]
    inserted = [messages[0], {"role": "user", "content": "context"}, messages[1]]
    diff = diff_traces(
        agent(llm("x", inputs={"messages": messages, "temperature": 0})),
        agent(llm("x", inputs={"messages": inserted, "temperature": 0.7})),
    )
    [changed] = diff.changed
    assert changed.inputs is not None
    assert [(c.path, c.change) for c in changed.inputs.changes] == [
        ("messages[1]", "added"),
        ("temperature", "changed"),
    ]


def test_tokens_and_cost_changes_are_differences() -> None:
    """More tokens (and so more cost) on the same answer is a change, summed in the summary."""
    diff = diff_traces(agent(llm("x", 100, 0.001)), agent(llm("x", 130, 0.0013)))
    [changed] = diff.changed
    assert changed.fields == ("tokens", "cost")
    summary = diff.summary()
    assert summary == "1 other call changed, tokens +30, wall time +0.0 ms (+0%), cost +$0.0003"


def test_token_totals_appear_when_totals_differ() -> None:
    """The summary's token delta comes from the runs' totals."""
    before = agent(llm("x", 100, 0.001))
    after = agent(llm("x", 100, 0.001), llm("y", 50, 0.0005))
    assert diff_traces(before, after).summary() == (
        "+1 call, tokens +50, wall time +0.0 ms (+0%), cost +$0.0005"
    )


def test_deep_traces_do_not_recurse() -> None:
    """A chain 5,000 calls deep diffs without hitting the recursion limit."""

    def chain(depth: int, leaf: str) -> dict[str, Any]:
        node = call("leaf", output=leaf)
        for _ in range(depth):
            node = call("step", node)
        return node

    diff = diff_traces(run(chain(5000, "a")), run(chain(5000, "b")))
    assert len(diff.changed) == 1 and len(diff.changed[0].path) == 5001


def test_long_sibling_lists_align_by_name() -> None:
    """Past ALIGN_CELLS sibling pairs, names are aligned by difflib: one insert stays one."""
    n = int(ALIGN_CELLS**0.5) + 50
    before = [tool(f"t{i}") for i in range(n)]
    after = [*before[: n // 2], tool("inserted"), *before[n // 2 :]]
    diff = diff_traces(agent(*before), agent(*after))
    assert [c.path for c in diff.added] == [("agent", "inserted")]
    assert diff.removed == [] and diff.changed == []


def test_different_roots_are_added_and_removed() -> None:
    """Runs with a different root each: the first run's root removed, the second's added."""
    diff = diff_traces(run(call("job_a")), run(call("job_b")))
    assert [(c.change, c.name) for c in diff] == [("removed", "job_a"), ("added", "job_b")]


def test_to_dict_rows_point_at_both_traces() -> None:
    """Each aligned row gives the call's pre-order index in each run (-1 when absent)."""
    before = agent(tool("search"), llm("x"))
    after = agent(failed("check"), tool("search"), llm("y"))
    data = diff_traces(before, after).to_dict()
    rows = [(r["change"], r["name"], r["a"], r["b"], r["parent"]) for r in data["calls"]]
    assert rows == [
        ("same", "agent", 0, 0, -1),
        ("added", "check", -1, 1, 0),
        ("same", "search", 1, 2, 0),
        ("changed", "llm", 2, 3, 0),
    ]
    assert data["counts"] == {"same": 2, "changed": 1, "added": 1, "removed": 0}
    assert [n["name"] for n in data["after"]["nodes"][0]["children"]] == ["check", "search", "llm"]


def lcs_length(a: list[str], b: list[str]) -> int:
    row = [0] * (len(b) + 1)
    for x in a:
        prev = 0
        for j, y in enumerate(b, 1):
            prev, row[j] = row[j], prev + 1 if x == y else max(row[j], row[j - 1])
    return row[-1]


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from("abc"), max_size=40), st.lists(st.sampled_from("abc"), max_size=40))
def test_name_alignment_is_a_longest_common_subsequence(a: list[str], b: list[str]) -> None:
    """The long-list alignment (Myers) keeps order, pairs only equal names, uses every call
    once and matches as many as the longest common subsequence has."""
    pairs = _name_alignment(a, b, range(len(a)), range(len(b)))
    assert [i for i, _ in pairs if i is not None] == list(range(len(a)))
    assert [j for _, j in pairs if j is not None] == list(range(len(b)))
    matched = [(i, j) for i, j in pairs if i is not None and j is not None]
    assert all(a[i] == b[j] for i, j in matched)
    assert len(matched) == lcs_length(a, b)


def test_retries_far_apart_in_a_long_list_are_the_failed_attempts() -> None:
    """A loop of 300 steps retried at steps 51 and 252: the changed middle is past
    ALIGN_CELLS, so names are aligned first, then each gap re-scored: the two added calls
    are the two failed attempts."""
    steps = [tool(f"step{i % 3}", output=i) for i in range(300)]
    retried = [*steps[:51], failed("step0"), *steps[51:252], failed("step0"), *steps[252:]]
    assert steps[51]["name"] == steps[252]["name"] == "step0"
    assert ALIGN_CELLS < 200 * 202
    diff = diff_traces(agent(*steps), agent(*retried))
    assert [(c.after.status, c.after.error) for c in diff.added if c.after] == [
        ("error", "TimeoutError: slow"),
        ("error", "TimeoutError: slow"),
    ]
    assert diff.changed == [] and diff.removed == []
