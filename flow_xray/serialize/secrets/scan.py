"""Scrubbing text: `scrub_text` finds credentials and secret ``name=value`` pairs. No OpenTelemetry.

Cost is what matters here: every string a traced call takes or returns goes
through `scrub_text`. In order, each step only for texts the last one let through:

1. A string shorter than `SOLID_MIN` with no blank, ``=`` or ``:`` holds
   nothing any rule matches (checked by tests/serialize/test_secret_scan.py):
   returned at once. Most argument values (ids, names, ``"value-07"``) stop here.
2. A rule can match only a text holding one of its triggers. Each trigger has a
   sentinel, its rarest character (`sentinel`). A text is looked at for each
   sentinel (one ``in``: a ``memchr`` in C, ~0.03 us per KB), and for each one
   it holds, for the triggers around it (one search, `_DETECTORS`: the regex
   engine skips from one sentinel to the next in C). Only the rules whose
   triggers are present are applied, as one compiled pattern (`_joined`,
   cached per set of rules): one scan, no loop over the rules.
3. ``name=value`` pairs are looked for only in a text holding ``=`` or ``:``.
"""

from __future__ import annotations

import re
from typing import Final

from flow_xray.serialize.limits import Limits
from flow_xray.serialize.secrets.formats import VALUE_RULES, Rule, marker
from flow_xray.serialize.secrets.names import (
    REDACTED,
    LastFor,
    could_be_token,
    hides_value,
    is_secret_name,
    secret_name_cache,
)

# No rule matches a text shorter than this without a blank, "=" or ":".
SOLID_MIN: Final = 20
# Characters ranked rarest first (in prose, code and identifiers): a trigger's
# sentinel is its first character in this ranking. Lowercase letters come last.
_RANK: Final = (
    "~|^$!`@Q_J0987654321ZXKVW#%;=?YUFHPGOMBNDSRCLIATE:-/.[]{}()<>,'\" \t\n"
    "qjzxkvwyfgbpmhucdlronsitae"
)


def sentinel(trigger: str) -> str:
    """The rarest character of ``trigger`` by `_RANK` (the text must hold it)."""
    return min(trigger, key=lambda c: _RANK.find(c) % (len(_RANK) + 1))


# sentinel -> ((trigger, rule index), ...)
_BY_SENTINEL: Final[dict[str, tuple[tuple[str, int], ...]]] = {}
for _index, _rule in enumerate(VALUE_RULES):
    for _trigger in _rule[1]:
        _char = sentinel(_trigger)
        _BY_SENTINEL[_char] = (*_BY_SENTINEL.get(_char, ()), (_trigger, _index))
SENTINELS: Final = tuple(sorted(_BY_SENTINEL, key=_RANK.find))


def _detector(char: str) -> re.Pattern[str]:
    """A pattern finding any trigger of ``char``'s group: ``char``, then for each trigger a
    lookbehind for its part up to ``char`` and a lookahead for the rest."""
    branches = []
    for trigger, _ in _BY_SENTINEL[char]:
        cut = trigger.index(char) + 1
        before, after = re.escape(trigger[:cut]), re.escape(trigger[cut:])
        branches.append(f"(?<={before})" + (f"(?={after})" if after else ""))
    return re.compile(re.escape(char) + "(?:" + "|".join(branches) + ")")


_DETECTORS: Final = {char: _detector(char) for char in SENTINELS}
_JOINED: dict[tuple[int, ...], re.Pattern[str]] = {}


def _joined(rules: tuple[int, ...]) -> re.Pattern[str]:
    """One pattern matching what any of ``rules`` (indices into `VALUE_RULES`) does, each
    rule a named group ``r<index>``: at each place the first rule listed wins."""
    found = _JOINED.get(rules)
    if found is None:
        found = re.compile("|".join(f"(?P<r{i}>{VALUE_RULES[i][2].pattern})" for i in rules))
        if len(_JOINED) >= 512:
            _JOINED.clear()
        _JOINED[rules] = found
    return found


def _replace(match: re.Match[str]) -> str:
    name = match.lastgroup or "r0"
    rule: Rule = VALUE_RULES[int(name[1:])]
    return rule[3](match, match.re.groupindex[name])


