"""Caps on captured values and the secret-name rule for redaction.

The process-wide `Limits` are read on every traced call (`get_limits`) and
changed with `set_limits`; `is_secret_name` decides which argument names and
mapping keys are replaced by ``"[REDACTED]"``.
"""

from __future__ import annotations

import dataclasses
import itertools
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


# --- secret names ------------------------------------------------------------
_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_SECRET_WORDS: Final = frozenset(
    {
        *("secret", "secrets", "apikey", "apikeys", "authorization"),
        *("cookie", "cookies", "credential", "credentials"),
        *("accesstoken", "refreshtoken", "privatekey"),
    }
)
_SECRET_PAIRS: Final = frozenset(
    {("api", "key"), ("api", "keys"), ("access", "token"), ("refresh", "token")}
    | {("private", "key")}
)
# Per pattern set: name -> verdict. Argument and key names repeat endlessly, so
# the classification is computed once per name.
_SECRET_CACHE: dict[tuple[str, ...], dict[str, bool]] = {}
_CACHE_CAP: Final = 4096
_NAME_CAP: Final = 256


def _classify(name: str, patterns: tuple[str, ...]) -> bool:
    lowered = name.lower()
    if "password" in lowered or "passwd" in lowered:
        return True
    words = [w.lower() for w in _WORD.findall(name)]
    if any(w in _SECRET_WORDS for w in words):
        return True
    if any(pair in _SECRET_PAIRS for pair in itertools.pairwise(words)):
        return True
    return any(re.search(p, name, re.IGNORECASE) for p in patterns)


def secret_name_cache(limits: Limits) -> dict[str, bool]:
    """The name -> verdict cache for these limits' patterns (names repeat endlessly)."""
    cache = _SECRET_CACHE.get(limits.redact_patterns)
    if cache is None:
        if len(_SECRET_CACHE) > 64:
            _SECRET_CACHE.clear()
        cache = _SECRET_CACHE[limits.redact_patterns] = {}
    return cache


def is_secret_name(name: str, limits: Limits) -> bool:
    """Tell whether a value stored under `name` is replaced by `REDACTED` under `limits`.

    Names are split into words at separators and camelCase boundaries, so
    ``OPENAI_API_KEY``, ``X-Api-Key``, ``dbPassword`` and ``client_secret`` are
    secret while ``max_tokens`` and ``prompt_tokens`` are not. Always False
    when `limits.redact` is off.
    """
    if not limits.redact or not isinstance(name, str):
        return False
    cache = secret_name_cache(limits)
    verdict = cache.get(name)
    if verdict is None:
        verdict = _classify(name[:_NAME_CAP], limits.redact_patterns)
        if len(name) <= _NAME_CAP:
            if len(cache) >= _CACHE_CAP:
                cache.clear()
            cache[name] = verdict
    return verdict
