"""Fixtures for the SDK-side tests: the user-installed global provider of the tracing tests."""

from __future__ import annotations

# A TracerProvider the *user* set globally, exporting to memory.
from tests.tracing.conftest import user_provider  # noqa: F401 (a fixture used here too)
