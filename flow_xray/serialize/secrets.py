"""What gets scrubbed: secret-looking names, and credentials inside any text. No OpenTelemetry.

Two rule sets, both on by default (``Limits.redact``):

- **Names.** An argument, mapping key, ``attributes=`` / ``trace.annotate`` key
  or ``name=value`` inside text whose name looks secret has its value
  replaced by ``"[REDACTED]"``. Names are split into words at separators and
  camelCase, then: ``password``/``passwd``/``passphrase`` anywhere; a word among
  `SECRET_WORDS`; a name ending in ``token``, ``auth`` or ``session``; or a
  pair such as ``api key``, ``private key``, ``session id`` (`SECRET_PAIRS`).
  So ``token``, ``X-Auth-Token``, ``sessionId``, ``csrf``, ``Set-Cookie``,
  ``OPENAI_API_KEY`` are secret; ``max_tokens``, ``token_count``, ``key``,
  ``author`` are not. ``Limits.redact_patterns`` adds regexes.
- **Formats.** Credentials found inside any string (prompts, reprs,
  exception messages, tracebacks, CLI messages) are replaced by
  ``[REDACTED:<kind>]``, the kind naming what was removed (`VALUE_RULES`):
  provider keys, bearer / basic credentials, JWTs, URL passwords (user and
  host kept), signed-URL signatures, webhook URLs, cloud and VCS tokens,
  private-key blocks. ``Limits.redact_value_patterns`` adds regexes (kind
  ``custom``).

``Limits.redact_allow`` lists names (compared case- and separator-insensitively)
that are never secret, and format kinds that are not scrubbed. Cost: names are
classified once each (cached); a string is searched for a rule's triggers only
when one character class says it could hold a credential and it holds each
trigger's uncommon characters; ``name=value`` pairs are found in one pass.
"""

from __future__ import annotations

import base64
import binascii
import itertools
import re
from collections.abc import Callable
from typing import Final

from flow_xray.serialize.limits import Limits

REDACTED: Final = "[REDACTED]"
_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_SEPARATORS = re.compile(r"[^0-9a-z]+")
SECRET_WORDS: Final = frozenset(
    {
        *("secret", "secrets", "apikey", "apikeys", "authorization", "bearer"),
        *("cookie", "cookies", "credential", "credentials", "pwd", "passwd"),
        *("accesstoken", "refreshtoken", "authtoken", "privatekey", "secretkey"),
        *("jwt", "csrf", "xsrf", "csrftoken", "xsrftoken", "sessionid", "sessid"),
    }
)
# A name ending in one of these words: ``auth_token``, ``id_token``, ``basic_auth``,
# ``user_session``. Not when another word follows (``token_count``, ``auth_method``).
SECRET_LAST_WORDS: Final = frozenset({"token", "auth", "session"})
SECRET_PAIRS: Final = frozenset(
    {("api", "key"), ("api", "keys"), ("access", "token"), ("refresh", "token")}
    | {("private", "key"), ("session", "id"), ("session", "key"), ("session", "token")}
    | {(owner, "key") for owner in ("secret", "signing", "encryption", "master", "client")}
    | {(owner, "key") for owner in ("auth", "ssh", "account", "access")}
)
_CACHE_CAP: Final = 4096
_NAME_CAP: Final = 256
# Per (extra patterns, allow-list): name -> verdict. Names repeat endlessly.
_SECRET_CACHE: dict[tuple[tuple[str, ...], tuple[str, ...]], dict[str, bool]] = {}


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


def _classify(name: str, limits: Limits) -> bool:
    lowered = name.lower()
    if limits.redact_allow and normalized_name(name) in _allowed(limits):
        return False
    if "password" in lowered or "passwd" in lowered or "passphrase" in lowered:
        return True
    words = [w.lower() for w in _WORD.findall(name)]
    if not words:
        return False
    if words[-1] in SECRET_LAST_WORDS or any(w in SECRET_WORDS for w in words):
        return True
    if "".join(words) in SECRET_WORDS:
        return True
    if any(pair in SECRET_PAIRS for pair in itertools.pairwise(words)):
        return True
    return any(re.search(p, name, re.IGNORECASE) for p in limits.redact_patterns)


