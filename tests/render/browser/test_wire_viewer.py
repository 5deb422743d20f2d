"""What issue 23 reads shows in the viewer, in headless Chromium: a disagreement between two
spans of one request on both nodes, GenAI tool-call turns, a returned stream's reply."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from viewer_page import Loaded

from flow_xray.analysis.accounting import build_result
from flow_xray.render.trace_page import trace_to_html
from flow_xray.tree.spans import SpanRecord

pytestmark = pytest.mark.e2e
TRACE = "0" * 31 + "7"
MS = 1_000_000


def span(
    span_id: int, parent: int | None, name: str, start: int, end: int, **attrs: Any
) -> SpanRecord:
    return SpanRecord(
        TRACE,
        f"{span_id:016x}",
        f"{parent:016x}" if parent else None,
        name,
        start * MS,
        end * MS,
        attributes={k.replace("__", "."): v for k, v in attrs.items()},
    )


CLAUDE = {"gen_ai__request__model": "claude-haiku-4-5", "gen_ai__response__id": "msg_1"}
MESSAGES = [
    {"role": "user", "parts": [{"type": "text", "content": "Weather in Paris?"}]},
    {
        "role": "assistant",
        "parts": [
            {"type": "tool_call", "id": "c1", "name": "get_weather", "arguments": {"city": "Paris"}}
        ],
    },
    {"role": "user", "parts": [{"type": "tool_call_response", "id": "c1", "result": "sunny"}]},
]


@pytest.fixture
def page(open_page: Callable[..., Loaded]) -> Loaded:
    records = [
        span(1, None, "agent", 0, 100, openinference__span__kind="AGENT"),
        span(
            2,
            1,
            "anthropic.chat",
            1,
            20,
            otel__scope__name="opentelemetry.instrumentation.anthropic",
            gen_ai__usage__input_tokens=21,
            gen_ai__usage__output_tokens=10,
            **CLAUDE,
        ),
        span(
            3,
            1,
            "messages.create",
            2,
            19,
            otel__scope__name="com.anthropic.sdk.python",
            gen_ai__usage__input_tokens=21,
            gen_ai__usage__output_tokens=9,
            **CLAUDE,
        ),
        span(
            4,
            1,
            "chat gpt-4o-mini",
            30,
            40,
            otel__scope__name="pydantic-ai",
            gen_ai__operation__name="chat",
            gen_ai__input__messages=json.dumps(MESSAGES),
            gen_ai__usage__input_tokens=13,
            gen_ai__usage__output_tokens=7,
            gen_ai__request__model="gpt-4o-mini",
        ),
        span(
            5,
            1,
            "ask_stream",
            50,
            60,
            openinference__span__kind="LLM",
            output__value="<_Stream for Stream>",
            llm__output_messages__0__message__role="assistant",
            llm__output_messages__0__message__content="Streamed reply.",
        ),
    ]
    return open_page(trace_to_html(build_result(records).to_dict()), "wire")


def select(loaded: Loaded, name: str) -> None:
    loaded.page.click(f".fx-trace-row:has(.fx-name:text-is('{name}')) .fx-name", timeout=5000)
    assert loaded.selected_name() == name


def usage_fact(loaded: Loaded) -> str:
    facts = loaded.page.locator(".fx-detail .fx-facts")
    labels = facts.locator("dt").all_text_contents()
    values = facts.locator("dd").all_text_contents()
    return dict(zip(labels, values, strict=False)).get("Usage", "")


def test_a_disagreement_shows_on_both_nodes(page: Loaded) -> None:
    """The SDK's own figure is counted and says what the other span reported; the other one
    says it is not in the totals and why."""
    select(page, "messages.create")
    assert usage_fact(page).startswith("in the totals; span 'anthropic.chat' reported 21/10")
    select(page, "anthropic.chat")
    shown = usage_fact(page)
    assert shown.startswith("not in the totals: same request as sibling span 'messages.create'")
    assert "21/9" in shown
    assert not page.console_errors
    assert all(url.startswith("file:") for url in page.requests)


def test_genai_tool_turns_read_as_a_conversation(page: Loaded) -> None:
    """pydantic-ai's parts: the question, the assistant's tool call, the tool's result."""
    select(page, "chat gpt-4o-mini")
    turns = page.page.locator(".fx-detail .fx-chat-prompt .fx-turn")
    roles = [str(t.locator(".fx-role").text_content()) for t in turns.all()]
    assert roles == ["user", "assistant", "tool"]
    assert page.page.locator(".fx-detail .fx-tool-call b").text_content() == "get_weather"
    assert "(no text)" not in str(page.page.locator(".fx-detail .fx-chat-prompt").text_content())


def test_a_returned_streams_reply_is_its_text(page: Loaded) -> None:
    """The reply column shows the streamed text, not the stream object."""
    select(page, "ask_stream")
    reply = page.page.locator(".fx-detail .fx-chat-reply .fx-turn-text").all_text_contents()
    assert reply == ["Streamed reply."]
