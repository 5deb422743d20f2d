"""`chat_view`: the shapes an LLM call's messages come in, read into the viewer's turns."""

from __future__ import annotations

import json
from typing import Any

from flow_xray.llm.messages import chat_view
from flow_xray.render.payload import read_page
from flow_xray.render.trace_page import trace_to_html

WEATHER_CALL = {"city": "Paris"}


def test_openai_conversation_with_a_tool_call_and_its_result() -> None:
    """System, user, an assistant tool call, the tool's answer: four turns, the reply after."""
    messages = [
        {"role": "system", "content": "You are a weather bot."},
        {"role": "user", "content": [{"type": "text", "text": "Weather in Paris?"}]},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": json.dumps(WEATHER_CALL)},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "18 C, dry"},
    ]
    response = {
        "object": "chat.completion",
        "choices": [{"message": {"role": "assistant", "content": "Bike: it is dry."}}],
    }
    view = chat_view({"messages": messages, "model": "gpt-4o", "temperature": 0.2}, response)
    assert view == {
        "messages": [
            {"role": "system", "content": "You are a weather bot."},
            {"role": "user", "content": "Weather in Paris?"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {"name": "get_weather", "arguments": '{"city": "Paris"}', "id": "call_1"}
                ],
            },
            {"role": "tool", "content": "18 C, dry", "tool_call_id": "call_1"},
        ],
        "response": [{"role": "assistant", "content": "Bike: it is dry."}],
        "params": {"temperature": 0.2},
        "model": "gpt-4o",
    }


def test_anthropic_system_tool_use_and_tool_result_blocks() -> None:
    """Anthropic's ``system`` comes first; ``tool_use`` is a tool call, ``tool_result`` a turn."""
    messages = [
        {"role": "user", "content": "Weather in Paris?"},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Let me check."},
                {"type": "tool_use", "id": "tu_1", "name": "get_weather", "input": WEATHER_CALL},
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "tu_1",
                    "content": [{"type": "text", "text": "18 C"}],
                }
            ],
        },
    ]
    response = {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "text", "text": "Dry, 18 C."}],
    }
    view = chat_view(
        {"system": [{"type": "text", "text": "Be brief."}], "messages": messages, "max_tokens": 64},
        response,
    )
    assert view is not None
    assert [(t["role"], t["content"]) for t in view["messages"]] == [
        ("system", "Be brief."),
        ("user", "Weather in Paris?"),
        ("assistant", "Let me check."),
        ("tool", "18 C"),
    ]
    assert view["messages"][2]["tool_calls"] == [
        {"name": "get_weather", "arguments": '{"city": "Paris"}', "id": "tu_1"}
    ]
    assert view["messages"][3]["tool_call_id"] == "tu_1"
    assert view["response"] == [{"role": "assistant", "content": "Dry, 18 C."}]
    assert view["params"] == {"max_tokens": 64}


def test_responses_api_text_input_and_function_call_output() -> None:
    """``instructions`` and ``input`` text are turns; a ``function_call`` item is a tool call."""
    response = {
        "object": "response",
        "output": [
            {"type": "function_call", "call_id": "fc_1", "name": "lookup", "arguments": "{}"},
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "ok"}],
            },
        ],
    }
    view = chat_view({"instructions": "Terse.", "input": "Look it up"}, response)
    assert view is not None
    assert view["messages"] == [
        {"role": "system", "content": "Terse."},
        {"role": "user", "content": "Look it up"},
    ]
    assert view["response"] == [
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"name": "lookup", "arguments": "{}", "id": "fc_1"}],
        },
        {"role": "assistant", "content": "ok"},
    ]


def test_messages_another_instrumentation_recorded() -> None:
    """OpenInference's flattened messages, as the tree builder promotes them (tool calls as
    ``name`` / ``arguments`` / ``id``), with ``llm.invocation_parameters`` as the settings."""
    inputs = {"messages": [{"role": "user", "content": "q"}]}
    output = {
        "messages": [
            {
                "role": "assistant",
                "tool_calls": [{"name": "search", "arguments": '{"q": 1}', "id": "c9"}],
            }
        ]
    }
    attributes = {"llm.invocation_parameters": '{"model": "gpt-4o", "temperature": 0.5, "seed": 3}'}
    view = chat_view(inputs, output, attributes)
    assert view == {
        "messages": [{"role": "user", "content": "q"}],
        "response": [
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [{"name": "search", "arguments": '{"q": 1}', "id": "c9"}],
            }
        ],
        "params": {"temperature": 0.5, "seed": 3},
        "model": "gpt-4o",
    }


def test_genai_request_attributes_are_parameters() -> None:
    """``gen_ai.request.*`` settings join the parameters (the request's own values win)."""
    view = chat_view(
        {"messages": [{"role": "user", "content": "q"}], "temperature": 0.1},
        None,
        {
            "gen_ai.request.temperature": 0.9,
            "gen_ai.request.top_p": 0.5,
            "gen_ai.request.model": "m",
        },
    )
    assert view is not None
    assert view["params"] == {"temperature": 0.1, "top_p": 0.5}
    assert view["model"] == "m"
    assert view["response"] == []


def test_no_chat_is_none() -> None:
    """Inputs without messages and an output that is no reply give no conversation, and odd
    values never raise."""
    assert chat_view({"prompt_id": 3}, {"result": 1}) is None
    assert chat_view(None, None) is None
    assert chat_view("text", 42, ["x"]) is None

    class Hostile:
        def __getattr__(self, name: str) -> Any:
            raise RuntimeError(name)

    assert chat_view({"messages": [{"role": "user", "content": "hi"}]}, Hostile()) is not None


def test_the_trace_page_carries_the_chat_of_llm_nodes_only() -> None:
    """The page data gets ``chat`` on LLM nodes with messages, not on other nodes."""
    chat_inputs = {"messages": [{"role": "user", "content": "hi"}]}
    trace = {
        "nodes": [
            {
                "id": "a",
                "name": "agent",
                "kind": "chain",
                "inputs": chat_inputs,
                "children": [
                    {
                        "id": "b",
                        "name": "ask",
                        "kind": "llm",
                        "inputs": chat_inputs,
                        "output": "hello",
                        "children": [],
                    },
                ],
            },
        ]
    }
    page = trace_to_html(trace)
    data = read_page(page)
    agent, ask = data["nodes"]
    assert "chat" not in agent
    assert ask["chat"]["response"] == [{"role": "assistant", "content": "hello"}]