def _allowed(limits: Limits) -> frozenset[str]:
    return frozenset(normalized_name(a) for a in limits.redact_allow)


def secret_name_cache(limits: Limits) -> dict[str, bool]:
    """The name -> verdict cache for these limits' patterns and allow-list."""
    key = (limits.redact_patterns, limits.redact_allow)
    cache = _SECRET_CACHE.get(key)
    if cache is None:
        if len(_SECRET_CACHE) > 64:
            _SECRET_CACHE.clear()
        cache = _SECRET_CACHE[key] = {}
    return cache


def is_secret_name(name: str, limits: Limits) -> bool:
    """Tell whether a value stored under `name` is replaced by `REDACTED` under `limits`.

    ``OPENAI_API_KEY``, ``X-Auth-Token``, ``dbPassword``, ``session_id`` and
    ``client_secret`` are secret; ``max_tokens`` and ``prompt_tokens`` are not.
    Always False when `limits.redact` is off.
    """
    if not limits.redact or not isinstance(name, str):
        return False
    cache = secret_name_cache(limits)
    verdict = cache.get(name)
    if verdict is None:
        verdict = _classify(name[:_NAME_CAP], limits)
        if len(name) <= _NAME_CAP:
            if len(cache) >= _CACHE_CAP:
                cache.clear()
            cache[name] = verdict
    return verdict


# --- credential formats inside text -------------------------------------------
def _marker(kind: str) -> str:
    return f"[REDACTED:{kind}]"


def _basic(match: re.Match[str]) -> str:
    """``Basic <base64>`` only when it decodes to ``user:password`` (not the word "Basic")."""
    try:
        decoded = base64.b64decode(match.group(3) + "==", validate=False)
    except (binascii.Error, ValueError):
        return match.group(0)
    if b":" not in decoded:
        return match.group(0)
    return f"{match.group(1)}{match.group(2)}{_marker('basic-auth')}"


def _bearer(match: re.Match[str]) -> str:
    token = match.group(3)
    if len(token) < 20 and not any(c.isdigit() for c in token):
        return match.group(0)  # prose ("Bearer authentication"), not a token
    return f"{match.group(1)}{match.group(2)}{_marker('bearer')}"


_Replace = Callable[[re.Match[str]], str]


def _fixed(kind: str) -> _Replace:
    text = _marker(kind)
    return lambda match: text


