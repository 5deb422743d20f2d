"""Every server the backend tests start listens on 127.0.0.1 only."""

from __future__ import annotations

import pytest

from tests.backends.servers import Collector, Jaeger, listening_addresses

pytestmark = pytest.mark.e2e

COLLECTORS = [
    "jaeger_collector",
    "tempo_collector",
    "redacted_collector",
    "debug_collector",
    "file_collector",
]


def test_jaeger_listens_on_loopback_only(jaeger: Jaeger) -> None:
    """Jaeger's OTLP receiver and query API (HTTP and gRPC) bind 127.0.0.1, nothing else."""
    addresses = listening_addresses(jaeger.server.process.pid)
    assert len(addresses) == 3
    assert {address for address, _ in addresses} == {"127.0.0.1"}


@pytest.mark.parametrize("fixture", COLLECTORS)
def test_collector_listens_on_loopback_only(fixture: str, request: pytest.FixtureRequest) -> None:
    """A Collector's receivers, health check and metrics (4 ports) all bind 127.0.0.1."""
    started = request.getfixturevalue(fixture)
    collector: Collector = started[0] if isinstance(started, tuple) else started
    addresses = listening_addresses(collector.server.process.pid)
    assert len(addresses) == 4
    assert {address for address, _ in addresses} == {"127.0.0.1"}
