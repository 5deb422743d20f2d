"""0.2.0's tracing API (``flow_xray.trace``), used as its README and docstrings show."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from flow_xray import TraceNode, TraceResult, trace
from flow_xray.render.payload import read_page


@trace
def step_a(x: int) -> int:
    return x + 1


@trace
def pipeline(x: int) -> int:
    return step_a(x) * 2


class Agent:
    @trace
    def plan(self, goal: str) -> str:
        return f"plan for {goal}"


def test_readme_decorator_and_run() -> None:
    """The README's example: ``trace.run(pipeline, 5)`` gives the DAG and the return value."""
    result = trace.run(pipeline, 5)
    assert result.return_value == 12
    assert [n.name for n in result] == ["pipeline", "step_a"]
    assert result.roots[0].inputs == {"x": 5}


def test_default_span_name_is_the_qualname() -> None:
    """A method's node is named by its ``__qualname__``, as in 0.2.0."""
    result = trace.run(Agent().plan, "tea")
    assert result.roots[0].name == "Agent.plan"


def test_to_html_writes_the_page(tmp_path: Path) -> None:
    """``result.to_html("trace.html")``; the default title contains "flow-xray trace"."""
    path = tmp_path / "trace.html"
    trace.run(pipeline, 1).to_html(str(path))
    assert "<title>flow-xray trace</title>" in path.read_text(encoding="utf-8")


def test_meta_records_tokens_model_cost_and_user_keys() -> None:
    """``trace.meta(model=..., prompt_tokens=..., completion_tokens=..., k=v)`` as documented."""

    @trace
    def call_llm(prompt: str) -> str:
        trace.meta(model="gpt-4o-mini", prompt_tokens=100, completion_tokens=20, user="u-1")
        return "answer"

    node = trace.run(call_llm, "hi").roots[0]
    assert (node.meta["model"], node.meta["prompt_tokens"]) == ("gpt-4o-mini", 100)
    assert (node.meta["completion_tokens"], node.meta["total_tokens"]) == (20, 120)
    assert node.meta["estimated_cost_usd"] > 0
    assert node.meta["user"] == "u-1"


def test_meta_outside_a_trace_does_nothing() -> None:
    """As in 0.2.0, ``trace.meta`` with no traced call running is a no-op."""
    trace.meta(model="m", prompt_tokens=1, completion_tokens=1, note="x")


def test_capture_context_manager_gives_roots() -> None:
    """``with trace.capture() as session:`` then ``TraceResult(session.roots)``."""
    with trace.capture() as session:
        pipeline(2)
    result = TraceResult(session.roots)
    assert [n.name for n in result] == ["pipeline", "step_a"]


def test_trace_result_return_value_form() -> None:
    """``TraceResult(roots, return_value=...)`` and ``.return_value`` (alias of ``.value``)."""
    result = TraceResult([], return_value=42)
    assert (result.return_value, result.value) == (42, 42)
    with pytest.raises(TypeError, match="value and return_value"):
        TraceResult([], value=1, return_value=2)


def test_trace_node_positional_form_of_0_2_0() -> None:
    """``TraceNode(name, node_id, inputs, output, error, start_ms, latency_ms)`` lands right."""
    node = TraceNode("fetch", "t1", {"url": "x"}, "body", None, 1.0, 2.5)
    assert (node.name, node.id, node.node_id, node.inputs) == ("fetch", "t1", "t1", {"url": "x"})
    assert (node.output, node.error, node.start_ms, node.latency_ms) == ("body", None, 1.0, 2.5)


def test_trace_node_keyword_form_of_0_2_0() -> None:
    """``TraceNode(name=..., node_id=..., inputs=..., meta=...)``; ``node_id`` is the id."""
    node = TraceNode(name="f", node_id="t9", inputs={}, meta={"model": "m"})
    assert (node.id, node.node_id, node.meta) == ("t9", "t9", {"model": "m"})


def test_trace_node_never_silently_misassigns() -> None:
    """Two values for one field, or too many positions, are TypeErrors (0.3.x's ``kind`` and
    ``tags`` after ``meta`` are the 10th and 11th positions)."""
    with pytest.raises(TypeError, match="both"):
        TraceNode("f", "t1", name="g")
    with pytest.raises(TypeError, match="both"):
        TraceNode(name="f", id="a", node_id="b")
    with pytest.raises(TypeError, match="positional"):
        TraceNode("f", "t1", {}, None, None, 0.0, 0.0, [], {}, "tool", {}, "extra")


def test_to_dict_omits_empty_meta() -> None:
    """Nodes without metadata have no ``meta`` key in ``to_dict()``, as in 0.2.0."""
    data = trace.run(pipeline, 1).to_dict()
    assert "meta" not in data["nodes"][0]
    node = data["nodes"][0]
    assert {"id", "name", "inputs", "output", "error", "latency_ms", "children"} <= set(node)
    assert TraceResult.from_dict(data).roots[0].meta == {}


def test_flow_xray_run_0_2_0_line(tmp_path: Path) -> None:
    """``flow-xray run my_agent.py --html trace.html`` writes trace.html with the calls."""
    script = tmp_path / "my_agent.py"
    script.write_text(
        "from flow_xray import trace\n@trace\ndef agent(q):\n    return q.upper()\nagent('hi')\n",
        encoding="utf-8",
    )
    done = subprocess.run(
        [sys.executable, "-m", "flow_xray", "run", str(script), "--html", "trace.html"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    page = (tmp_path / "trace.html").read_text(encoding="utf-8")
    names = [row["name"] for row in read_page(page)["nodes"]]
    assert "agent" in names and "flow-xray trace" in page
    assert "flow-xray: wrote trace.html" in done.stderr


def test_a_0_2_0_file_with_an_error_counts_it() -> None:
    """A 0.2.0 node has ``error`` and no ``status``: loaded, it is a failure in the totals."""
    data = {
        "nodes": [
            {
                "id": "a",
                "name": "agent",
                "inputs": {},
                "output": None,
                "error": None,
                "latency_ms": 5.0,
                "children": [
                    {
                        "id": "b",
                        "name": "tool",
                        "inputs": {},
                        "output": None,
                        "error": "ValueError: bad",
                        "latency_ms": 1.0,
                        "children": [],
                    },
                ],
            },
        ]
    }
    result = TraceResult.from_dict(data)
    assert [n.status for n in result] == ["ok", "error"]
    assert result.totals.errors == 1
