"""End to end: `flow-xray run` -> Collector with exporters/jaeger.yaml -> Jaeger v2 -> query API.

The Collector runs the repository's config unchanged (its endpoints set only
through its variables); Jaeger keeps spans in memory. The agent's trace is
read back with ``GET /api/traces/ID``, the request Jaeger's UI makes.
"""

from __future__ import annotations

import json

import pytest

from tests.backends.landing import Landed, land
from tests.backends.servers import Collector, Jaeger

pytestmark = pytest.mark.e2e

SERVICE = "flow-xray-e2e-jaeger"


@pytest.fixture(scope="module")
def landed(
    jaeger_collector: Collector, jaeger: Jaeger, tmp_path_factory: pytest.TempPathFactory
) -> Landed:
    """The agent's trace, sent once through exporters/jaeger.yaml, as Jaeger returns it."""
    return land(jaeger_collector, jaeger, tmp_path_factory.mktemp("run-jaeger"), SERVICE)


def test_every_span_arrives_under_its_name(landed: Landed) -> None:
    """Jaeger holds each span flow-xray sent, with the same span id and operation name."""
    sent = {span_id: span.name for span_id, span in landed.run.spans.items()}
    assert {span_id: item.span.name for span_id, item in landed.stored.items()} == sent
    assert sorted(sent.values()) == ["agent", "fetch", "plan", "rank", "search"]


def test_parent_links_arrive(landed: Landed) -> None:
    """Each span's CHILD_OF reference names the parent it had; the agent is the only root."""
    sent = {span_id: span.parent_id for span_id, span in landed.run.spans.items()}
    assert {span_id: item.span.parent_id for span_id, item in landed.stored.items()} == sent
    spans = landed.by_name()
    agent_id = spans["agent"].span.span_id
    assert spans["agent"].span.parent_id is None
    assert {
        name: spans[name].span.parent_id for name in ("plan", "search", "fetch")
    } == dict.fromkeys(("plan", "search", "fetch"), agent_id)
    assert spans["rank"].span.parent_id == spans["search"].span.span_id


def test_span_kinds_arrive(landed: Landed) -> None:
    """openinference.span.kind arrives on every span: AGENT, LLM, TOOL, CHAIN."""
    kinds = {
        name: item.span.attributes["openinference.span.kind"]
        for name, item in landed.by_name().items()
    }
    assert kinds == {
        "agent": "AGENT",
        "plan": "LLM",
        "search": "TOOL",
        "fetch": "TOOL",
        "rank": "CHAIN",
    }


def test_inputs_and_outputs_arrive(landed: Landed) -> None:
    """input.value and output.value arrive as written: JSON for data, plain text for a string."""
    spans = landed.by_name()
    assert json.loads(spans["search"].span.attributes["input.value"]) == {
        "query": "backends",
        "limit": 2,
    }
    assert json.loads(spans["rank"].span.attributes["output.value"]) == [
        "backends-a",
        "backends-b",
    ]
    agent = spans["agent"].span.attributes
    assert (agent["output.value"], agent["output.mime_type"]) == ("partial answer", "text/plain")


def test_token_attributes_arrive(landed: Landed) -> None:
    """The LLM span's model, token counts and cost arrive as numbers of the right type."""
    attributes = landed.by_name()["plan"].span.attributes
    assert attributes["gen_ai.request.model"] == "gpt-4o-mini"
    assert attributes["gen_ai.usage.input_tokens"] == 120
    assert attributes["gen_ai.usage.output_tokens"] == 40
    assert attributes["llm.token_count.total"] == 160
    sent = landed.run.by_name()["plan"].attributes
    assert isinstance(attributes["llm.cost.total"], float)
    assert attributes["llm.cost.total"] == sent["llm.cost.total"]


def test_error_status_and_exception_event_arrive(landed: Landed) -> None:
    """The failed call is ERROR with its message, and its exception event keeps type and stack."""
    fetch = landed.by_name()["fetch"]
    assert fetch.span.status == "ERROR"
    assert fetch.derived["error"] is True
    assert "upstream slow" in (fetch.span.status_message or "")
    ((name, fields),) = fetch.span.events
    assert name == "exception"
    assert fields["exception.type"] == "TimeoutError"
    assert fields["exception.message"] == "upstream slow: https://example.invalid/backends-a"
    assert "raise TimeoutError" in fields["exception.stacktrace"]
    others = [item for item in landed.stored.values() if item.span.name != "fetch"]
    assert {item.span.status for item in others} == {"OK"}  # calls that returned are OK


def test_resource_arrives_as_the_process(landed: Landed) -> None:
    """Every span's process has the run's service.name and the rest of its resource."""
    for item in landed.stored.values():
        assert item.process["service.name"] == SERVICE
        assert item.process == landed.run.resource


def test_every_attribute_arrives_unchanged(landed: Landed) -> None:
    """Each span's tags are exactly the attributes flow-xray sent, and its events too."""
    for span_id, sent in landed.run.spans.items():
        stored = landed.stored[span_id].span
        assert stored.attributes == sent.attributes, sent.name
        assert stored.events == sent.events, sent.name
