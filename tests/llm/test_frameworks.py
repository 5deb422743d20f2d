"""Agent frameworks as people run them, against the fake server: pydantic-ai, openai-agents
(OpenInference), LangChain (OpenInference) — each read right.

``scenarios/framework_app.py`` runs one agent with one tool under
``flow-xray run --json --otlp-json`` in a fresh interpreter. The tree must have
the framework's agent, model and tool calls with their kinds, the tool under
the call that made it, the conversation readable (tool call and tool result
turns, the system prompt), the tokens as billed — in flow-xray and in the
exported OTLP — and an agent's aggregated usage shown, not added again.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn

import pytest

from flow_xray.formats.otlp_json import read_otlp_json
from flow_xray.formats.registry import load_trace
from flow_xray.llm.messages import chat_view
from flow_xray.tree.model import TraceNode, TraceResult
from tests.llm.fake_llm import FakeLLM
from tests.llm.harness import ROOT

pytestmark = pytest.mark.slow
APP = Path(__file__).parent / "scenarios" / "framework_app.py"
NEEDS = {
    "pydantic-ai": ("pydantic_ai",),
    "openai-agents": ("agents", "openinference.instrumentation.openai_agents"),
    "langchain": (
        "langchain_core",
        "langchain_openai",
        "openinference.instrumentation.langchain",
    ),
}


class Run:
    """One framework run: its trace, the spans it exported, what the server billed."""

    def __init__(self, result: TraceResult, otlp: Path, billed: tuple[int, int]) -> None:
        self.result, self.otlp, self.billed = result, otlp, billed

    def kinds(self) -> dict[str, str]:
        return {node.name: node.kind for node in self.result}

    def named(self, name: str) -> list[TraceNode]:
        return [node for node in self.result if node.name == name]


_runs: dict[str, Run] = {}


@pytest.fixture
def framework(
    fake_llm: FakeLLM,
    tmp_path_factory: pytest.TempPathFactory,
    e2e_missing: Callable[[str], NoReturn],
) -> Callable[[str], Run]:
    def run(name: str) -> Run:
        for module in ("openai", *NEEDS[name]):
            if importlib.util.find_spec(module) is None:
                e2e_missing(f"{module} is not installed (pip install -e '.[test,e2e]')")
        if name not in _runs:
            fake_llm.reset()
            folder = tmp_path_factory.mktemp(name)
            env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "FX_"))}
            env.update(FAKE_LLM_URL=fake_llm.url, FX_FRAMEWORK=name, PYTHONPATH=str(ROOT))
            out, otlp = folder / "trace.json", folder / "spans.jsonl"
            command = [sys.executable, "-m", "flow_xray", "run", "--quiet", "--json", str(out)]
            command += ["--otlp-json", str(otlp), "--html", str(folder / "t.html"), str(APP)]
            done = subprocess.run(
                command, cwd=folder, env=env, capture_output=True, text=True, timeout=180
            )
            assert done.returncode == 0, done.stderr[-3000:]
            assert done.stdout.strip() == "The answer is forty two, as computed."
            _runs[name] = Run(load_trace(out), otlp, fake_llm.billed())
        return _runs[name]

    return run


@pytest.mark.parametrize("name", list(NEEDS))
def test_tokens_are_the_bill_in_flow_xray_and_on_the_wire(
    framework: Callable[[str], Run], name: str
) -> None:
    """Two model calls; the totals and the exported spans' token attributes are the bill."""
    run = framework(name)
    billed_in, billed_out = run.billed
    totals = run.result.totals
    assert (totals.prompt_tokens, totals.completion_tokens) == (billed_in, billed_out)
    assert totals.errors == 0
    records = read_otlp_json(run.otlp)
    for key, billed in (
        ("llm.token_count.prompt", billed_in),
        ("gen_ai.usage.output_tokens", billed_out),
    ):
        assert sum(int(r.attributes.get(key, 0)) for r in records) == billed, key


