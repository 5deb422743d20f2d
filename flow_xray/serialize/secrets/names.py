"""Secret-looking names, and whether the value stored under one is hidden. No OpenTelemetry.

A name (an argument, a mapping key at any depth, an ``attributes=`` key, the
``name`` of ``name=value`` inside text) is split into words at separators and
camelCase. It is secret when it holds ``password``/``passwd``/``passphrase``; a
word among `SECRET_WORDS`; a pair such as ``api key`` (`SECRET_PAIRS`); or ends
in ``token``, ``auth``, ``session``, ``pass`` or ``pwd``. ``Limits.redact_patterns``
adds regexes, ``Limits.redact_allow`` names that are never secret.

Most secret names hide whatever they hold. A few also name ordinary values,
and there the value decides (`hides_value`):

- ``token`` and ``*_token`` / ``session``: hidden when the value is a string that
  could be a credential (8+ characters of a token's alphabet mixing letters and
  digits or cases, or 32+ of them); a logprobs entry's ``" Paris"``, a token id,
  ``"<pad>"``, a session object's repr or a dict stay (a dict is walked, its own
  keys judged). ``pad_token``, ``next_token``, ``page_token`` and the other
  tokenizer and pagination names of `PLAIN_TOKEN_WORDS` are not secret at all.
- ``pwd`` / ``pass`` (``PWD``, ``OLDPWD``, ``DB_PASS``): hidden unless the value is a
  path (the shell's working directory), a number, a boolean or ``None``.
"""

from __future__ import annotations

import itertools
import re
from typing import Any, Final, Generic, TypeVar

from flow_xray.serialize.limits import Limits

T = TypeVar("T")

REDACTED: Final = "[REDACTED]"
_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_SEPARATORS = re.compile(r"[^0-9a-z]+")
SECRET_WORDS: Final = frozenset(
    {
        *("secret", "secrets", "apikey", "apikeys", "authorization", "bearer", "passwd"),
        *("cookie", "cookies", "credential", "credentials", "accesstoken", "refreshtoken"),
        *("authtoken", "privatekey", "secretkey", "jwt", "csrf", "xsrf", "csrftoken"),
        *("xsrftoken", "sessionid", "sessid", "accountkey", "sharedaccesskey", "clientsecret"),
    }
)
# A name ending in one of these words: ``auth_token``, ``id_token``, ``basic_auth``.
# Not when another word follows (``token_count``, ``auth_method``).
SECRET_LAST_WORDS: Final = frozenset({"token", "auth", "session", "pass", "pwd", "oldpwd"})
SECRET_PAIRS: Final = frozenset(
    {("api", "key"), ("api", "keys"), ("access", "token"), ("refresh", "token")}
    | {("private", "key"), ("session", "id"), ("session", "key"), ("session", "token")}
    | {(owner, "key") for owner in ("secret", "signing", "encryption", "master", "client")}
    | {(owner, "key") for owner in ("auth", "ssh", "account", "access", "app", "application")}
    | {("subscription", "key"), ("license", "key"), ("admin", "key"), ("service", "key")}
)
# ``<word>_token`` names of tokenizers (special tokens) and of pagination and
# cancellation: never credentials.
PLAIN_TOKEN_WORDS: Final = frozenset(
    {
        *("pad", "bos", "eos", "unk", "sep", "cls", "mask", "eot", "eom", "fim", "im"),
        *("begin", "start", "end", "stop", "special", "added", "image", "audio", "video"),
        *("vision", "placeholder", "boundary", "delimiter", "padding", "newline", "think"),
        *("decoder", "prefix", "suffix", "middle", "next", "prev", "previous", "page"),
        *("continuation", "pagination", "cursor", "cancellation", "cancel", "sync", "resume"),
        *("max", "num", "last", "first", "chat", "tool", "system", "text", "word", "sample"),
    }
)
# The last words whose value decides (see the module docstring), by the rule they follow.
_TOKEN_LIKE: Final = frozenset({"token", "session"})
_PATH_LIKE: Final = frozenset({"pwd", "oldpwd", "pass"})
NAME_CACHE_CAP: Final = 4096
_NAME_CAP: Final = 256
# Per (extra patterns, allow-list): name -> verdict. Names repeat endlessly.
_SECRET_CACHE: dict[tuple[tuple[str, ...], tuple[str, ...]], dict[str, bool]] = {}
# Per extra patterns: secret name -> the rule its value follows: "" (always hidden),
# "token" or "path" (a name the user's patterns match is always hidden).
_VALUE_RULES: dict[tuple[str, ...], dict[str, str]] = {}


