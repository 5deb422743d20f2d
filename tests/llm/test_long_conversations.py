"""Long conversations keep every turn: the value cap applies per message, not to the list.

The real ``openai`` client talks to the fake server; the calls are traced with
``@trace(kind="llm")``, captured and rendered, and the page's data is read back.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from flow_xray import TraceResult, trace
from flow_xray.render.payload import read_page
from flow_xray.serialize.limits import get_limits
from tests.llm.fake_llm import REPLY, FakeLLM

GPT = "gpt-4o-mini"
ELIDED = re.compile(r"…\[truncated ([\d,]+) chars\]$")


def conversation(turns: int, words: int) -> list[dict[str, str]]:
    """A system prompt, then user and assistant turns, each about ``words`` words."""
    messages = [{"role": "system", "content": "You are a careful travel planner."}]
    for index in range(turns - 1):
        role = "user" if index % 2 == 0 else "assistant"
        messages.append({"role": role, "content": f"turn {index}: " + "see the city " * words})
    return messages


def chat_nodes(result: TraceResult) -> list[dict[str, Any]]:
    """The page's LLM rows (the ``ask`` calls), in order."""
    page = read_page(result.to_html())
    return [node for node in page["nodes"] if node["name"].endswith("ask")]


@pytest.fixture
def ask(need: Callable[[str], None], fake_llm: FakeLLM) -> Iterator[Callable[..., Any]]:
    """``ask(messages, stream=False)``: one traced chat completion with the real client
    (closed after the test: its pooled connection would otherwise be left for the collector
    to find unclosed, a ResourceWarning in whichever later test collects)."""
    need("openai")
    import openai

    with openai.OpenAI(base_url=fake_llm.openai_url, api_key="sk-test", max_retries=0) as client:

        @trace(kind="llm")
        def ask(messages: list[dict[str, str]], model: str = GPT, stream: bool = False) -> Any:
            return client.chat.completions.create(model=model, messages=messages, stream=stream)

        yield ask


def test_a_22_turn_33_kb_conversation_keeps_every_turn(ask: Callable[..., Any]) -> None:
    """22 turns of about 1.5 KB each (33 KB, four times the value cap): every turn whole."""
    messages = conversation(22, 120)
    assert sum(len(m["content"]) for m in messages) > 4 * get_limits().max_value_bytes
    with trace.capture() as result:
        ask(messages)
    (node,) = chat_nodes(result)
    assert node["inputs"]["messages"] == messages
    assert node["chat"]["messages"] == messages
    assert node["chat"]["response"] == [{"role": "assistant", "content": REPLY}]


def test_a_message_longer_than_the_cap_is_cut_alone(ask: Callable[..., Any]) -> None:
    """One 30,000-character turn is cut to the value cap with the count of elided characters;
    the turns around it stay whole."""
    messages = conversation(5, 20)
    long = "word " * 6000
    messages[2] = {"role": "assistant", "content": long}
    with trace.capture() as result:
        ask(messages)
    (node,) = chat_nodes(result)
    turns = node["chat"]["messages"]
    assert [t["role"] for t in turns] == [m["role"] for m in messages]
    assert [t for i, t in enumerate(turns) if i != 2] == [
        m for i, m in enumerate(messages) if i != 2
    ]
    cut = turns[2]["content"]
    found = ELIDED.search(cut)
    assert found is not None
    kept = cut[: found.start()]
    assert long.startswith(kept)
    assert int(found.group(1).replace(",", "")) == len(long) - len(kept)
    assert len(cut.encode()) <= get_limits().max_value_bytes


def test_more_messages_than_the_item_cap_say_how_many_are_missing(ask: Callable[..., Any]) -> None:
    """A 250-message list keeps the first 200 turns and a last line counting the other 50."""
    messages = conversation(250, 2)
    with trace.capture() as result:
        ask(messages)
    (node,) = chat_nodes(result)
    turns = node["chat"]["messages"]
    limit = get_limits().max_items
    assert turns[:limit] == messages[:limit]
    assert turns[limit:] == [
        {"role": "not recorded", "content": f"…[truncated] +{250 - limit} more items"}
    ]


def test_a_returned_stream_shows_its_text(ask: Callable[..., Any]) -> None:
    """A call that returns a stream (read by the caller) shows the streamed reply."""
    messages = conversation(3, 5)
    with trace.capture() as result:
        for _chunk in ask(messages, stream=True):
            pass
    (node,) = chat_nodes(result)
    assert node["chat"]["messages"] == messages
    assert node["chat"]["response"] == [{"role": "assistant", "content": REPLY}]
