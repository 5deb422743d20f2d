"""The counting rule on the wire: what leaves an export pipeline counts each request once.

Real SDK spans from a real `TracerProvider`, in the orders real instrumentors
produce them (a returned stream's instrumentor span ending after the traced
call, an instrumentor creating its span when the call returns, the provider
SDK's own span beside an instrumentor's); the test adds up the exported
attributes as a backend does.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import pytest
from opentelemetry import trace as trace_api
from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from flow_xray.sdk.otlp import ExportPipeline
from flow_xray.sdk.usage_gate import UsageGate

GPT = {
    "gen_ai.request.model": "gpt-4o-mini",
    "llm.model_name": "gpt-4o-mini",
    "gen_ai.usage.input_tokens": 12,
    "gen_ai.usage.output_tokens": 7,
    "llm.token_count.prompt": 12,
    "llm.token_count.completion": 7,
    "llm.token_count.total": 19,
    "llm.cost.total": 6e-06,
}
OPENINFERENCE = {
    "openinference.span.kind": "LLM",
    "llm.model_name": "gpt-4o-mini",
    "llm.token_count.prompt": 12,
    "llm.token_count.completion": 7,
    "llm.token_count.total": 19,
}
CLAUDE_SDK = {
    "gen_ai.request.model": "claude-3-5-haiku-20241022",
    "gen_ai.response.id": "msg_1",
    "gen_ai.usage.input_tokens": 21,
    "gen_ai.usage.output_tokens": 9,
}


class _ToGate(SpanProcessor):
    def __init__(self, gate: UsageGate) -> None:
        self.gate = gate

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        self.gate.started(span)

    def on_end(self, span: ReadableSpan) -> None:
        self.gate.ended(span)


@pytest.fixture
def wire() -> Iterator[tuple[trace_api.Tracer, trace_api.Tracer, list[ReadableSpan], UsageGate]]:
    """Our tracer, an instrumentor's tracer, what left the gate (in order), the gate."""
    sent: list[ReadableSpan] = []
    gate = UsageGate(sent.append)
    provider = TracerProvider(shutdown_on_exit=False)
    provider.add_span_processor(_ToGate(gate))
    yield provider.get_tracer("flow_xray"), provider.get_tracer("openinference"), sent, gate
    provider.shutdown()


def summed(spans: list[ReadableSpan], key: str) -> float:
    """What a backend adds up over the spans for ``key``."""
    return sum(float((s.attributes or {}).get(key, 0)) for s in spans)


def by_name(spans: list[ReadableSpan]) -> dict[str, Mapping[str, Any]]:
    return {s.name: dict(s.attributes or {}) for s in spans}


def test_a_stream_whose_instrumentor_span_ends_after_ours_counts_once(wire: Any) -> None:
    """Ours ends first with the full figure; it waits for the child and leaves as its twin."""
    ours_tracer, theirs, sent, _ = wire
    with ours_tracer.start_as_current_span("agent"):
        ours = ours_tracer.start_span("ask_stream", attributes=GPT)
        child = theirs.start_span(
            "ChatCompletion", context=trace_api.set_span_in_context(ours), attributes=OPENINFERENCE
        )
        ours.end()
        assert [s.name for s in sent] == []  # held: a span inside still reports
        child.end()
    assert sorted(s.name for s in sent) == ["ChatCompletion", "agent", "ask_stream"]
    spans = by_name(sent)
    assert spans["ask_stream"]["flow_xray.usage.counted_in"] == "ChatCompletion"
    assert spans["ask_stream"]["flow_xray.usage.input_tokens"] == 12
    assert spans["ask_stream"]["llm.model_name"] == "gpt-4o-mini"  # the model stays
    for key, billed in (
        ("llm.token_count.prompt", 12),
        ("gen_ai.usage.input_tokens", 12),
        ("llm.token_count.total", 19),
        ("gen_ai.usage.output_tokens", 7),
    ):
        assert summed(sent, key) == billed, key
    assert summed(sent, "llm.cost.total") == pytest.approx(6e-06)  # priced on the counted span


def test_a_child_that_ends_first_is_counted_and_ours_is_its_twin(wire: Any) -> None:
    """The ordinary order: the instrumentor's span ends inside ours."""
    ours_tracer, theirs, sent, _ = wire
    with (
        ours_tracer.start_as_current_span("ask", attributes=GPT),
        theirs.start_as_current_span("ChatCompletion", attributes=OPENINFERENCE),
    ):
        pass
    assert summed(sent, "llm.token_count.total") == 19
    assert summed(sent, "gen_ai.usage.input_tokens") == 12
    assert by_name(sent)["ask"]["flow_xray.usage.counted_in"] == "ChatCompletion"


def test_an_instrumentor_span_created_when_the_call_returns_is_a_sibling(wire: Any) -> None:
    """A span started after its sibling ended, with a start time before that end (as
    OpenLLMetry's Responses wrapper does): the first is held until the parent moves on."""
    ours_tracer, theirs, sent, _ = wire
    with ours_tracer.start_as_current_span("ask", start_time=100):
        first = theirs.start_span("Response", attributes=OPENINFERENCE, start_time=1_000)
        first.end(end_time=5_000)
        assert [s.name for s in sent] == []
        retro = ours_tracer.start_span("openai.response", attributes=GPT, start_time=900)
        retro.end(end_time=5_100)
    assert sorted(s.name for s in sent) == ["Response", "ask", "openai.response"]
    assert summed(sent, "llm.token_count.prompt") == 12
    assert summed(sent, "gen_ai.usage.output_tokens") == 7