def normalized_name(name: str) -> str:
    """``name`` lowercased without separators: how allow-list entries are compared."""
    return _SEPARATORS.sub("", name.lower())


def name_pattern(name: str) -> str:
    """A ``Limits.redact_patterns`` regex for exactly ``name``, compared as allow-list entries
    are (case and separators ignored): ``@trace(redact={"user_id"})`` catches ``userId``."""
    letters = normalized_name(name)
    if not letters:
        return "(?!)"  # no letters to compare: a name nothing matches
    gap = "[^0-9a-z]*"  # the search is case-insensitive: no letter of either case
    return "^" + gap + gap.join(map(re.escape, letters)) + gap + "$"


def _words(name: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(name)]


def _by_default(name: str, words: list[str]) -> str | None:
    """The value rule of a name secret by the built-in rules ("", "token", "path"), else None."""
    lowered = name.lower()
    if "password" in lowered or "passwd" in lowered or "passphrase" in lowered:
        return ""
    if not words:
        return None
    if any(w in SECRET_WORDS for w in words) or "".join(words) in SECRET_WORDS:
        return ""
    if any(pair in SECRET_PAIRS for pair in itertools.pairwise(words)):
        return ""
    last = words[-1]
    if last.endswith("token") and last != "token":  # ``identitytoken``, ``bottoken``
        return ""
    if last not in SECRET_LAST_WORDS:
        return None
    if last == "token" and len(words) > 1:
        if words[-2] in PLAIN_TOKEN_WORDS or (len(words) > 2 and words[-3] in PLAIN_TOKEN_WORDS):
            return None  # ``pad_token``, ``next_page_token``
        return ""  # ``auth_token``, ``github_token``, ``X-Vault-Token``
    if last in _TOKEN_LIKE:
        return "token"
    return "path" if last in _PATH_LIKE else ""


def _value_rules(limits: Limits) -> dict[str, str]:
    rules = _VALUE_RULES.get(limits.redact_patterns)
    if rules is None or len(rules) >= NAME_CACHE_CAP:
        if len(_VALUE_RULES) > 64:
            _VALUE_RULES.clear()
        rules = _VALUE_RULES[limits.redact_patterns] = {}
    return rules


def _value_rule(name: str, limits: Limits) -> str | None:
    """The value rule of ``name`` (see `_by_default`), None when it is not secret."""
    if any(re.search(p, name, re.IGNORECASE) for p in limits.redact_patterns):
        return ""
    rule = _by_default(name, _words(name))
    if rule is None and len(name) >= 8:  # a name that is itself a credential
        from flow_xray.serialize.secrets.scan import scrub_text  # noqa: PLC0415 (a cycle)

        if scrub_text(name, limits) is not name:
            return ""
    return rule


def _classify(name: str, limits: Limits) -> bool:
    if limits.redact_allow and normalized_name(name) in _allowed(limits):
        return False
    rule = _value_rule(name, limits)
    if rule is None:
        return False
    _value_rules(limits)[name] = rule
    return True


def _allowed(limits: Limits) -> frozenset[str]:
    return frozenset(normalized_name(a) for a in limits.redact_allow)


def secret_name_cache(limits: Limits) -> dict[str, bool]:
    """The name -> verdict cache for these limits' patterns and allow-list."""
    last_limits, cache = _LAST_SECRET.pair
    if last_limits is limits:  # (every traced call asks, twice, mostly for the same limits)
        return cache
    key = (limits.redact_patterns, limits.redact_allow)
    found = _SECRET_CACHE.get(key)
    if found is None:
        if len(_SECRET_CACHE) > 64:
            _SECRET_CACHE.clear()
            _PLAIN_NAMES.clear()
        found = _SECRET_CACHE[key] = {}
    _LAST_SECRET.pair = (limits, found)  # one swap: a reader never mixes two limits' caches
    return found


class LastFor(Generic[T]):
    """What a per-limits cache function gave last and the limits it was for, held as one
    pair and replaced whole (one swap: a reader never pairs one limits with another's)."""

    __slots__ = ("pair",)

    def __init__(self, empty: T) -> None:
        self.pair: tuple[Limits | None, T] = (None, empty)


