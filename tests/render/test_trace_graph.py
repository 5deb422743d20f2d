"""A trace's JSON form as flat rows, statuses, labels and DOT."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from test_graph import check_golden

from flow_xray.render.trace_graph import flatten_trace, format_ms, node_label, trace_to_dot
from flow_xray.tree.model import TraceNode, TraceResult


def fixed_trace() -> dict[str, Any]:
    """A small trace: an agent, an LLM call, a failing tool and a call that never ended."""
    llm = TraceNode(
        id="n_llm",
        name="plan",
        kind="llm",
        latency_ms=60.0,
        start_ms=2.0,
        meta={
            "model": "gpt-4o-mini",
            "prompt_tokens": 100,
            "completion_tokens": 20,
            "total_tokens": 120,
        },
    )
    tool = TraceNode(
        id="n_tool",
        name='search "web"',
        kind="tool",
        latency_ms=10.0,
        start_ms=70.0,
        status="error",
        error="ValueError: bad",
        inputs={"q": "x"},
    )
    hung = TraceNode(id="n_hung", name="stream", latency_ms=None, start_ms=85.0, incomplete=True)
    root = TraceNode(
        id="n_root",
        name="agent",
        kind="agent",
        latency_ms=100.0,
        start_ms=0.0,
        children=[llm, tool, hung],
    )
    return TraceResult(roots=[root]).to_dict()


def test_trace_to_dot_matches_golden() -> None:
    """The call tree's DOT text is exactly the golden file."""
    check_golden("trace.dot", trace_to_dot(fixed_trace()))


def test_flatten_is_pre_order_with_parent_indices() -> None:
    """Rows come in pre-order, each with its parent's row index and no children."""
    rows = flatten_trace(fixed_trace())
    assert [(r["name"], r["parent"]) for r in rows] == [
        ("agent", -1),
        ("plan", 0),
        ('search "web"', 0),
        ("stream", 0),
    ]
    assert all("children" not in r for r in rows)


def test_status_marks_errors_and_own_time_slow() -> None:
    """The failing call is error; a call whose own time is >= 20% of wall time is slow."""
    rows = flatten_trace(fixed_trace())
    # agent's own time: 100 - (60 covered by plan + 10 by the tool + 15 by the open call) = 15 ms.
    assert [r["view_status"] for r in rows] == ["ok", "slow", "error", "ok"]


def test_single_node_trace_has_nothing_slow() -> None:
    """With one call there is nothing to compare with, so it is ok."""
    data = {"nodes": [{"name": "only", "latency_ms": 5.0, "start_ms": 0.0, "children": []}]}
    assert [r["view_status"] for r in flatten_trace(data)] == ["ok"]


def test_labels_show_latency_tokens_and_never_ended() -> None:
    """Labels are the name, then latency and tokens; a call that never ended says so."""
    rows = flatten_trace(fixed_trace())
    assert [node_label(r) for r in rows[1:4:2]] == [
        "plan\n60.0 ms · 120 tok",
        "stream\nnever ended",
    ]


def test_label_of_a_null_name_is_a_question_mark() -> None:
    """A call whose name is null is labelled ``?``, as one without a name, not ``None``."""
    assert node_label({"name": None, "latency_ms": 1.0}) == "?\n1.00 ms"


@pytest.mark.parametrize(
    ("ms", "text"), [(0.4234, "0.42 ms"), (12.5, "12.5 ms"), (1234.0, "1.23 s")]
)
def test_format_ms(ms: float, text: str) -> None:
    """Latency reads in ms below a second and in seconds above."""
    assert format_ms(ms) == text


def test_flatten_survives_deep_traces() -> None:
    """A chain deeper than the recursion limit flattens (the walk is iterative)."""
    node: dict[str, Any] = {"name": "leaf", "children": []}
    for depth in range(5000):
        node = {"name": f"d{depth}", "latency_ms": 1.0, "start_ms": 0.0, "children": [node]}
    assert len(flatten_trace({"nodes": [node]})) == 5001


def test_graphviz_accepts_the_trace_dot(tmp_path: Path) -> None:
    """Graphviz ``dot -Tsvg`` reads a trace's DOT without a warning."""
    dot = shutil.which("dot")
    if dot is None:
        pytest.skip("graphviz 'dot' is not installed")
    done = subprocess.run(
        [dot, "-Tsvg"],
        input=trace_to_dot(fixed_trace()),
        capture_output=True,
        text=True,
        check=False,
    )
    assert (done.returncode, done.stderr) == (0, "")