# (kind, substrings one of which the text must contain, pattern, replacement);
# applied in this order, so the more specific kinds name what they removed.
VALUE_RULES: Final[tuple[tuple[str, tuple[str, ...], re.Pattern[str], _Replace], ...]] = (
    (
        "private-key",
        ("-----BEGIN",),
        re.compile(
            r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?"
            r"(?:-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)",
            re.DOTALL,
        ),
        _fixed("private-key"),
    ),
    (
        "slack-webhook",
        ("://hooks.slack.com/",),
        re.compile(
            r"(https?://hooks\.slack\.com/(?:services|workflows|triggers)/)[A-Za-z0-9/_-]{8,}"
        ),
        lambda m: f"{m.group(1)}{_marker('slack-webhook')}",
    ),
    (
        # The password runs to the last ``@`` of the URL (it may hold ``/``, ``#``,
        # ``@``), but ``host:8080/path@x`` is a port and a path, not a password.
        "url-password",
        ("://",),
        re.compile(
            r"(\b[A-Za-z][A-Za-z0-9+.-]*://[^\s:/?#@'\"<>\[\]]*):(?!\d+(?:[/?#]|$))[^\s'\"<>]+@"
            r"(?=[A-Za-z0-9\[])"
        ),
        lambda m: f"{m.group(1)}:{_marker('url-password')}@",
    ),
    (
        "url-signature",
        ("-Signature=", "-signature=", "-SIGNATURE=", "sig="),
        re.compile(
            r"(?i:(\bX-(?:Amz|Goog)-Signature=)[0-9a-f]{16,})"
            r"|(?<![A-Za-z0-9_-])(sig=)(?=[A-Za-z0-9%+/=]*%[0-9A-Fa-f]{2}|[A-Za-z0-9+/]{40,}=)"
            r"[A-Za-z0-9%+/=]{20,}"
        ),
        lambda m: f"{m.group(1) or m.group(2)}{_marker('url-signature')}",
    ),
    (
        "aws-session-token",
        ("-Security-Token=", "-security-token=", "-SECURITY-TOKEN="),
        re.compile(r"(?i:(\bX-Amz-Security-Token=))[A-Za-z0-9%+/=_-]{16,}"),
        lambda m: f"{m.group(1)}{_marker('aws-session-token')}",
    ),
    (
        "anthropic-key",
        ("sk-ant-",),
        re.compile(r"(?<![A-Za-z0-9_-])sk-ant-[A-Za-z0-9_-]{16,}"),
        _fixed("anthropic-key"),
    ),
    (
        "openai-key",
        ("sk-",),
        re.compile(r"(?<![A-Za-z0-9_-])sk-[A-Za-z0-9_-]{20,}"),
        _fixed("openai-key"),
    ),
    (
        "stripe-key",
        ("_live_", "_test_"),
        re.compile(r"(?<![A-Za-z0-9])(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{10,}"),
        _fixed("stripe-key"),
    ),
    (
        "github-token",
        ("ghp_", "gho_", "ghs_", "ghu_", "ghr_", "github_pat_"),
        re.compile(r"(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})"),
        _fixed("github-token"),
    ),
    (
        "slack-token",
        ("xoxa-", "xoxb-", "xoxp-", "xoxr-", "xoxs-"),
        re.compile(r"(?<![A-Za-z0-9])xox[abprs]-[A-Za-z0-9-]{10,}"),
        _fixed("slack-token"),
    ),
    (
        "gitlab-token",
        ("glpat-", "gldt-", "glrt-", "glptt-", "glft-", "glcbt-", "glsoat-"),
        re.compile(
            r"(?<![A-Za-z0-9_-])gl(?:pat|dt|rt|ptt|ft|cbt|soat)-[A-Za-z0-9_-]{20,}"
            r"(?:\.[A-Za-z0-9_-]+)*"
        ),
        _fixed("gitlab-token"),
    ),
    (
        "huggingface-token",
        ("hf_",),
        re.compile(r"(?<![A-Za-z0-9_-])hf_[A-Za-z0-9]{30,}(?![A-Za-z0-9_])"),
        _fixed("huggingface-token"),
    ),
    (
        "npm-token",
        ("npm_",),
        re.compile(r"(?<![A-Za-z0-9_-])npm_[A-Za-z0-9]{36}(?![A-Za-z0-9_])"),
        _fixed("npm-token"),
    ),
    (
        "sendgrid-key",
        ("SG.",),
        re.compile(
            r"(?<![A-Za-z0-9_.-])SG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{40,50}(?![A-Za-z0-9_-])"
        ),
        _fixed("sendgrid-key"),
    ),
    (
        "google-oauth-token",
        ("ya29.",),
        re.compile(r"(?<![A-Za-z0-9_.-])ya29\.[A-Za-z0-9_-]{20,}"),
        _fixed("google-oauth-token"),
    ),
    (
        "google-api-key",
        ("AIza",),
        re.compile(r"(?<![A-Za-z0-9_-])AIza[0-9A-Za-z_-]{30,}"),
        _fixed("google-api-key"),
    ),
    (
        "aws-access-key-id",
        ("AKIA", "ASIA"),
        re.compile(r"(?<![A-Z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Z0-9])"),
        _fixed("aws-access-key-id"),
    ),
    (
        "jwt",
        ("eyJ",),
        re.compile(r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*"),
        _fixed("jwt"),
    ),
    (
        "bearer",
        ("Bearer", "bearer", "BEARER"),
        re.compile(r"\b(Bearer|bearer|BEARER)(\s+)([A-Za-z0-9._~+/=-]{8,})"),
        _bearer,
    ),
    (
        "basic-auth",
        ("Basic", "basic", "BASIC"),
        re.compile(r"\b(Basic|basic|BASIC)(\s+)([A-Za-z0-9+/]{6,}={0,2})"),
        _basic,
    ),
)
# ``name=value`` / ``name: value`` inside text, value redacted when the name is secret.
# Found on the reversed text, where each match starts at the separator (so the
# regex engine skips to the next ``=`` / ``:`` in C): the separator, blanks, a
# closing quote, then the whole run of name characters before it (at most 64,
# the first a letter or ``_``), reversed.
_NAME_BEFORE_SEPARATOR = re.compile(
    r"[=:][ \t]*['\"]?([A-Za-z0-9_.-]{0,63}[A-Za-z_])(?![A-Za-z0-9_.-])"
)
_ASSIGNMENT = re.compile(
    r"(?P<name>[A-Za-z_][A-Za-z0-9_.-]{0,63})(?P<sep>['\"]?[ \t]*[=:][ \t]*)"
    r"(?:(?P<q>['\"])(?P<quoted>[^'\"\n]{0,512})(?P=q)"
    r"|(?P<bare>(?:(?i:bearer|basic|token|digest)[ \t]+)?[^\s'\",;&)}\]]+))"
)


def _assignments(text: str, limits: Limits) -> str:
    """Redact the values of ``secret_name=value`` pairs inside ``text``.

    Linear: one regex pass over the reversed text lists the name before each
    separator; each is classified by the cached `is_secret_name`, and only a
    text that has a secret one is searched again for the values.
    """
    backwards = text[::-1]
    cache = secret_name_cache(limits)
    for reversed_name in set(_NAME_BEFORE_SEPARATOR.findall(backwards)):  # each name once
        name = reversed_name[::-1]
        verdict = cache.get(name)
        if verdict or (verdict is None and is_secret_name(name, limits)):
            break
    else:
        return text
    size = len(text)
    names = [
        (size - found.end(1), size - found.start(1))
        for found in _NAME_BEFORE_SEPARATOR.finditer(backwards)
    ]
    cuts: list[tuple[int, int]] = []
    done = 0  # the end of the last redacted pair: a name before it is inside its value
    for start, end in reversed(names):
        if start < done or not is_secret_name(text[start:end], limits):
            continue
        match = _ASSIGNMENT.match(text, start)
        if match is None:
            continue
        group = "quoted" if match.group("q") else "bare"
        value = match.group(group)
        if not value or "[REDACTED" in value:
            continue
        cuts.append((match.start(group), match.end(group)))
        done = match.end()
    if not cuts:
        return text
    out, last = [], 0
    for begin, end in cuts:
        out += [text[last:begin], REDACTED]
        last = end
    out.append(text[last:])
    return "".join(out)


def _custom_rules(limits: Limits) -> tuple[re.Pattern[str], ...]:
    key = limits.redact_value_patterns
    rules = _CUSTOM_CACHE.get(key)
    if rules is None:
        if len(_CUSTOM_CACHE) > 16:
            _CUSTOM_CACHE.clear()
        rules = _CUSTOM_CACHE[key] = tuple(re.compile(p) for p in key)
    return rules


_CUSTOM_CACHE: dict[tuple[str, ...], tuple[re.Pattern[str], ...]] = {}
# A text can hold a credential of `VALUE_RULES` only if it holds one of these
# characters (every trigger but the two lowercase words has one) or one of the
# words. A one-character-class search skips a 1 KB text in a fraction of a
# microsecond; an alternation of the triggers takes ~20x longer (the regex
# engine tries every branch at every position). tests/serialize/test_redaction.py
# checks that every trigger is covered.
ANCHOR_CHARS: Final = "-:_AJB=9G"
ANCHOR_WORDS: Final = ("bearer", "basic")
_ANY_ANCHOR: Final = re.compile(f"[{re.escape(ANCHOR_CHARS)}]")
# A text that passed the anchor check: each trigger is searched for (~0.5 us per
# KB each) only when the text holds every uncommon character of it (a one-
# character test is ~30x cheaper), so a prompt without ``_`` never looks for
# ``ghp_`` and one without ``=`` never for ``sig=``.
_GATE_CHARS: Final = frozenset(
    c for _, triggers, _, _ in VALUE_RULES for t in triggers for c in t if not c.islower()
) - frozenset("./")
_Rule = tuple[str, tuple[str, ...], re.Pattern[str], _Replace]
_CANDIDATES: dict[frozenset[str], tuple[_Rule, ...]] = {}


def _candidates(present: frozenset[str]) -> tuple[_Rule, ...]:
    """The rules (and their triggers) a text holding the gate characters ``present`` may match."""
    found = _CANDIDATES.get(present)
    if found is None:
        found = tuple(
            (kind, kept, pattern, replace)
            for kind, triggers, pattern, replace in VALUE_RULES
            if (kept := tuple(t for t in triggers if frozenset(t) & _GATE_CHARS <= present))
        )
        if len(_CANDIDATES) >= 1024:  # 2**21 combinations at most; a handful in practice
            _CANDIDATES.clear()
        _CANDIDATES[present] = found
    return found


# Texts at least this long are remembered once scrubbed: a call's output often
# holds the very string its input did (a prompt passed through), and the second
# scan is then a dict lookup. Bounded in count and in the length kept.
_RECENT_MIN: Final = 256
_RECENT_MAX: Final = 16_384
_RECENT_COUNT: Final = 32


class _Recent:
    """The texts scrubbed lately, under the limits they were scrubbed with.

    Held as one ``(limits, texts)`` pair, replaced whole when the limits change
    or the dict is full, so a reader never pairs one limits with another's texts.
    """

    __slots__ = ("pair",)

    def __init__(self) -> None:
        self.pair: tuple[Limits | None, dict[str, str]] = (None, {})


_RECENT: Final = _Recent()


def scrub_text(text: str, limits: Limits) -> str:
    """``text`` with every credential of `VALUE_RULES` (and ``name=value`` secret) replaced.

    Returns ``text`` itself when nothing was found or ``limits.redact`` is off.

    Example:
        >>> scrub_text("postgres://app:hunter2@db:5432/x", Limits())
        'postgres://app:[REDACTED:url-password]@db:5432/x'
    """
    size = len(text)
    if not limits.redact or size < 8:
        return text
    if _RECENT_MIN <= size <= _RECENT_MAX:
        seen_with, recent = _RECENT.pair
        if limits is not seen_with or len(recent) >= _RECENT_COUNT:
            recent = {}
            _RECENT.pair = (limits, recent)
        done = recent.get(text)
        if done is None:
            done = recent[text] = _scrub(text, limits)
        return text if done == text else done
    return _scrub(text, limits)


def _scrub(text: str, limits: Limits) -> str:
    original, allow = text, limits.redact_allow
    if _ANY_ANCHOR.search(text) is not None or any(w in text for w in ANCHOR_WORDS):
        present = frozenset([c for c in _GATE_CHARS if c in text])
        for kind, triggers, pattern, replace in _candidates(present):
            for trigger in triggers:
                if trigger in text:
                    if not (allow and kind in allow):
                        text = pattern.sub(replace, text)
                    break
    if ("=" in text or ":" in text) and not (allow and "key=value" in allow):
        text = _assignments(text, limits)
    for pattern in _custom_rules(limits) if limits.redact_value_patterns else ():
        text = pattern.sub(_marker("custom"), text)
    # A rule that matched but kept the text (prose "Bearer authentication") gave
    # an equal copy; callers tell "nothing found" by identity.
    return original if text is not original and text == original else text
