"""Which provider is in use, and which tracer ``@trace`` gets: one answer for every caller."""

from __future__ import annotations

import os
from collections.abc import Callable

from opentelemetry import trace as trace_api
from opentelemetry.sdk.trace import TracerProvider

from flow_xray import trace
from flow_xray.runtime import tracer
from flow_xray.sdk.local import RECORDER_ENV, LocalProvider


def test_with_no_global_provider_the_private_one_is_in_use(
    otel_globals: Callable[[], None],
) -> None:
    """No provider set globally: the private provider (once a capture made it), marked private:
    the local recorder, or an SDK provider under ``FLOW_XRAY_RECORDER=sdk``."""
    with trace.capture():
        provider, private = tracer.provider_in_use()
    assert private and provider is tracer.private_provider() and provider is not None
    expected = TracerProvider if os.environ.get(RECORDER_ENV) == "sdk" else LocalProvider
    assert type(provider) is expected


def test_a_global_provider_is_the_one_in_use(otel_globals: Callable[[], None]) -> None:
    """Once a provider is set globally, it is the answer, whatever the private one is."""
    users = TracerProvider()
    trace_api.set_tracer_provider(users)
    try:
        assert tracer.provider_in_use() == (users, False)
    finally:
        users.shutdown()


def test_outside_captures_with_no_provider_there_is_no_tracer(
    otel_globals: Callable[[], None],
) -> None:
    """The private provider serves captures only: outside one, ``@trace`` gets no tracer."""
    with trace.capture():
        inside = tracer.current_tracer()
    assert inside is not None and tracer.current_tracer() is None
