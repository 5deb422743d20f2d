"""Readers: other instrumentations' messages and error details become the node's fields."""

from __future__ import annotations

import json

from flow_xray.analysis.accounting import build_result
from flow_xray.tree.model import TraceNode
from flow_xray.tree.spans import SpanRecord

T0 = 1_700_000_000_000_000_000


def node_of(
    attributes: dict[str, object], status: str = "UNSET", message: str | None = None
) -> TraceNode:
    record = SpanRecord(
        trace_id="1" * 32,
        span_id="2" * 16,
        parent_id=None,
        name="chat",
        start_ns=T0,
        end_ns=T0 + 1_000_000,
        status=status,
        status_message=message,
        attributes=attributes,
    )
    (node,) = build_result([record]).roots
    return node


def test_genai_messages_become_inputs_and_output() -> None:
    """``gen_ai.input.messages`` / ``gen_ai.output.messages`` (JSON parts) become messages."""
    node = node_of(
        {
            "gen_ai.input.messages": json.dumps(
                [{"role": "user", "parts": [{"type": "text", "content": "Hi there"}]}]
            ),
            "gen_ai.output.messages": json.dumps(
                [
                    {
                        "role": "assistant",
                        "parts": [{"type": "text", "content": "Hello"}],
                        "finish_reason": "stop",
                    }
                ]
            ),
        }
    )
    assert node.inputs == {"messages": [{"role": "user", "content": "Hi there"}]}
    assert node.output == {
        "messages": [{"role": "assistant", "content": "Hello", "finish_reason": "stop"}]
    }
    assert "gen_ai.input.messages" not in node.attributes


def test_openinference_flattened_messages_become_inputs_and_output() -> None:
    """``llm.input_messages.{i}.message.*`` and ``llm.output_messages...`` are regrouped."""
    node = node_of(
        {
            "llm.input_messages.0.message.role": "system",
            "llm.input_messages.0.message.content": "Be brief.",
            "llm.input_messages.1.message.role": "user",
            "llm.input_messages.1.message.contents.0.message_content.text": "Hi",
            "llm.output_messages.0.message.role": "assistant",
            "llm.output_messages.0.message.content": "Hello",
            "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "search",
        }
    )
    assert node.inputs["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Hi"},
    ]
    assert node.output == {
        "messages": [{"role": "assistant", "content": "Hello", "tool_calls": [{"name": "search"}]}]
    }
    assert not [k for k in node.attributes if k.startswith("llm.")]


def test_openllmetry_prompt_attributes_become_messages() -> None:
    """OpenLLMetry's ``gen_ai.prompt.{i}.*`` / ``gen_ai.completion.{i}.*`` are read too."""
    node = node_of(
        {
            "gen_ai.prompt.0.role": "user",
            "gen_ai.prompt.0.content": "Hi",
            "gen_ai.completion.0.role": "assistant",
            "gen_ai.completion.0.content": "Hello",
        }
    )
    assert node.inputs == {"messages": [{"role": "user", "content": "Hi"}]}
    assert node.output == {"messages": [{"role": "assistant", "content": "Hello"}]}


def test_recorded_inputs_keep_their_messages() -> None:
    """When ``input.value`` already holds the messages, it stays as recorded."""
    node = node_of(
        {
            "input.value": json.dumps({"messages": [{"role": "user", "content": "Hi"}], "n": 1}),
            "input.mime_type": "application/json",
            "llm.input_messages.0.message.role": "user",
            "llm.input_messages.0.message.content": "Hi",
        }
    )
    assert node.inputs == {"messages": [{"role": "user", "content": "Hi"}], "n": 1}


def test_error_type_and_status_code_explain_a_bare_failure() -> None:
    """A failed span with neither message nor exception event shows error.type and the code."""
    node = node_of(
        {"error.type": "rate_limit_error", "http.response.status_code": 429}, status="ERROR"
    )
    assert node.error == "rate_limit_error: HTTP 429"


def test_a_class_repr_error_type_prefixes_the_message() -> None:
    """``error.type = "<class 'openai.RateLimitError'>"`` gives ``RateLimitError: message``."""
    node = node_of(
        {"error.type": "<class 'openai.RateLimitError'>"},
        status="ERROR",
        message="Error code: 429 - slow down",
    )
    assert node.error == "RateLimitError: Error code: 429 - slow down"


def test_only_a_status_code_still_says_something() -> None:
    """With only ``http.response.status_code``, the error names the HTTP status."""
    assert node_of({"http.response.status_code": 500}, status="ERROR").error == "HTTP 500"
