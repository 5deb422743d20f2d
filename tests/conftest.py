"""Shared test fixtures.

Tests that need a real external component (headless Chromium, a Phoenix OTLP
server) skip with a reason when it is missing, unless ``FLOW_XRAY_E2E=1`` is
set (CI sets it): then a missing component fails the test.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import NoReturn

import pytest


def _missing(reason: str) -> NoReturn:
    if os.environ.get("FLOW_XRAY_E2E") == "1":
        pytest.fail(f"FLOW_XRAY_E2E=1 but {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def e2e_missing() -> Callable[[str], NoReturn]:
    """Call with a reason when a real component is missing: skips locally, fails in CI."""
    return _missing