def test_the_provider_sdks_own_span_is_counted_beside_an_instrumentors(wire: Any) -> None:
    """Two siblings, one request, different figures: the SDK's own figure goes on the wire,
    under both attribute families and with its cost."""
    sent, gate = wire[2], wire[3]
    provider = TracerProvider(shutdown_on_exit=False)
    provider.add_span_processor(_ToGate(gate))
    sdk = provider.get_tracer("com.anthropic.sdk.python")
    other = provider.get_tracer("opentelemetry.instrumentation.anthropic")
    ours = provider.get_tracer("flow_xray")
    with ours.start_as_current_span("ask_claude", start_time=10):
        theirs = other.start_span(
            "anthropic.chat",
            attributes={
                **CLAUDE_SDK,
                "gen_ai.usage.output_tokens": 10,
                "llm.token_count.total": 31,
            },
            start_time=100,
        )
        own = sdk.start_span("messages.create", attributes=CLAUDE_SDK, start_time=110)
        own.end(end_time=990)
        theirs.end(end_time=1000)
    spans = by_name(sent)
    assert spans["anthropic.chat"]["flow_xray.usage.counted_in"] == "messages.create"
    counted = spans["messages.create"]
    assert (counted["llm.token_count.prompt"], counted["llm.token_count.completion"]) == (21, 9)
    assert counted["llm.cost.total"] == pytest.approx((21 * 0.8 + 9 * 4.0) / 1e6)
    assert summed(sent, "llm.token_count.total") == summed(sent, "gen_ai.usage.input_tokens") + 9
    assert summed(sent, "llm.token_count.total") == 30
    provider.shutdown()


def test_spans_without_a_figure_pass_at_once(wire: Any) -> None:
    """Nothing without usage waits: each span leaves as it ends."""
    ours_tracer, _, sent, _ = wire
    with ours_tracer.start_as_current_span("agent"):
        with ours_tracer.start_as_current_span("tool"):
            pass
        assert [s.name for s in sent] == ["tool"]


def test_two_calls_one_after_the_other_are_two_requests(wire: Any) -> None:
    """Equal figures in sequence are both counted (the rule's, not a de-duplication by value)."""
    ours_tracer, _, sent, _ = wire
    with ours_tracer.start_as_current_span("agent"):
        for _ in range(2):
            with ours_tracer.start_as_current_span("ask", attributes=GPT):
                pass
    assert summed(sent, "llm.token_count.total") == 38


def test_a_flush_releases_what_is_held(wire: Any) -> None:
    """A span whose child never ends leaves at the flush, with what is known then."""
    ours_tracer, theirs, sent, gate = wire
    ours = ours_tracer.start_span("ask_stream", attributes=GPT)
    theirs.start_span("ChatCompletion", context=trace_api.set_span_in_context(ours))
    ours.end()
    assert sent == []
    gate.release_all()
    assert [s.name for s in sent] == ["ask_stream"]
    assert summed(sent, "llm.token_count.total") == 19


def test_spans_whose_start_was_not_seen_still_count_once() -> None:
    """Spans handed over at their end only (a child process's): a child reporting first
    makes the parent its twin."""
    sent: list[ReadableSpan] = []
    gate = UsageGate(sent.append)
    exporter = InMemorySpanExporter()
    provider = TracerProvider(shutdown_on_exit=False)
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    provider.add_span_processor(SimpleSpanProcessor(exporter))
    ours, theirs = provider.get_tracer("flow_xray"), provider.get_tracer("openinference")
    with (
        ours.start_as_current_span("ask", attributes=GPT),
        theirs.start_as_current_span("ChatCompletion", attributes=OPENINFERENCE),
    ):
        pass
    for span in exporter.get_finished_spans():
        gate.ended(span)
    assert summed(sent, "llm.token_count.total") == 19
    provider.shutdown()


def test_the_export_pipeline_gates_what_it_exports() -> None:
    """`ExportPipeline`'s processor puts the gate before the batch queue."""
    exporter = InMemorySpanExporter()
    pipeline = ExportPipeline(("test", "memory"), exporter)
    provider = TracerProvider(shutdown_on_exit=False)
    provider.add_span_processor(pipeline.processor)
    ours, theirs = provider.get_tracer("flow_xray"), provider.get_tracer("openinference")
    with ours.start_as_current_span("agent"):
        span = ours.start_span("ask_stream", attributes=GPT)
        child = theirs.start_span(
            "ChatCompletion", context=trace_api.set_span_in_context(span), attributes=OPENINFERENCE
        )
        span.end()
        child.end()
    provider.force_flush()
    spans = list(exporter.get_finished_spans())
    assert sorted(s.name for s in spans) == ["ChatCompletion", "agent", "ask_stream"]
    assert summed(spans, "llm.token_count.total") == 19
    assert pipeline.lost == 0
    provider.shutdown()
