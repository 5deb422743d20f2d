"""End to end: `flow-xray run` -> Collector with exporters/tempo.yaml -> an OTLP/gRPC backend.

Tempo itself is not run here (see deploy/README.md): ``TEMPO_OTLP_ENDPOINT``
points the unchanged config at Jaeger v2's OTLP/gRPC receiver, the same
protocol and port Tempo's distributor serves. What this shows is the config's
part: the Collector starts with it and forwards every span intact.
"""

from __future__ import annotations

import pytest

from tests.backends.landing import Landed, land
from tests.backends.servers import Collector, Jaeger

pytestmark = pytest.mark.e2e

SERVICE = "flow-xray-e2e-tempo-config"


@pytest.fixture(scope="module")
def landed(
    tempo_collector: Collector, jaeger: Jaeger, tmp_path_factory: pytest.TempPathFactory
) -> Landed:
    """The agent's trace, sent once through exporters/tempo.yaml."""
    return land(tempo_collector, jaeger, tmp_path_factory.mktemp("run-tempo"), SERVICE)


def test_tempo_config_forwards_every_span_with_its_parent(landed: Landed) -> None:
    """Every span sent arrives under its name and with its parent link."""
    sent = {span_id: (s.name, s.parent_id) for span_id, s in landed.run.spans.items()}
    stored = {span_id: (i.span.name, i.span.parent_id) for span_id, i in landed.stored.items()}
    assert stored == sent


def test_tempo_config_forwards_attributes_status_and_events_unchanged(landed: Landed) -> None:
    """Attributes, status, exception event and resource arrive exactly as flow-xray sent them."""
    for span_id, sent in landed.run.spans.items():
        stored = landed.stored[span_id]
        assert stored.span.attributes == sent.attributes, sent.name
        assert stored.span.events == sent.events, sent.name
        assert stored.span.status == sent.status, sent.name
        assert stored.process == landed.run.resource
    assert landed.by_name()["fetch"].span.status == "ERROR"
