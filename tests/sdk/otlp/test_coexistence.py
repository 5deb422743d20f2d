"""flow-xray under a provider someone else installed: it joins, it never takes over."""

from __future__ import annotations

import json

import pytest
from opentelemetry import trace as trace_api
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from flow_xray import trace
from flow_xray.sdk.provider import configure

pytestmark = pytest.mark.usefixtures("clean_otel")


@trace(kind="tool")
def lookup(key: str) -> str:
    return key.upper()


@trace
def pipeline(key: str) -> str:
    return lookup(key) + "!"


def test_user_provider_receives_flow_xray_spans_and_stays_global() -> None:
    """Under a user's provider, @trace spans reach the user's exporter; the global is unchanged."""
    memory = InMemorySpanExporter()
    users = TracerProvider()
    users.add_span_processor(SimpleSpanProcessor(memory))
    trace_api.set_tracer_provider(users)

    returned = configure()
    assert pipeline("k") == "K!"

    assert returned is users
    assert trace_api.get_tracer_provider() is users
    spans = {span.name: span for span in memory.get_finished_spans()}
    assert sorted(spans) == ["lookup", "pipeline"]
    lookup_span = spans["lookup"]
    assert lookup_span.attributes is not None
    assert lookup_span.attributes["openinference.span.kind"] == "TOOL"
    assert json.loads(str(lookup_span.attributes["input.value"])) == {"key": "k"}
    assert lookup_span.parent is not None
    assert lookup_span.parent.span_id == spans["pipeline"].context.span_id


def test_capture_still_collects_under_a_user_provider() -> None:
    """trace.capture() collects the same calls the user's exporter receives."""
    memory = InMemorySpanExporter()
    users = TracerProvider()
    users.add_span_processor(SimpleSpanProcessor(memory))
    trace_api.set_tracer_provider(users)
    configure()

    with trace.capture() as result:
        pipeline("x")

    assert [node.name for node in result] == ["pipeline", "lookup"]
    assert len(memory.get_finished_spans()) == 2


def test_set_global_false_leaves_the_api_provider_unset() -> None:
    """configure(set_global=False) does not make @trace spans go anywhere global."""
    configure(set_global=False)
    assert isinstance(trace_api.get_tracer_provider(), trace_api.ProxyTracerProvider)
    with trace.capture() as result:
        pipeline("y")
    assert [node.name for node in result] == ["pipeline", "lookup"]
