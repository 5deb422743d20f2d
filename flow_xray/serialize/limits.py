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

    ``max_value_bytes`` caps each value (each argument, the output, each
    attribute) as UTF-8 JSON text; ``max_span_bytes`` is what all of a span's
    values share. ``redact`` switches scrubbing on or off as a whole;
    ``redact_patterns`` adds secret-name regexes, ``redact_value_patterns``
    credential regexes for inside text, and ``redact_allow`` lists names and
    format kinds never scrubbed (see `flow_xray.serialize.secrets`).

    Raises:
        ConfigurationError: a cap is not a positive int, `redact` is not a bool,
            or a pattern in `redact_patterns` is not a valid regex.
    """

    max_value_bytes: int = 8192
    max_span_bytes: int = 65536
    max_depth: int = 8
    max_items: int = 200
    max_string: int = 8192
    redact: bool = True
    redact_patterns: tuple[str, ...] = ()
    redact_value_patterns: tuple[str, ...] = ()
    redact_allow: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for name in ("max_value_bytes", "max_span_bytes", "max_depth", "max_items", "max_string"):
            value = getattr(self, name)
            if type(value) is not int or value <= 0:
                raise ConfigurationError(f"{name} must be a positive int, got {value!r}")
        if type(self.redact) is not bool:
            raise ConfigurationError(f"redact must be a bool, got {self.redact!r}")
        for name in ("redact_patterns", "redact_value_patterns", "redact_allow"):
            object.__setattr__(self, name, _strings(name, getattr(self, name)))
        for pattern in (*self.redact_patterns, *self.redact_value_patterns):
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ConfigurationError(f"bad redact pattern {pattern!r}: {exc}") from exc


def _strings(name: str, raw: Any) -> tuple[str, ...]:
    values = (raw,) if isinstance(raw, str) else raw
    if not isinstance(values, Iterable):
        raise ConfigurationError(f"{name} must be a sequence of strings, got {raw!r}")
    values = tuple(values)
    for value in values:
        if not isinstance(value, str):
            raise ConfigurationError(f"{name}: expected a str, got {value!r}")
    return values


class _Settings:
    """The one owner of the process-wide limits: replaced whole, never changed in place."""

    __slots__ = ("limits",)

    def __init__(self) -> None:
        self.limits = Limits()


_SETTINGS: Final = _Settings()
_FIELDS: Final = frozenset(f.name for f in dataclasses.fields(Limits))


def get_limits() -> Limits:
    """Return the process-wide limits used by `@trace`."""
    return _SETTINGS.limits


def set_limits(**changes: Any) -> Limits:
    """Replace some fields of the process-wide limits and return the new `Limits`.

    Example: ``set_limits(max_value_bytes=2048, redact_patterns=(r"ssn",))``.

    Raises:
        ConfigurationError: an unknown field name or an invalid value.
    """
    unknown = sorted(set(changes) - _FIELDS)
    if unknown:
        raise ConfigurationError(f"unknown limit(s): {', '.join(unknown)}")
    new = dataclasses.replace(_SETTINGS.limits, **changes)
    _SETTINGS.limits = new
    return new


def set_redaction(
    enabled: bool | None = None,
    *,
    allow: Iterable[str] | None = None,
    name_patterns: Iterable[str] | None = None,
    value_patterns: Iterable[str] | None = None,
) -> Limits:
    """Configure secret scrubbing (a shorthand for the ``redact*`` fields of `set_limits`).

    Args:
        enabled: False turns all scrubbing off (names and credential formats).
        allow: names never treated as secret (``"session_id"``; compared
            case- and separator-insensitively) and format kinds left alone
            (``"jwt"``, ``"url-password"``, ``"key=value"``; see the README).
        name_patterns: extra regexes searched in argument and key names.
        value_patterns: extra regexes whose matches inside any text become
            ``[REDACTED:custom]``.

    Example: ``set_redaction(allow=("session_id",), value_patterns=(r"\\bACME-[0-9]{8}\\b",))``.

    Raises:
        ConfigurationError: a value of the wrong type or a regex that does not compile.
    """
    changes: dict[str, Any] = {}
    if enabled is not None:
        changes["redact"] = enabled
    for field, value in (
        ("redact_allow", allow),
        ("redact_patterns", name_patterns),
        ("redact_value_patterns", value_patterns),
    ):
        if value is not None:
            changes[field] = value if isinstance(value, str) else tuple(value)
    return set_limits(**changes)
