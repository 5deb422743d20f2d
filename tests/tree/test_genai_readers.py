"""Reading GenAI and framework spans (`tree/foreign.py`, `tree/fixups.py`), on plain records.

The shapes are the ones pydantic-ai, the official OpenAI instrumentation and
OpenInference's LangChain instrumentor write (tests/llm/test_frameworks.py runs
the real libraries); here each rule is pinned on its own, in the capture path
(a `SpanStore`, rows read lazily) and the file path (records) alike.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pytest

from flow_xray.analysis.accounting import build_result
from flow_xray.llm.messages import chat_view
from flow_xray.tree.model import TraceNode, TraceResult
from flow_xray.tree.spans import SpanRecord, SpanStore

TRACE = "0" * 31 + "1"
MS = 1_000_000


def span(
    span_id: int,
    parent: int | None,
    name: str,
    start: int,
    end: int | None,
    scope: str | None = None,
    **attributes: Any,
) -> SpanRecord:
    attrs = {k.replace("__", "."): v for k, v in attributes.items()}
    if scope:
        attrs["otel.scope.name"] = scope
    return SpanRecord(
        TRACE,
        f"{span_id:016x}",
        f"{parent:016x}" if parent else None,
        name,
        start * MS,
        None if end is None else end * MS,
        attributes=attrs,
    )


def both(records: Sequence[SpanRecord]) -> list[TraceResult]:
    """The trace the records make, read as a file reader and as a capture does."""
    store = SpanStore()
    for r in records:
        store.add(
            int(r.trace_id, 16),
            int(r.span_id, 16),
            int(r.parent_id, 16) if r.parent_id else 0,
            r.name,
            r.start_ns,
            r.end_ns or 0,
            r.status,
            r.status_message,
            tuple(r.attributes),
            tuple(r.attributes.values()),
            (),
        )
    return [build_result(list(records)), build_result(store)]


def by_name(result: TraceResult) -> dict[str, TraceNode]:
    return {node.name: node for node in result}


PARTS = [
    {"role": "user", "parts": [{"type": "text", "content": "Weather in Paris?"}]},
    {
        "role": "assistant",
        "parts": [
            {"type": "reasoning", "content": "I should call the tool."},
            {
                "type": "tool_call",
                "id": "c1",
                "name": "get_weather",
                "arguments": {"city": "Paris"},
            },
        ],
    },
    {
        "role": "user",
        "parts": [{"type": "tool_call_response", "id": "c1", "result": "sunny"}],
    },
    {
        "role": "user",
        "parts": [
            {"type": "blob", "modality": "image", "mime_type": "image/png", "content": "iVBO"},
            {"type": "uri", "modality": "image", "uri": "https://example.test/a.png"},
        ],
    },
]


def test_genai_parts_of_every_type_become_chat_turns() -> None:
    """Tool calls, tool results, reasoning and media parts read as turns, none "(no text)"."""
    records = [
        span(
            1,
            None,
            "chat gpt-4o-mini",
            0,
            10,
            "pydantic-ai",
            gen_ai__operation__name="chat",
            gen_ai__input__messages=json.dumps(PARTS),
            gen_ai__system_instructions=json.dumps([{"type": "text", "content": "Be brief."}]),
        )
    ]
    for result in both(records):
        node = result.roots[0]
        messages = node.inputs["messages"]
        assert messages[0] == {"role": "system", "content": "Be brief."}
        assert messages[2]["tool_calls"] == [
            {"name": "get_weather", "arguments": '{"city": "Paris"}', "id": "c1"}
        ]
        assert messages[2]["reasoning"] == "I should call the tool."
        assert (messages[3]["tool_call_id"], messages[3]["content"]) == ("c1", "sunny")
        assert messages[4]["content"] == "[image image/png]\n[image https://example.test/a.png]"
        view = chat_view(node.inputs, node.output, node.attributes)
        assert view is not None
        assert all(t.get("content") or t.get("tool_calls") for t in view["messages"])
        assert node.kind == "llm"


@pytest.mark.parametrize(
    ("operation", "kind"),
    [
        ("invoke_agent", "agent"),
        ("execute_tool", "tool"),
        ("chat", "llm"),
        ("text_completion", "llm"),
        ("embeddings", "embedding"),
        ("something_else", "span"),
    ],
)
def test_kind_comes_from_the_genai_operation(operation: str, kind: str) -> None:
    """A span declaring no OpenInference kind gets the one its GenAI operation names."""
    for result in both([span(1, None, "op", 0, 1, "lib", gen_ai__operation__name=operation)]):
        assert result.roots[0].kind == kind


def test_a_declared_openinference_kind_wins() -> None:
    """``openinference.span.kind`` is the kind even when the operation says otherwise."""
    record = span(
        1,
        None,
        "op",
        0,
        1,
        "lib",
        gen_ai__operation__name="chat",
        openinference__span__kind="CHAIN",
    )
    for result in both([record]):
        assert result.roots[0].kind == "chain"


def test_a_genai_tool_span_shows_its_arguments_and_result() -> None:
    """``gen_ai.tool.call.arguments`` are the inputs, ``gen_ai.tool.call.result`` the output."""
    record = span(
        1,
        None,
        "execute_tool get_weather",
        0,
        1,
        "pydantic-ai",
        gen_ai__operation__name="execute_tool",
        gen_ai__tool__call__arguments='{"city": "Paris"}',
        gen_ai__tool__call__result="sunny in Paris",
    )
    for result in both([record]):
        node = result.roots[0]
        assert (node.kind, node.inputs, node.output) == (
            "tool",
            {"city": "Paris"},
            "sunny in Paris",
        )
        assert "gen_ai.tool.call.arguments" not in node.attributes


def test_aggregated_usage_is_shown_and_not_counted() -> None:
    """An agent run's ``gen_ai.aggregated_usage.*`` stays an attribute; its model calls count."""
    records = [
        span(
            1,
            None,
            "invoke_agent",
            0,
            10,
            "pydantic-ai",
            gen_ai__operation__name="invoke_agent",
            gen_ai__aggregated_usage__input_tokens=30,
            gen_ai__aggregated_usage__output_tokens=14,
        ),
        span(
            2,
            1,
            "chat",
            1,
            4,
            "pydantic-ai",
            gen_ai__usage__input_tokens=13,
            gen_ai__usage__output_tokens=7,
        ),
        span(
            3,
            1,
            "chat",
            5,
            9,
            "pydantic-ai",
            gen_ai__usage__input_tokens=17,
            gen_ai__usage__output_tokens=7,
        ),
    ]
    for result in both(records):
        assert result.totals.total_tokens == 44
        agent = result.roots[0]
        assert agent.attributes["gen_ai.aggregated_usage.input_tokens"] == 30
        assert agent.usage_counted is None