def test_pydantic_ai_spans_read_as_agent_model_and_tool_calls(
    framework: Callable[[str], Run],
) -> None:
    """``invoke_agent`` is an agent, ``chat`` an llm call, ``execute_tool`` a tool with the
    arguments as inputs and the result as output; no span is a bare ``span``."""
    run = framework("pydantic-ai")
    kinds = run.kinds()
    assert kinds["invoke_agent weather"] == "agent"
    assert kinds["chat gpt-4o-mini"] == "llm"
    assert kinds["execute_tool get_weather"] == "tool"
    assert "span" not in kinds.values()
    (tool,) = run.named("execute_tool get_weather")
    assert tool.inputs == {"city": "Paris"}
    assert tool.output == "sunny in Paris"


def test_pydantic_ai_conversation_has_its_tool_turns_and_system_prompt(
    framework: Callable[[str], Run],
) -> None:
    """The second model call's conversation: system prompt, question, the tool call, the
    tool's result, and the answer — no turn without text or a call."""
    run = framework("pydantic-ai")
    second = run.named("chat gpt-4o-mini")[1]
    view = chat_view(second.inputs, second.output, second.attributes)
    assert view is not None
    turns = view["messages"]
    assert turns[0] == {"role": "system", "content": "Answer briefly."}
    assert turns[1]["content"] == "What is the weather in Paris?"
    (call,) = turns[2]["tool_calls"]
    assert (call["name"], call["id"]) == ("get_weather", "call_fake1")
    assert turns[3]["content"] == "sunny in Paris" and turns[3]["tool_call_id"] == "call_fake1"
    assert view["response"][0]["content"] == "The answer is forty two, as computed."
    assert all(t.get("content") or t.get("tool_calls") for t in turns)


def test_pydantic_ai_aggregated_usage_is_shown_not_added(framework: Callable[[str], Run]) -> None:
    """The agent run's ``gen_ai.aggregated_usage.*`` stays visible on its node and out of
    the totals (which are the two model calls')."""
    run = framework("pydantic-ai")
    (agent,) = run.named("invoke_agent weather")
    billed_in, billed_out = run.billed
    assert agent.attributes["gen_ai.aggregated_usage.input_tokens"] == billed_in
    assert agent.attributes["gen_ai.aggregated_usage.output_tokens"] == billed_out
    assert run.result.totals.total_tokens == billed_in + billed_out


def test_openai_agents_tool_runs_under_the_turn_that_asked_for_it(
    framework: Callable[[str], Run],
) -> None:
    """Agent > turn > (generation asking for the tool, the tool); the next turn answers."""
    run = framework("openai-agents")
    (tool,) = run.named("get_weather")
    parent = next(n for n in run.result if tool in n.children)
    assert parent.name == "turn"
    assert [c.name for c in parent.children] == ["generation", "get_weather"]
    assert tool.kind == "tool" and tool.inputs == {"city": "Paris"}
    kinds = run.kinds()
    assert (kinds["weather"], kinds["generation"]) == ("agent", "llm")


def test_langchain_traced_tool_hangs_under_langchains_tool_span(
    framework: Callable[[str], Run],
) -> None:
    """The ``@trace(kind="tool")`` function LangChain calls is under OpenInference's tool span
    (LangChain never makes its runs the current context), inside the chain's run."""
    run = framework("langchain")
    ours = next(n for n in run.named("lookup_weather") if "otel.scope.name" not in n.attributes)
    theirs = next(n for n in run.named("lookup_weather") if n is not ours)
    assert ours in theirs.children
    chain = next(n for n in run.result if theirs in n.children)
    assert chain.name == "weather_agent"
    assert [c.name for c in chain.children] == ["ChatOpenAI", "lookup_weather", "ChatOpenAI"]


def test_langchain_conversation_reads_as_chat_turns(framework: Callable[[str], Run]) -> None:
    """LangChain's serialised messages give way to the OpenInference messages: chat turns."""
    run = framework("langchain")
    first, second = run.named("ChatOpenAI")
    assert first.inputs["messages"] == [
        {"role": "user", "content": "What is the weather in Paris?"}
    ]
    view = chat_view(second.inputs, second.output, second.attributes)
    assert view is not None
    assert view["messages"][1]["tool_calls"][0]["name"] == "lookup_weather"
    assert view["response"][0]["content"] == "The answer is forty two, as computed."
