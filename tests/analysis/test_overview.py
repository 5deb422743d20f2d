"""analysis/overview.py: what the viewer's overview lists, from flat rows of built trees."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings, strategies as st

from flow_xray import TraceResult
from flow_xray.analysis.overview import overview
from flow_xray.render.trace_graph import flatten_trace


def call(
    name: str, start: float, latency: float, *children: dict[str, Any], **fields: Any
) -> dict[str, Any]:
    return {
        "name": name,
        "start_ms": start,
        "latency_ms": latency,
        "children": list(children),
        **fields,
    }


def rows_of(*roots: dict[str, Any]) -> list[dict[str, Any]]:
    # Through TraceResult, so the accounting fields (error_origin, usage_counted...) are set.
    return flatten_trace(TraceResult.from_dict({"version": 1, "nodes": list(roots)}).to_dict())


def names(rows: list[dict[str, Any]], indices: list[int]) -> list[str]:
    return [rows[i]["name"] for i in indices]


def test_critical_path_is_the_chain_to_the_call_that_ends_last() -> None:
    """Root to leaf, through the child each call waited for at its end: plan and the three
    parallel tools ended before answer did, so they are off the chain."""
    rows = rows_of(
        call(
            "agent",
            0,
            100,
            call("plan", 0, 10),
            call("fast", 10, 5),
            call("slow", 10, 60),
            call("mid", 11, 30),
            call("answer", 70, 30, call("format", 90, 9)),
        )
    )
    assert names(rows, overview(rows)["critical"]) == ["agent", "answer", "format"]


def test_self_time_ranks_own_time_not_latency() -> None:
    rows = rows_of(
        call("root", 0, 100, call("wrapper", 0, 90, call("leaf", 0, 20)), call("solo", 90, 10))
    )
    assert names(rows, overview(rows)["self_time"])[:2] == ["wrapper", "leaf"]


def test_failures_root_cause_first_and_the_page_opens_on_the_unhandled_one() -> None:
    err = {"status": "error"}
    rows = rows_of(
        call(
            "agent",
            0,
            100,
            call(
                "retry",
                0,
                20,
                call("ask", 0, 5, error="RateLimitError: 429", **err),
                call("ask", 6, 10),
            ),
            call(
                "report",
                30,
                60,
                call("cell", 40, 1, error="ValueError: n/a", **err),
                error="ValueError: n/a",
                **err,
            ),
            error="ValueError: n/a",
            **err,
        )
    )
    ov = overview(rows)
    assert [(rows[e["row"]]["name"], e["handled"]) for e in ov["errors"]] == [
        ("cell", False),
        ("ask", True),
    ]
    assert names(rows, ov["errors"][0]["passed"]) == ["report", "agent"]
    assert rows[ov["errors"][1]["handled_by"]]["name"] == "retry"
    assert rows[ov["first"]]["name"] == "cell"
    assert [(rows[g["rows"][0]]["name"], g["count"], g["failed"]) for g in ov["repeated"]] == [
        ("ask", 2, 1)
    ]


def test_a_handled_retry_is_not_where_the_page_opens() -> None:
    rows = rows_of(
        call("agent", 0, 30, call("ask", 0, 5, status="error", error="E: x"), call("ask", 6, 10))
    )
    assert overview(rows)["first"] == 0


def test_llm_usage_counts_each_request_once() -> None:
    usage = {
        "model": "gpt-4o",
        "prompt_tokens": 100,
        "completion_tokens": 10,
        "estimated_cost_usd": 0.002,
    }
    small = {
        "model": "gpt-4o-mini",
        "prompt_tokens": 50,
        "completion_tokens": 5,
        "estimated_cost_usd": 0.0001,
    }
    # The wrapper reports the same request as its child: counted once, at the child.
    rows = rows_of(
        call(
            "agent",
            0,
            50,
            call("wrap", 0, 20, call("create", 1, 18, meta=usage), meta=usage),
            call("mini", 30, 5, meta=small),
        )
    )
    ov = overview(rows)
    assert names(rows, ov["llm"]) == ["create", "mini"]
    assert [(m["model"], m["calls"], m["total_tokens"]) for m in ov["models"]] == [
        ("gpt-4o", 1, 110),
        ("gpt-4o-mini", 1, 55),
    ]


def _repeated_by_definition(columns: dict[str, list[Any]]) -> list[dict[str, Any]]:
    """The repeated calls as defined: per parent, its children grouped by name (as text);
    groups of 3+ calls, or of 2 with a failure; the 10 with the most total latency (numbers
    only), most first, in the order found when equal."""
    kids: dict[int, list[int]] = {}
    for row, parent in enumerate(columns["parent"]):
        if parent >= 0:
            kids.setdefault(parent, []).append(row)
    found = []
    for parent in sorted(kids):
        groups: dict[str, list[int]] = {}
        for c in kids[parent]:
            groups.setdefault(str(columns["name"][c]), []).append(c)
        for group in groups.values():
            failed = sum(1 for c in group if columns["status"][c] == "error")
            if len(group) >= 3 or (len(group) == 2 and failed):
                times = [columns["latency_ms"][c] for c in group]
                total = sum(
                    float(t) for t in times if isinstance(t, (int, float)) and type(t) is not bool
                )
                found.append(
                    {"parent": parent, "rows": group, "count": len(group), "failed": failed,
                     "total_ms": total}
                )  # fmt: skip
    found.sort(key=lambda g: -g["total_ms"])
    return found[:10]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(0, 6),  # parent: one of the rows before it, or none
            st.sampled_from(["a", "b", "c", None, 1]),
            st.sampled_from(["ok", "error"]),
            st.one_of(st.floats(-1e3, 1e3), st.sampled_from([None, 2, True, -0.0, "3"])),
        ),
        max_size=60,
    )
)
def test_repeated_calls_are_as_defined(calls: list[tuple[int, Any, str, Any]]) -> None:
    """Whatever the names, statuses and times (floats, ints, None, text), the groups listed
    are those of the definition, with the same counts and totals."""
    columns: dict[str, list[Any]] = {"parent": [], "name": [], "status": [], "latency_ms": []}
    for row, (back, name, status, latency) in enumerate(calls):
        columns["parent"].append(row - 1 - back if back < row else -1)
        columns["name"].append(name)
        columns["status"].append(status)
        columns["latency_ms"].append(latency)
    got = overview(columns)["repeated"]
    assert got == _repeated_by_definition(columns)