def test_a_returned_streams_reply_shows_its_streamed_text() -> None:
    """A traced call that returned an ``openai.Stream``: the reply is the streamed text, not
    the stream's repr."""
    record = span(
        1,
        None,
        "ask_stream",
        0,
        5,
        openinference__span__kind="LLM",
        output__value="<openai.Stream object at 0x7f>",
        llm__output_messages__0__message__role="assistant",
        llm__output_messages__0__message__content="The answer is 42.",
    )
    for result in both([record]):
        node = result.roots[0]
        view = chat_view(node.inputs, node.output, node.attributes)
        assert view is not None
        assert view["response"] == [{"role": "assistant", "content": "The answer is 42."}]


def test_spans_after_a_returned_stream_go_back_to_the_open_caller() -> None:
    """opentelemetry-util-genai leaves the returning call's context behind: the calls
    started after it ended move to the nearest ancestor still open then."""
    genai = "opentelemetry.util.genai.handler"
    records = [
        span(1, None, "agent", 0, 100),
        span(2, 1, "ask_stream", 1, 10),
        span(3, 2, "chat gpt-4o-mini", 2, 15, genai),  # the stream, read after the call
        span(4, 2, "ask", 20, 30),  # started after ask_stream ended: the leaked context
        span(5, 4, "chat gpt-4o-mini", 21, 29, genai),
        span(6, 2, "tool", 31, 40),
    ]
    for result in both(records):
        agent = result.roots[0]
        assert [c.name for c in agent.children] == ["ask_stream", "ask", "tool"]
        assert [c.name for c in by_name(result)["ask_stream"].children] == ["chat gpt-4o-mini"]


def test_a_late_child_without_a_leaked_context_keeps_its_parent() -> None:
    """A task a call started that runs on after it (no util-genai span left open) stays put."""
    records = [
        span(1, None, "agent", 0, 100),
        span(2, 1, "spawn", 1, 10),
        span(3, 2, "background", 12, 20),
    ]
    for result in both(records):
        assert [c.name for c in by_name(result)["spawn"].children] == ["background"]


def test_a_span_opened_inside_a_langchain_run_goes_under_it() -> None:
    """OpenInference's LangChain spans are never the current context: a traced tool called by
    LangChain names the chain's caller as parent; it belongs under LangChain's tool span."""
    langchain = "openinference.instrumentation.langchain"
    records = [
        span(1, None, "agent", 0, 100),
        span(2, 1, "weather_agent", 1, 90, langchain),
        span(3, 2, "ChatOpenAI", 2, 20, langchain),
        span(4, 2, "lookup_weather", 21, 40, langchain),
        span(5, 1, "lookup_weather", 22, 39),  # ours, parented to the runtime context
        span(6, 1, "ChatCompletion", 3, 19, "openinference.instrumentation.openai"),
        span(7, 1, "after", 95, 99),  # after the run: stays
    ]
    for result in both(records):
        agent = result.roots[0]
        assert [c.name for c in agent.children] == ["weather_agent", "after"]
        nodes = {n.span_id: n for n in result}
        assert [c.name for c in nodes[f"{4:016x}"].children] == ["lookup_weather"]
        assert [c.name for c in nodes[f"{3:016x}"].children] == ["ChatCompletion"]


def test_concurrent_langchain_runs_leave_an_ambiguous_span_where_it_is() -> None:
    """Two runs both spanning the span in time: which one it belongs to is not known."""
    langchain = "openinference.instrumentation.langchain"
    records = [
        span(1, None, "agent", 0, 100),
        span(2, 1, "run_a", 1, 90, langchain),
        span(3, 1, "run_b", 2, 91, langchain),
        span(4, 1, "tool", 10, 20),
    ]
    for result in both(records):
        assert [c.name for c in result.roots[0].children] == ["run_a", "run_b", "tool"]
