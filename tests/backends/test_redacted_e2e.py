"""End to end: exporters/redacted.yaml run by the real Collector deletes payloads, and only them.

The agent's LLM span carries flow-xray's ``input.value``/``output.value`` plus
the OpenInference and GenAI message attributes an LLM instrumentation writes;
the trace goes through the unchanged config into Jaeger v2 and is read back.
"""

from __future__ import annotations

import re

import pytest

from tests.backends.landing import Landed, land
from tests.backends.servers import Collector, Jaeger

pytestmark = pytest.mark.e2e

SERVICE = "flow-xray-e2e-redacted"
# What must not leave the Collector, stated independently of the config.
PAYLOAD = re.compile(
    r"^(input\.value|output\.value|gen_ai\.input\.messages|gen_ai\.system_instructions"
    r"|llm\.(input|output)_messages\..*)$"
)


@pytest.fixture(scope="module")
def landed(
    redacted_collector: Collector, jaeger: Jaeger, tmp_path_factory: pytest.TempPathFactory
) -> Landed:
    """The agent's trace, sent once through exporters/redacted.yaml, as Jaeger returns it."""
    return land(redacted_collector, jaeger, tmp_path_factory.mktemp("run-redacted"), SERVICE)


def test_sent_spans_carry_the_payloads(landed: Landed) -> None:
    """The spans flow-xray sent do hold inputs, outputs and chat messages (so the check bites)."""
    plan = landed.run.by_name()["plan"].attributes
    assert {
        "input.value",
        "output.value",
        "llm.input_messages.0.message.content",
        "llm.output_messages.0.message.content",
        "gen_ai.input.messages",
        "gen_ai.system_instructions",
    } <= set(plan)
    assert all("input.value" in span.attributes for span in landed.run.spans.values())


def test_backend_holds_no_payload_attributes(landed: Landed) -> None:
    """No span in the backend has input.value, output.value or a message attribute."""
    leaked = {
        item.span.name: sorted(key for key in item.span.attributes if PAYLOAD.match(key))
        for item in landed.stored.values()
    }
    assert leaked == {name: [] for name in leaked}
    assert len(leaked) == len(landed.run.spans)


def test_everything_else_arrives_unchanged(landed: Landed) -> None:
    """Every other attribute, the tree, the status and the exception event arrive as sent."""
    for span_id, sent in landed.run.spans.items():
        stored = landed.stored[span_id].span
        kept = {key: value for key, value in sent.attributes.items() if not PAYLOAD.match(key)}
        assert stored.attributes == kept, sent.name
        assert (stored.name, stored.parent_id, stored.status) == (
            sent.name,
            sent.parent_id,
            sent.status,
        )
        assert stored.events == sent.events, sent.name
    plan = landed.by_name()["plan"].span.attributes
    assert plan["llm.token_count.total"] == 160
    assert plan["openinference.span.kind"] == "LLM"
    assert landed.by_name()["agent"].span.attributes["flow_xray.meta.tenant"] == "acme"
