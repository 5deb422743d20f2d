"""In one process: a user with their own OpenTelemetry set-up traces a small agent."""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass
from typing import Any

import pytest
from opentelemetry import trace as trace_api
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from flow_xray import trace
from flow_xray.llm.pricing import cost_usd


@dataclass
class CompletionUsage:
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int


@dataclass
class Message:
    role: str
    content: str


@dataclass
class Choice:
    index: int
    message: Message
    finish_reason: str


@dataclass
class ChatCompletion:
    """Shaped like openai.types.chat.ChatCompletion."""

    id: str
    model: str
    choices: list[Choice]
    usage: CompletionUsage


class WeatherServiceDown(Exception):
    pass


@trace(kind="llm")
def chat(messages: list[dict[str, str]], model: str, api_key: str) -> ChatCompletion:
    return ChatCompletion(
        id="chatcmpl-1",
        model="gpt-4o-mini-2024-07-18",
        choices=[Choice(0, Message("assistant", "Call calculator then weather."), "stop")],
        usage=CompletionUsage(prompt_tokens=1200, completion_tokens=300, total_tokens=1500),
    )


@trace(kind="tool")
def calculator(expression: str) -> float:
    return float(eval(expression, {"__builtins__": {}}))  # test input only


@trace(kind="tool")
def weather(city: str) -> str:
    raise WeatherServiceDown(f"no forecast for {city}")


@trace(kind="agent")
def agent(question: str, odd: Any) -> str:
    reply = chat([{"role": "user", "content": question}], model="gpt-4o-mini", api_key="sk-live")
    total = calculator("2 + 2")
    with contextlib.suppress(WeatherServiceDown):
        weather("Paris")
    return f"{reply.choices[0].message.content} {total}"


class Unprintable:
    def __repr__(self) -> str:
        raise RuntimeError("cannot repr")


def test_small_agent_under_the_users_provider(
    user_provider: tuple[TracerProvider, InMemorySpanExporter],
) -> None:
    """Provider kept and fed with SPEC attribute names; tree, tokens, cost and errors right."""
    provider, exporter = user_provider
    odd = Unprintable()
    with trace.capture() as result:
        answer = agent("What is 2 + 2, and the weather?", odd)
    assert answer == "Call calculator then weather. 4.0"
    assert trace_api.get_tracer_provider() is provider

    # The tree.
    (root,) = result.roots
    assert (root.name, root.kind) == ("agent", "agent")
    assert [(c.name, c.kind) for c in root.children] == [
        ("chat", "llm"),
        ("calculator", "tool"),
        ("weather", "tool"),
    ]
    llm, calc, weather_node = root.children
    assert llm.meta["model"] == "gpt-4o-mini-2024-07-18"
    assert (llm.meta["prompt_tokens"], llm.meta["completion_tokens"], llm.meta["total_tokens"]) == (
        1200,
        300,
        1500,
    )
    expected = cost_usd("gpt-4o-mini", 1200, 300)
    assert expected is not None
    assert llm.meta["estimated_cost_usd"] == pytest.approx(expected[2])
    assert llm.inputs["api_key"] == "[REDACTED]"
    assert calc.output == 4.0
    assert weather_node.status == "error"
    assert weather_node.error == "WeatherServiceDown: no forecast for Paris"
    assert root.status == "ok"  # the agent handled the tool's error

    totals = result.totals
    assert (totals.nodes, totals.errors, totals.total_tokens) == (4, 1, 1500)
    assert totals.cost_usd == pytest.approx(expected[2])

    # What the user's own exporter received.
    spans = {s.name: s for s in exporter.get_finished_spans()}
    assert set(spans) == {"agent", "chat", "calculator", "weather"}
    chat_attrs = dict(spans["chat"].attributes or {})
    assert chat_attrs["openinference.span.kind"] == "LLM"
    assert chat_attrs["gen_ai.usage.input_tokens"] == 1200
    assert chat_attrs["gen_ai.usage.output_tokens"] == 300
    assert chat_attrs["llm.token_count.prompt"] == 1200
    assert chat_attrs["llm.token_count.completion"] == 300
    assert chat_attrs["llm.token_count.total"] == 1500
    assert chat_attrs["gen_ai.response.model"] == "gpt-4o-mini-2024-07-18"
    assert chat_attrs["llm.model_name"] == "gpt-4o-mini-2024-07-18"
    assert chat_attrs["llm.cost.total"] == pytest.approx(expected[2])
    assert json.loads(str(chat_attrs["input.value"]))["model"] == "gpt-4o-mini"
    weather_span = spans["weather"]
    assert weather_span.status.status_code.name == "ERROR"
    assert weather_span.events[0].name == "exception"
    assert spans["chat"].parent is not None
    assert spans["chat"].parent.span_id == spans["agent"].context.span_id
    agent_inputs = json.loads(str(spans["agent"].attributes["input.value"]))  # type: ignore[index]
    assert "Unprintable" in agent_inputs["odd"]


def test_exception_objects_reach_the_caller_untouched(
    user_provider: tuple[TracerProvider, InMemorySpanExporter],
) -> None:
    """The user's exception object, its args and traceback chain are what they raised."""
    err = WeatherServiceDown("x")
    err.extra = {"retry": True}  # type: ignore[attr-defined]

    @trace(kind="tool")
    def raise_it() -> None:
        raise err

    with trace.capture(), pytest.raises(WeatherServiceDown) as info:
        raise_it()
    assert info.value is err
    assert info.value.extra == {"retry": True}  # type: ignore[attr-defined]
    assert info.value.__traceback__ is not None
