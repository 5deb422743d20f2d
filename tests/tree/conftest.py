"""Fixtures for the trace-model tests: a user-installed global SDK provider (as tests/tracing
has it), reset after each test, for the tests that check rows against real SDK spans."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from opentelemetry import trace as trace_api
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter


@pytest.fixture
def user_provider(
    otel_globals: Callable[[], None],
) -> Iterator[tuple[TracerProvider, InMemorySpanExporter]]:
    """A TracerProvider the *user* set globally, exporting to memory."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace_api.set_tracer_provider(provider)
    yield provider, exporter
    provider.shutdown()
