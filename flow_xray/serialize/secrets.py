"""Which names hold secrets: argument names and mapping keys replaced by ``"[REDACTED]"``."""

from __future__ import annotations

import itertools
import re
from typing import Final

from flow_xray.serialize.limits import Limits

REDACTED: Final = "[REDACTED]"
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
