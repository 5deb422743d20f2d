"""`flow-xray demo` and the example pipeline behind it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from flow_xray.cli import cli
from flow_xray.examples import demo_agent
from flow_xray.tree.model import TraceResult


@pytest.fixture(scope="module")
def demo_trace() -> TraceResult:
    return demo_agent.run_demo()


def test_demo_writes_default_viewer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`flow-xray demo` writes flow_xray_demo.html in the working directory and says where."""
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["demo"], prog_name="flow-xray", catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert (tmp_path / "flow_xray_demo.html").exists()
    assert result.stderr.startswith("flow-xray: wrote flow_xray_demo.html — ")


@pytest.mark.slow
def test_demo_html_option(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`demo --html PATH` writes the viewer there instead."""
    monkeypatch.chdir(tmp_path)
    CliRunner().invoke(cli, ["demo", "--html", "d.html"], catch_exceptions=False)
    assert [p.name for p in tmp_path.iterdir()] == ["d.html"]


def test_demo_root_is_the_agent(demo_trace: TraceResult) -> None:
    """The demo trace has one root, the agent."""
    assert [(root.name, root.kind) for root in demo_trace.roots] == [("research_agent", "agent")]


def test_demo_covers_every_kind(demo_trace: TraceResult) -> None:
    """The pipeline shows agent, llm, tool, retriever and chain nodes."""
    assert {node.kind for node in demo_trace} == {"agent", "llm", "tool", "retriever", "chain"}


def test_demo_llm_calls_carry_usage_and_cost(demo_trace: TraceResult) -> None:
    """Each fake LLM call records the model, its tokens and a cost from the price table."""
    calls = demo_trace.find_all("chat.completions.create")
    assert len(calls) == 2
    for call in calls:
        assert call.meta["model"] == "gpt-4o-mini"
        assert (
            call.meta["total_tokens"] == call.meta["prompt_tokens"] + call.meta["completion_tokens"]
        )
        assert call.meta["estimated_cost_usd"] > 0


def test_demo_fans_out_three_async_calls(demo_trace: TraceResult) -> None:
    """gather_sources has three concurrent fetch_source children."""
    gather = demo_trace.find("gather_sources")
    assert gather is not None
    assert sorted(child.inputs["name"] for child in gather.children) == [
        "census",
        "encyclopedia",
        "news",
    ]
    starts = [child.start_ms for child in gather.children]
    ends = [child.start_ms + (child.latency_ms or 0.0) for child in gather.children]
    assert max(starts) < min(ends)  # they overlap: run at once, not one after another


def test_demo_retry_has_one_handled_error(demo_trace: TraceResult) -> None:
    """The first weather_api attempt is the trace's only error; the retry succeeds."""
    attempts = demo_trace.find_all("weather_api")
    assert [a.status for a in attempts] == ["error", "ok"]
    assert attempts[0].error is not None and attempts[0].error.startswith("TimeoutError")
    assert demo_trace.totals.errors == 1
    weather = demo_trace.find("get_weather")
    assert weather is not None and weather.status == "ok"


def test_demo_generator_step_spans_the_iteration(demo_trace: TraceResult) -> None:
    """stream_answer is one completed node under the agent."""
    stream = demo_trace.find("stream_answer")
    assert stream is not None
    assert (stream.status, stream.incomplete) == ("ok", False)


@pytest.mark.slow
def test_demo_is_deterministic(demo_trace: TraceResult) -> None:
    """Two runs give the same calls, inputs, outputs and token counts."""

    def shape(result: TraceResult) -> list[tuple[object, ...]]:
        return [(n.name, n.inputs, n.output, n.meta.get("total_tokens")) for n in result]

    assert shape(demo_agent.run_demo()) == shape(demo_trace)


@pytest.mark.slow
def test_demo_module_runs_as_a_script(tmp_path: Path) -> None:
    """`python -m flow_xray.examples.demo_agent OUT` writes the viewer to OUT."""
    proc = subprocess.run(
        [sys.executable, "-m", "flow_xray.examples.demo_agent", "out.html"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "out.html").exists()
    assert proc.stdout.startswith("wrote out.html — 14 calls, 1 error (handled), ")