def _formats(text: str, allow: tuple[str, ...]) -> str:
    """``text`` with the credentials of `VALUE_RULES` replaced (kinds in ``allow`` kept)."""
    rules: set[int] = set()
    for char in SENTINELS:
        if char in text and _DETECTORS[char].search(text) is not None:
            rules.update(index for trigger, index in _BY_SENTINEL[char] if trigger in text)
    if allow:
        rules = {i for i in rules if VALUE_RULES[i][0] not in allow}
    if not rules:
        return text
    return _joined(tuple(sorted(rules))).sub(_replace, text)


# ``name=value`` / ``name: value`` inside text, value redacted when the name is secret.
# Found on the reversed text, where each match starts at the separator (so the
# regex engine skips to the next ``=`` / ``:`` in C): the separator, blanks, a
# closing quote, then the whole run of name characters before it (at most 64,
# the first a letter or ``_``), reversed.
_NAME_BEFORE_SEPARATOR = re.compile(
    r"[=:][ \t]*['\"]?([A-Za-z0-9_.-]{0,63}[A-Za-z_])(?![A-Za-z0-9_.-])"
)
# Header names whose value is the rest of the line: every cookie of a ``Cookie:``
# header, any scheme of ``Authorization:`` (``Bot``, ``SSWS``, ``Digest ...``).
_LINE_NAMES: Final = frozenset(
    {"authorization", "proxyauthorization", "cookie", "setcookie", "cookie2", "wwwauthenticate"}
)
_SCHEME_WORDS: Final = (
    "bearer|basic|token|digest|bot|ssws|apikey|api-key|geniekey|splunk|dpop|negotiate|ntlm"
)
# A bare value ends at a blank; at ``,`` ``;`` ``&`` that start the next pair; at a
# closing bracket or quote followed by a blank, more closers or the end; at an
# escaped line break (``\n`` inside a repr). So ``password=a,b;c)d`` loses all of ``a,b;c)d``.
_BARE_END = (
    r"(?=\s|$|\\[nrt]|[,;&][ \t]*[A-Za-z_][A-Za-z0-9_.-]{0,63}[ \t]*[=:]"
    r"|[)}\]>'\"]+(?:[\s,;&)}\]>'\"]|$))"
)
_ASSIGNMENT = re.compile(
    r"(?P<name>[A-Za-z_][A-Za-z0-9_.-]{0,63})(?P<sep>['\"]?[ \t]*[=:][ \t]*)"
    r"(?:(?P<q>')(?P<single>(?:[^'\\\n]|\\.){0,4096})'"
    r"|(?P<dq>\")(?P<double>(?:[^\"\\\n]|\\.){0,4096})\""
    r"|(?P<braced>\{[^}\n]{0,4096}\})"
    # (a value that does not end within 4096 characters is 4096 characters: one pass, then
    # the names inside it are skipped)
    rf"|(?P<bare>(?:(?i:{_SCHEME_WORDS})[ \t]+)?(?:[^\s]{{1,4096}}?{_BARE_END}|[^\s]{{1,4096}})))"
)
_LINE_VALUE = re.compile(r"[^\n]*")


def _value_span(text: str, match: re.Match[str], line: bool) -> tuple[int, int] | None:
    """Where the value of the pair ``match`` found is: its quoted inside, braces included for
    ``{...}``, the rest of the line for a header of `_LINE_NAMES`."""
    for group in ("single", "double", "braced"):
        if match.group(group) is not None:
            return match.start(group), match.end(group)
    start = match.start("bare")
    if line:
        return start, _LINE_VALUE.match(text, start).end()  # type: ignore[union-attr]
    return start, match.end("bare")


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
        name = text[start:end]
        if start < done or not is_secret_name(name, limits):
            continue
        match = _ASSIGNMENT.match(text, start)
        if match is None:
            continue
        line = match.group("bare") is not None and _normal(name) in _LINE_NAMES
        span = _value_span(text, match, line)
        if span is None or span[0] == span[1]:
            continue
        value = text[span[0] : span[1]]
        if "[REDACTED" in value or not _hidden(name, value, match, limits):
            continue
        cuts.append(span)
        done = span[1]
    if not cuts:
        return text
    out, last = [], 0
    for begin, end in cuts:
        out += [text[last:begin], REDACTED]
        last = end
    out.append(text[last:])
    return "".join(out)


def _normal(name: str) -> str:
    return "".join(c for c in name.lower() if c.isalnum())


_LITERALS: Final = {"true": True, "false": False, "null": None, "none": None}


