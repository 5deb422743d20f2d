"""What flow-xray writes for other tools to read: prompts, twins' models, streamed replies,
and a counted span's figure under every summed name (`llm/messages.py`, `llm/usage.py`,
`llm/streams.py`)."""

from __future__ import annotations

from typing import Any

import pytest

from flow_xray.llm.messages import input_message_attributes
from flow_xray.llm.streams import StreamUsage
from flow_xray.llm.usage import (
    as_duplicate,
    duplicate_usage_attributes,
    make_usage,
    with_both_families,
)


@pytest.mark.parametrize(
    ("arguments", "content"),
    [
        ({"prompt": "What is 6 x 7?"}, "What is 6 x 7?"),
        ({"question": "Why?", "model": "gpt-4o-mini"}, "Why?"),
        ({"topic": "otters", "temperature": 0.2}, "otters"),
    ],
)
def test_a_prompt_string_is_one_user_message(arguments: dict[str, Any], content: str) -> None:
    """``ask(prompt: str)``: Phoenix's input messages hold the prompt as the user's turn;
    the other plain arguments are the invocation parameters."""
    out = input_message_attributes(arguments)
    assert out["llm.input_messages.0.message.role"] == "user"
    assert out["llm.input_messages.0.message.content"] == content
    assert "llm.input_messages.1.message.role" not in out
    assert content not in (out.get("llm.invocation_parameters") or {}).values()


@pytest.mark.parametrize(
    "arguments", [{"model": "gpt-4o-mini"}, {"a": "x", "b": "y"}, {"n": 3}, {}]
)
def test_no_prompt_no_messages(arguments: dict[str, Any]) -> None:
    """A model name alone, or two texts neither named like a prompt, are no conversation."""
    assert input_message_attributes(arguments) == {}


def test_a_twin_keeps_its_model_under_the_standard_names() -> None:
    """A figure counted elsewhere: tokens under flow_xray.usage.*, the model where backends
    show it."""
    usage = make_usage(model="gpt-4o-mini", input_tokens=12, output_tokens=7)
    out = duplicate_usage_attributes(usage, "ChatCompletion")
    assert (out["gen_ai.request.model"], out["llm.model_name"]) == ("gpt-4o-mini", "gpt-4o-mini")
    assert not {"gen_ai.usage.input_tokens", "llm.token_count.prompt", "llm.cost.total"} & set(out)
    assert (out["flow_xray.usage.input_tokens"], out["flow_xray.usage.counted_in"]) == (
        12,
        "ChatCompletion",
    )


def test_an_exported_twin_loses_every_summed_name() -> None:
    """`as_duplicate` on another tracer's span: no token or cost name a backend adds up."""
    attributes = {
        "llm.model_name": "gpt-4o-mini",
        "gen_ai.usage.prompt_tokens": 12,
        "gen_ai.usage.completion_tokens": 7,
        "llm.token_count.total": 19,
        "llm.cost.total": 6e-06,
        "other": "kept",
    }
    out = as_duplicate(attributes, "ask")
    assert out == {
        "llm.model_name": "gpt-4o-mini",
        "other": "kept",
        "flow_xray.usage.counted_in": "ask",
        "flow_xray.usage.input_tokens": 12,
        "flow_xray.usage.output_tokens": 7,
        "flow_xray.usage.model": "gpt-4o-mini",
    }


def test_a_counted_genai_only_span_gets_both_families_and_a_price() -> None:
    """The anthropic SDK's own span (GenAI names only) as the counted one: Phoenix needs
    llm.token_count.* and llm.model_name, and the cost comes from the price table."""
    out = with_both_families(
        {
            "gen_ai.request.model": "claude-haiku-4-5-20251001",
            "gen_ai.usage.input_tokens": 21,
            "gen_ai.usage.output_tokens": 9,
        }
    )
    assert out is not None
    assert (out["llm.token_count.prompt"], out["llm.token_count.completion"]) == (21, 9)
    assert out["llm.token_count.total"] == 30
    assert out["llm.model_name"] == "claude-haiku-4-5-20251001"
    assert out["llm.cost.total"] == pytest.approx((21 * 1.0 + 9 * 5.0) / 1e6)


def test_a_span_with_everything_is_left_alone() -> None:
    """Nothing missing: None (the span is exported as it is)."""
    usage = make_usage(model="gpt-4o-mini", input_tokens=12, output_tokens=7)
    from flow_xray.llm.usage import usage_attributes

    assert with_both_families(usage_attributes(usage)) is None


@pytest.mark.parametrize(
    "events",
    [
        [
            {"object": "chat.completion.chunk", "choices": [{"delta": {"content": "Hel"}}]},
            {"object": "chat.completion.chunk", "choices": [{"delta": {"content": "lo."}}]},
            {
                "object": "chat.completion.chunk",
                "choices": [],
                "usage": {"prompt_tokens": 3, "completion_tokens": 2},
            },
        ],
        [
            {
                "type": "message_start",
                "message": {"model": "claude-haiku-4-5", "usage": {"input_tokens": 3}},
            },
            {"type": "content_block_delta", "delta": {"type": "text_delta", "text": "Hel"}},
            {"type": "content_block_delta", "delta": {"type": "text_delta", "text": "lo."}},
            {"type": "message_delta", "usage": {"output_tokens": 2}},
        ],
        [
            {"type": "response.output_text.delta", "delta": "Hel"},
            {"type": "response.output_text.delta", "delta": "lo."},
        ],
    ],
)
def test_a_streams_text_is_folded_with_its_usage(events: list[Any]) -> None:
    """OpenAI chunks, Anthropic deltas and Responses deltas give the reply's text."""
    acc = StreamUsage()
    for event in events:
        acc.add(event)
    assert acc.text() == "Hello."
