"""The real Collector's OTLP/HTTP answers count as delivered: no span reported lost.

flow-xray counts a span as delivered only when the answer is an OTLP success
(`flow_xray.sdk.otlp_response`). Spans sent over OTLP/HTTP to a real
OpenTelemetry Collector in front of a real Jaeger arrive in Jaeger, and no
warning says they were lost.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable

import pytest

from flow_xray.sdk import provider as flow_provider
from tests.backends.servers import Collector, Jaeger

pytestmark = pytest.mark.e2e


def test_collector_answers_count_as_delivered(
    jaeger_collector: Collector,
    jaeger: Jaeger,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
    otel_globals: Callable[[], None],
) -> None:
    """5 spans through the Collector's OTLP/HTTP receiver: all reach Jaeger, none counted lost."""
    for name in list(os.environ):
        if name.startswith("OTEL_"):
            monkeypatch.delenv(name)
    provider = flow_provider.configure(
        endpoint=jaeger_collector.http_url,
        protocol="http/protobuf",
        service_name="flow-xray-http-answers",
        set_global=False,
    )
    tracer = provider.get_tracer("answers")
    with tracer.start_as_current_span("root") as root:
        for i in range(4):
            with tracer.start_as_current_span(f"child-{i}"):
                pass
    trace_id = f"{root.get_span_context().trace_id:032x}"
    with caplog.at_level(logging.WARNING, logger="flow_xray"):
        flow_provider.shutdown(timeout_s=10.0)
    assert [r.getMessage() for r in caplog.records if "not exported" in r.getMessage()] == []
    stored = jaeger.wait_for_trace(trace_id, 5)
    assert len(stored["data"][0]["spans"]) == 5
