"""Real OTLP/HTTP receivers answer successes that count as delivered: no span reported lost.

flow-xray counts a span as delivered only when the answer is an OTLP success
(`flow_xray.sdk.otlp_response`); this checks that the answers of a real
backend (Arize Phoenix) pass that test, so the stricter reading never reports
delivered spans as lost. The real Collector's answers are checked in
``tests/backends/test_http_answers_e2e.py``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import pytest
from opentelemetry import trace as trace_api

from flow_xray.sdk import provider as flow_provider
from tests.sdk.otlp.phoenix_server import Phoenix

pytestmark = pytest.mark.e2e


def test_phoenix_answers_count_as_delivered(
    phoenix: Phoenix,
    clean_otel: None,
    caplog: pytest.LogCaptureFixture,
    otel_globals: Callable[[], None],
) -> None:
    """5 spans over OTLP/HTTP to Phoenix: all stored, none reported lost."""
    project = "flow-xray-answers"
    provider = flow_provider.configure(
        endpoint=phoenix.http_url,
        protocol="http/protobuf",
        resource_attributes={"openinference.project.name": project},
        set_global=False,
    )
    tracer = provider.get_tracer("answers")
    for i in range(5):
        with tracer.start_as_current_span(f"answer-{i}"):
            pass
    assert trace_api.get_tracer_provider() is not provider
    with caplog.at_level(logging.WARNING, logger="flow_xray"):
        flow_provider.shutdown(timeout_s=10.0)
    assert [r.getMessage() for r in caplog.records if "not exported" in r.getMessage()] == []
    stored = phoenix.wait_for_spans(project, 5)
    assert sorted(span["name"] for span in stored) == [f"answer-{i}" for i in range(5)]
