"""Specification of `flow_xray.serialize.limits`: the process-wide caps and their checks."""

from __future__ import annotations

import dataclasses

import pytest

from flow_xray.errors import ConfigurationError
from flow_xray.serialize import (
    Limits,
    get_limits,
    set_limits,
)


# --- limits ------------------------------------------------------------------
def test_default_limits_are_the_documented_caps() -> None:
    """Defaults: 8 KiB per value, 64 KiB per span, depth 8, 200 items, 8192 chars, redaction on."""
    assert dataclasses.astuple(Limits()) == (8192, 65536, 8, 200, 8192, True, (), (), ())


def test_set_limits_replaces_fields_and_get_limits_returns_them(restore_limits: None) -> None:
    """set_limits returns the new process-wide Limits, which get_limits then returns."""
    new = set_limits(max_items=5, redact_patterns=["ssn"])
    assert new == get_limits()
    assert (new.max_items, new.redact_patterns, new.max_depth) == (5, ("ssn",), 8)


def test_set_limits_rejects_unknown_fields(restore_limits: None) -> None:
    """An unknown field name is a ConfigurationError and changes nothing."""
    before = get_limits()
    with pytest.raises(ConfigurationError, match="max_itemz"):
        set_limits(max_itemz=3)
    assert get_limits() == before


@pytest.mark.parametrize("value", [0, -1, 1.5, True, "10", None])
def test_set_limits_rejects_caps_that_are_not_positive_ints(
    value: object, restore_limits: None
) -> None:
    """Caps must be positive ints; anything else is a ConfigurationError."""
    with pytest.raises(ConfigurationError):
        set_limits(max_value_bytes=value)


def test_set_limits_rejects_invalid_regex(restore_limits: None) -> None:
    """A redact pattern that does not compile is a ConfigurationError."""
    with pytest.raises(ConfigurationError, match="bad redact pattern"):
        set_limits(redact_patterns=("([unclosed",))