_LAST_SECRET: Final[LastFor[dict[str, bool]]] = LastFor({})


# The names of `secret_name_cache` found not secret, as a set: a dict whose keys are
# all in it is told apart in one C call (`flow_xray.serialize.fast`).
_PLAIN_NAMES: dict[tuple[tuple[str, ...], tuple[str, ...]], set[str]] = {}


def plain_names(limits: Limits) -> set[str]:
    """Names `is_secret_name` found not secret under ``limits`` (at most 256 characters)."""
    last_limits, names = _LAST_PLAIN.pair
    if last_limits is limits and len(names) < NAME_CACHE_CAP:
        return names
    key = (limits.redact_patterns, limits.redact_allow)
    found = _PLAIN_NAMES.get(key)
    if found is None or len(found) >= NAME_CACHE_CAP:
        found = _PLAIN_NAMES[key] = set()
    _LAST_PLAIN.pair = (limits, found)  # one swap: a reader never mixes two limits' sets
    return found


_LAST_PLAIN: Final[LastFor[set[str]]] = LastFor(set())


def is_secret_name(name: str, limits: Limits) -> bool:
    """Tell whether a value stored under `name` may be replaced by `REDACTED` under `limits`.

    ``OPENAI_API_KEY``, ``X-Auth-Token``, ``dbPassword``, ``session_id`` and
    ``client_secret`` are secret; ``max_tokens``, ``prompt_tokens`` and ``pad_token``
    are not. For ``token``, ``session``, ``PWD`` and their kin the value decides
    (`hides_value`). Always False when `limits.redact` is off.
    """
    if not limits.redact or not isinstance(name, str):
        return False
    cache = secret_name_cache(limits)
    verdict = cache.get(name)
    if verdict is None:
        verdict = _classify(name[:_NAME_CAP], limits)
        if len(name) <= _NAME_CAP:
            if len(cache) >= NAME_CACHE_CAP:
                cache.clear()
            cache[name] = verdict
            if not verdict:
                plain_names(limits).add(name)
    return verdict


# A string a token could be: its alphabet only, 8+ characters.
_TOKEN_SHAPE = re.compile(r"[A-Za-z0-9._~+/=:-]{8,}")
_MIXED = re.compile(r"[0-9].*[A-Za-z]|[A-Za-z].*[0-9]|[a-z].*[A-Z]|[A-Z].*[a-z]", re.DOTALL)
_PATH = re.compile(r"(?:[/~]|[A-Za-z]:[\\/]|\\\\)")


def could_be_token(text: str) -> bool:
    """Whether ``text`` could be a credential: 8+ characters of a token's alphabet (no blank,
    no ``<``, ``|``...), mixing letters with digits or both cases, or 32+ of them."""
    if _TOKEN_SHAPE.fullmatch(text) is None:
        return False
    return len(text) >= 32 or _MIXED.search(text) is not None


def hides_value(name: str, value: Any, limits: Limits) -> bool:
    """Whether the value stored under the secret name ``name`` becomes `REDACTED`.

    True for most secret names. For ``token`` / ``session`` names only when ``value``
    is a string that `could_be_token`; for ``PWD`` / ``pass`` names unless it is a
    path, a number, a boolean or ``None``. Call it after `is_secret_name` said True.

    Example:
        >>> limits = Limits()
        >>> hides_value("token", " Paris", limits), hides_value("token", "nv01Qz8Rt5Pw9k", limits)
        (False, True)
    """
    rule = _value_rules(limits).get(name[:_NAME_CAP])
    if rule is None:  # classified before the table was cleared: classify again
        rule = _value_rule(name[:_NAME_CAP], limits)
    if not rule:
        return True
    kind = type(value)  # by type: ``isinstance`` would read a lazy proxy's ``__class__``
    if issubclass(kind, str):
        if rule == "token":
            return could_be_token(value)
        return _PATH.match(value) is None
    if rule == "token":
        return False
    return not (value is None or issubclass(kind, (bool, int, float)))


__all__ = [
    "NAME_CACHE_CAP",
    "PLAIN_TOKEN_WORDS",
    "REDACTED",
    "SECRET_LAST_WORDS",
    "SECRET_PAIRS",
    "SECRET_WORDS",
    "LastFor",
    "could_be_token",
    "hides_value",
    "is_secret_name",
    "name_pattern",
    "normalized_name",
    "plain_names",
    "secret_name_cache",
]
