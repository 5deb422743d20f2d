"""Shared test fixtures.

Tests that need a real external component (headless Chromium, a Phoenix OTLP
server) skip with a reason when it is missing, unless ``FLOW_XRAY_E2E=1`` is
set (CI sets it): then a missing component fails the test.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable, Iterator
from typing import NoReturn

import pytest
from opentelemetry import trace as trace_api
from opentelemetry.util._once import Once

# A test run started in the background (``cmd &`` in a script) ignores SIGINT, and every
# child inherits that: Python then installs no KeyboardInterrupt handler in it, so a test
# that stops a child with Ctrl-C would wait for a process that never notices. A handler of
# ours is reset to the default in a child, where ignoring would have been inherited.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every end-to-end test is slow too, so ``-m "not slow"`` is the whole inner loop."""
    for item in items:
        if item.get_closest_marker("e2e") is not None:
            item.add_marker(pytest.mark.slow)


def _missing(reason: str) -> NoReturn:
    if os.environ.get("FLOW_XRAY_E2E") == "1":
        pytest.fail(f"FLOW_XRAY_E2E=1 but {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def e2e_missing() -> Callable[[str], NoReturn]:
    """Call with a reason when a real component is missing: skips locally, fails in CI."""
    return _missing


def reset_otel_globals() -> None:
    """Forget the global TracerProvider, so the next test may set one again.

    The OpenTelemetry API allows setting it once per process; its own test
    utilities (opentelemetry-test-utils ``reset_trace_globals``) reset these
    two private names the same way. This is the suite's one copy of that.
    """
    trace_api._TRACER_PROVIDER_SET_ONCE = Once()
    trace_api._TRACER_PROVIDER = None


@pytest.fixture
def otel_globals() -> Iterator[Callable[[], None]]:
    """No global TracerProvider before or after the test; yields the reset function."""
    reset_otel_globals()
    yield reset_otel_globals
    reset_otel_globals()
