"""Fixtures for the LLM tests: the fake OpenAI/Anthropic server and the real client libraries.

The client libraries and instrumentors are in the ``e2e`` extra. When one is
missing the tests that need it skip, except under ``FLOW_XRAY_E2E=1`` (CI),
where a missing library fails them.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Iterator
from typing import NoReturn

import pytest
from opentelemetry import trace as trace_api
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from tests.conftest import reset_otel_globals
from tests.llm.fake_llm import FakeLLM, RunningServer
from tests.sdk.otlp.conftest import (
    otlp_receiver as otlp_receiver,  # the export tests' OTLP/HTTP receiver, shared
)

LIBRARIES = {
    "openai": "openai",
    "anthropic": "anthropic",
    "openinference": "openinference.instrumentation.openai",
    "openinference-anthropic": "openinference.instrumentation.anthropic",
    "otel-v2": "opentelemetry.instrumentation.openai_v2",
    "openllmetry": "opentelemetry.instrumentation.openai",
    "opentelemetry.distro": "opentelemetry.distro",
}


@pytest.fixture(scope="session")
def fake_server() -> Iterator[FakeLLM]:
    """The fake server, started once per session on 127.0.0.1 and stopped at the end."""
    running = RunningServer()
    yield running.fake
    running.stop()


@pytest.fixture
def fake_llm(fake_server: FakeLLM) -> FakeLLM:
    """The fake server with an empty call log."""
    fake_server.reset()
    return fake_server


@pytest.fixture(scope="session")
def need(e2e_missing: Callable[[str], NoReturn]) -> Callable[[str], None]:
    """``need("openai")``: skip (or fail in CI) unless that library of the e2e extra imports."""

    def check(*names: str) -> None:
        for name in names:
            for part in name.split(","):
                module = LIBRARIES.get(part, part)
                try:
                    found = importlib.util.find_spec(module) is not None
                except ModuleNotFoundError:
                    found = False
                if not found:
                    e2e_missing(f"{module} is not installed (pip install -e '.[e2e]')")

    return check


@pytest.fixture
def user_provider() -> Iterator[tuple[TracerProvider, InMemorySpanExporter]]:
    """A TracerProvider the *user* set globally, exporting to memory; forgotten afterwards."""
    reset_otel_globals()
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace_api.set_tracer_provider(provider)
    yield provider, exporter
    provider.shutdown()
    reset_otel_globals()
