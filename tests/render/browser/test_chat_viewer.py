"""LLM calls read as conversations, in headless Chromium, from real clients against a fake server.

The real ``openai`` and ``anthropic`` clients talk to the LLM tests' fake server; the calls are
traced by ``@trace(kind="llm")`` and by OpenInference's real OpenAI instrumentor, captured,
rendered and opened in the browser.
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from viewer_page import Loaded

from flow_xray.render.trace_page import trace_to_html
from tests.llm.fake_llm import REPLY, FakeLLM, RunningServer

pytestmark = pytest.mark.e2e

GPT = "gpt-4o-mini"
CLAUDE = "claude-3-5-haiku-20241022"
NOTES = "Day one: the Louvre opens at nine, the Orsay at half past. " * 40  # ~2,400 characters


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeLLM]:
    """The fake OpenAI / Anthropic server on 127.0.0.1."""
    running = RunningServer()
    yield running.fake
    running.stop()


def weather_call() -> dict[str, Any]:
    """An OpenAI assistant message asking for a tool."""
    arguments = json.dumps({"city": "Paris", "when": "tomorrow"})
    function = {"name": "get_weather", "arguments": arguments}
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "call_w1", "type": "function", "function": function}],
    }


def agent_run(fake: FakeLLM) -> dict[str, Any]:
    """Three LLM calls: OpenAI and Anthropic through ``@trace(kind="llm")``, then OpenAI
    through the OpenInference instrumentor; the trace's JSON form."""
    import anthropic
    import openai
    from openinference.instrumentation.openai import OpenAIInstrumentor

    from flow_xray import trace

    def gpt() -> Any:
        return openai.OpenAI(base_url=fake.openai_url, api_key="sk-test", max_retries=0)

    @trace(kind="llm")
    def ask_gpt(
        messages: list[Any], model: str = GPT, temperature: float = 0.2, max_tokens: int = 300
    ) -> Any:
        with gpt() as client:  # (closed: no pooled connection left for the collector)
            return client.chat.completions.create(
                model=model, messages=messages, temperature=temperature, max_tokens=max_tokens
            )

    @trace(kind="llm")
    def ask_claude(messages: list[Any], system: str, max_tokens: int = 256) -> Any:
        with anthropic.Anthropic(
            base_url=fake.anthropic_url, api_key="sk-ant-test", max_retries=0
        ) as client:
            return client.messages.create(
                model=CLAUDE, system=system, messages=messages, max_tokens=max_tokens
            )

    @trace
    def agent() -> None:
        ask_gpt(
            [
                {"role": "system", "content": "You plan trips."},
                {"role": "user", "content": NOTES},
                weather_call(),
                {"role": "tool", "tool_call_id": "call_w1", "content": "18 C, dry"},
            ]
        )
        tool_use = {"type": "tool_use", "id": "tu_1", "name": "lookup", "input": {"q": "Orsay"}}
        result = {"type": "tool_result", "tool_use_id": "tu_1", "content": "open until 18:00"}
        ask_claude(
            [
                {"role": "user", "content": "When does the Orsay close?"},
                {"role": "assistant", "content": [tool_use]},
                {"role": "user", "content": [result]},
            ],
            system="Be brief.",
        )
        instrumentor = OpenAIInstrumentor()
        instrumentor.instrument()
        try:
            with gpt() as client:
                client.chat.completions.create(
                    model="gpt-4o",
                    messages=[
                        {"role": "system", "content": "Answer in French."},
                        {"role": "user", "content": "Is it raining?"},
                    ],
                    temperature=0.5,
                )
        finally:
            instrumentor.uninstrument()

    with trace.capture() as result:
        agent()
    return result.to_dict()


@pytest.fixture
def page(
    fake: FakeLLM,
    open_page: Callable[..., Loaded],
    otel_globals: Callable[[], None],
    e2e_missing: Callable[[str], Any],
) -> Loaded:
    """The agent run's trace page, opened."""
    for module in ("openai", "anthropic", "openinference.instrumentation.openai"):
        if importlib.util.find_spec(module.split(".")[0]) is None or (
            "." in module and importlib.util.find_spec(module) is None
        ):
            e2e_missing(f"{module} is not installed")
    fake.reset()
    return open_page(trace_to_html(agent_run(fake)), "chat")


def select(loaded: Loaded, name: str) -> None:
    """Click the tree row of the call named ``name`` (local functions are named
    ``agent_run.<locals>.name``)."""
    row = f".fx-trace-row:has(.fx-name:text-matches('(^|\\.){name}$')) .fx-name"
    loaded.page.click(row, timeout=5000)
    assert loaded.selected_name().rpartition(".")[2] == name


def params(loaded: Loaded) -> list[str]:
    """The request settings shown in the LLM block."""
    return list(loaded.page.locator(".fx-detail .fx-param").all_text_contents())


def turns(loaded: Loaded, where: str = ".fx-chat-prompt") -> list[tuple[str, str]]:
    """(role, text) of each turn shown in the prompt or the response column."""
    return [
        (
            str(turn.locator(".fx-role").text_content()),
            " ".join(str(t) for t in turn.locator(".fx-turn-text").all_text_contents()),
        )
        for turn in loaded.page.locator(f".fx-detail {where} .fx-turn").all()
    ]