def _hidden(name: str, value: str, match: re.Match[str], limits: Limits) -> bool:
    """Whether the text ``value`` found for ``name`` is hidden (`hides_value`); a bare number
    (``"token": 42``, a token id), boolean or null is one for that rule, not text."""
    if match.group("bare") is not None:
        if value.lstrip("-").replace(".", "", 1).isdigit():
            return hides_value(name, float(value) if "." in value else int(value), limits)
        if value.lower() in _LITERALS:
            return hides_value(name, _LITERALS[value.lower()], limits)
    return hides_value(name, value, limits)


def _custom_rules(limits: Limits) -> tuple[re.Pattern[str], ...]:
    key = limits.redact_value_patterns
    rules = _CUSTOM_CACHE.get(key)
    if rules is None:
        if len(_CUSTOM_CACHE) > 16:
            _CUSTOM_CACHE.clear()
        rules = _CUSTOM_CACHE[key] = tuple(re.compile(p) for p in key)
    return rules


_CUSTOM_CACHE: dict[tuple[str, ...], tuple[re.Pattern[str], ...]] = {}
# Texts at least this long are remembered once scrubbed: a call's output often
# holds the very string its input did (a prompt passed through), and the second
# scan is then a dict lookup. Bounded in count and in the length kept.
_RECENT_MIN: Final = 256
_RECENT_MAX: Final = 16_384
_RECENT_COUNT: Final = 32


# The texts scrubbed lately, under the limits they were scrubbed with: replaced whole
# when the limits change or the dict is full.
_RECENT: Final[LastFor[dict[str, str]]] = LastFor({})
# Strings shorter than _RECENT_MIN found clean, per (name patterns, value patterns,
# allow-list): the values of arguments repeat ("gpt-4o", "user", "value-07"), and a
# set lookup is a fraction of a scan.
CLEAN_CAP: Final = 8192
CLEAN_MAX_LEN: Final = _RECENT_MIN  # every string of `clean_strings` is shorter
_CLEAN: dict[tuple[tuple[str, ...], ...], set[str]] = {}


def clean_strings(limits: Limits) -> set[str]:
    """Strings `scrub_text` found clean under ``limits``' patterns: a caller may skip it for
    any of them (`flow_xray.serialize.fast` does, per value)."""
    last_limits, clean = _LAST_CLEAN.pair
    if last_limits is limits and len(clean) < CLEAN_CAP:
        return clean
    key = (limits.redact_patterns, limits.redact_value_patterns, limits.redact_allow)
    found = _CLEAN.get(key)
    if found is None or len(found) >= CLEAN_CAP:
        if len(_CLEAN) > 16:
            _CLEAN.clear()
        found = _CLEAN[key] = set()
    _LAST_CLEAN.pair = (limits, found)  # one swap: a reader never mixes two limits' sets
    return found


_LAST_CLEAN: Final[LastFor[set[str]]] = LastFor(set())


def scrub_text(text: str, limits: Limits) -> str:
    """``text`` with every credential of `VALUE_RULES` (and ``name=value`` secret) replaced.

    Returns ``text`` itself when nothing was found or ``limits.redact`` is off.

    Example:
        >>> scrub_text("postgres://app:hunter2@db:5432/x", Limits())
        'postgres://app:[REDACTED:url-password]@db:5432/x'
    """
    size = len(text)
    if size < 8 or not limits.redact:
        return text
    if (
        size < SOLID_MIN
        and " " not in text
        and "=" not in text
        and ":" not in text
        and not limits.redact_value_patterns
        and text.isprintable()
    ):
        clean_strings(limits).add(text)
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
    clean = clean_strings(limits)
    if text in clean:
        return text
    done = _scrub(text, limits)
    if done is text:
        clean.add(text)
    return done


def _scrub(text: str, limits: Limits) -> str:
    original, allow = text, limits.redact_allow
    text = _formats(text, allow)
    if ("=" in text or ":" in text) and not (allow and "key=value" in allow):
        text = _assignments(text, limits)
    for pattern in _custom_rules(limits) if limits.redact_value_patterns else ():
        text = pattern.sub(marker("custom"), text)
    # A rule that matched but kept the text (prose "Bearer authentication") gave
    # an equal copy; callers tell "nothing found" by identity.
    return original if text is not original and text == original else text


__all__ = [
    "CLEAN_MAX_LEN",
    "SENTINELS",
    "SOLID_MIN",
    "clean_strings",
    "could_be_token",
    "scrub_text",
    "sentinel",
]
