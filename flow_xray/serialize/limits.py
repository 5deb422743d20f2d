"""Caps on captured values: the process-wide `Limits`.

They are read on every traced call (`get_limits`) and changed with `set_limits`.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable
from typing import Any, Final

from flow_xray.errors import ConfigurationError


@dataclasses.dataclass(frozen=True, slots=True)
class Limits:
    """Caps and redaction settings for captured values.

    Raises:
        ConfigurationError: a cap is not a positive int, `redact` is not a bool,
            or a pattern in `redact_patterns` is not a valid regex.
    """

    max_value_bytes: int = 8192
    max_span_bytes: int = 65536
    max_depth: int = 8
    max_items: int = 200
    max_string: int = 4096
    redact: bool = True
    redact_patterns: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for name in ("max_value_bytes", "max_span_bytes", "max_depth", "max_items", "max_string"):
            value = getattr(self, name)
            if type(value) is not int or value <= 0:
                raise ConfigurationError(f"{name} must be a positive int, got {value!r}")
        if type(self.redact) is not bool:
            raise ConfigurationError(f"redact must be a bool, got {self.redact!r}")
        raw: Any = self.redact_patterns
        patterns = (raw,) if isinstance(raw, str) else raw
        if not isinstance(patterns, Iterable):
            raise ConfigurationError(f"redact_patterns must be a sequence of regexes, got {raw!r}")
        patterns = tuple(patterns)
        for pattern in patterns:
            if not isinstance(pattern, str):
                raise ConfigurationError(f"redact pattern must be a str, got {pattern!r}")
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ConfigurationError(f"bad redact pattern {pattern!r}: {exc}") from exc
        object.__setattr__(self, "redact_patterns", patterns)


_current = Limits()
_FIELDS: Final = frozenset(f.name for f in dataclasses.fields(Limits))


def get_limits() -> Limits:
    """Return the process-wide limits used by `@trace`."""
    return _current


def set_limits(**changes: Any) -> Limits:
    """Replace some fields of the process-wide limits and return the new `Limits`.

    Example: ``set_limits(max_value_bytes=2048, redact_patterns=(r"ssn",))``.

    Raises:
        ConfigurationError: an unknown field name or an invalid value.
    """
    global _current
    unknown = sorted(set(changes) - _FIELDS)
    if unknown:
        raise ConfigurationError(f"unknown limit(s): {', '.join(unknown)}")
    _current = dataclasses.replace(_current, **changes)
    return _current
