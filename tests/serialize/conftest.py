"""Fixtures for the `flow_xray.serialize` tests: the process-wide limits restored."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import pytest

from flow_xray.serialize import Limits, get_limits, set_limits


@pytest.fixture
def restore_limits() -> Iterator[None]:
    saved = get_limits()
    yield
    set_limits(**{f.name: getattr(saved, f.name) for f in dataclasses.fields(Limits)})
