"""Fixtures for tracing tests: a user-installed global SDK provider, reset after each test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from opentelemetry import trace as trace_api
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.util._once import Once


def _reset_global_provider() -> None:
    # The API allows setting the global provider once per process; tests need a clean slate.
    trace_api._TRACER_PROVIDER_SET_ONCE = Once()
    trace_api._TRACER_PROVIDER = None


@pytest.fixture
def user_provider() -> Iterator[tuple[TracerProvider, InMemorySpanExporter]]:
    """A TracerProvider the *user* set globally, exporting to memory."""
    _reset_global_provider()
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace_api.set_tracer_provider(provider)
    yield provider, exporter
    provider.shutdown()
    _reset_global_provider()