def test_openai_call_reads_as_turns_with_a_folded_long_prompt(page: Loaded, fake: FakeLLM) -> None:
    """System, user, an assistant tool call, the tool's answer, then the response; the long user
    turn is folded until "Show all"; model, settings, tokens and cost sit in one block."""
    select(page, "ask_gpt")
    shown = turns(page)
    assert [role for role, _ in shown] == ["system", "user", "assistant", "tool"]
    assert shown[0][1] == "You plan trips."
    assert shown[3][1] == "18 C, dry"
    assert len(shown[1][1]) < 800 < len(NOTES)
    call = page.page.locator(".fx-detail .fx-tool-call")
    assert call.locator("b").text_content() == "get_weather"
    assert '"city": "Paris"' in str(call.locator(".fx-turn-text").text_content())
    assert turns(page, ".fx-chat-reply") == [("assistant", REPLY)]
    more = page.page.locator(".fx-detail .fx-show-all")
    assert more.text_content() == f"Show all {len(NOTES):,} characters"
    more.click()
    assert turns(page)[1][1] == NOTES.strip() or turns(page)[1][1] == NOTES
    block = str(page.page.locator(".fx-detail .fx-llm-block").text_content())
    billed = fake.calls[0]
    assert f"model {GPT}" in block
    assert params(page) == ["temperature 0.2", "max_tokens 300"]
    figures = page.page.locator(".fx-detail .fx-figure").all_text_contents()
    assert figures[:2] == [f"{billed.input_tokens} prompt", f"{billed.output_tokens} completion"]
    assert figures[-1].startswith("$") and figures[-1].endswith("est. cost")
    facts = page.page.locator(".fx-detail .fx-facts dt").all_text_contents()
    assert "Model" not in facts and "Tokens" not in facts  # not said twice


def test_anthropic_call_with_system_and_tool_blocks(page: Loaded) -> None:
    """Anthropic's ``system``, a ``tool_use`` block as a tool call and a ``tool_result`` block as a
    tool turn, and the Messages reply as the response."""
    select(page, "ask_claude")
    shown = turns(page)
    assert [role for role, _ in shown] == ["system", "user", "assistant", "tool"]
    assert shown[0][1] == "Be brief." and shown[3][1] == "open until 18:00"
    assert page.page.locator(".fx-detail .fx-tool-call b").text_content() == "lookup"
    assert turns(page, ".fx-chat-reply") == [("assistant", REPLY)]
    assert params(page) == ["max_tokens 256"]


def test_openinference_span_reads_as_a_conversation(page: Loaded) -> None:
    """A span of OpenInference's instrumentor (another library's span) shows its messages and
    reply the same way, its settings from ``llm.invocation_parameters``."""
    select(page, "ChatCompletion")
    assert turns(page) == [("system", "Answer in French."), ("user", "Is it raining?")]
    assert turns(page, ".fx-chat-reply") == [("assistant", REPLY)]
    model = page.page.locator(".fx-detail .fx-llm-model b").text_content()
    assert model == "gpt-4o" and params(page) == ["temperature 0.5"]


def test_a_call_without_messages_keeps_the_plain_panel(page: Loaded) -> None:
    """The agent (no chat) shows no conversation, and its inputs and output open as before."""
    select(page, "agent")
    assert page.page.locator(".fx-detail .fx-chat").count() == 0
    assert (
        page.page.locator(
            ".fx-detail details.fx-section[open] > summary", has_text="Output"
        ).count()
        == 1
    )


def test_a_22_turn_conversation_lists_every_turn(
    fake: FakeLLM, open_page: Callable[..., Loaded], e2e_missing: Callable[[str], Any]
) -> None:
    """A 22-turn, 33 KB conversation (four times the value cap) reads whole: 22 turns in order."""
    if importlib.util.find_spec("openai") is None:
        e2e_missing("openai is not installed")
    import openai

    from flow_xray import trace

    @trace(kind="llm")
    def long_chat(messages: list[Any]) -> Any:
        with openai.OpenAI(base_url=fake.openai_url, api_key="sk-test", max_retries=0) as client:
            return client.chat.completions.create(model=GPT, messages=messages)

    messages = [{"role": "system", "content": "You plan trips."}] + [
        {"role": ("user", "assistant")[i % 2], "content": f"turn {i}: " + "Orsay, then tea. " * 90}
        for i in range(21)
    ]
    assert sum(len(m["content"]) for m in messages) > 32_000
    with trace.capture() as result:
        long_chat(messages)
    loaded = open_page(result.to_html(), "long-chat")
    select(loaded, "long_chat")
    shown = turns(loaded)
    assert [role for role, _ in shown] == [m["role"] for m in messages]
    assert [text.split(":")[0] for _, text in shown[1:]] == [f"turn {i}" for i in range(21)]
    heading = loaded.page.locator(".fx-detail", has_text="Conversation (22 turns)")
    assert heading.count() == 1
