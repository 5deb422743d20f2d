"""The fast paths: plain JSON values go straight to the C encoder, no walk.

Most traced calls take a few str/int/float/bool/None arguments and return
one of those or a small dict of them. `plain_budget` tells such values apart
(within every cap, no secret name, no credential inside a string) at the
cost of one look per item; `fast_object` encodes a dict of them with secret
top-level names redacted. Anything else returns "not plain" and takes the
bounded walk (`flow_xray.serialize.walk`). No OpenTelemetry here.
"""

from __future__ import annotations

from typing import Any, Final

from flow_xray.serialize.cut import encode_json_within, text_dict_size
from flow_xray.serialize.limits import Limits
from flow_xray.serialize.secrets import (
    CLEAN_CAP,
    CLEAN_MAX_LEN,
    NAME_CACHE_CAP,
    REDACTED,
    clean_strings,
    hides_value,
    is_secret_name,
    plain_names,
    scrub_text,
    secret_name_cache,
)

# Ints within 64 bits are written as they are; bigger ones take the walk.
_FAST_INT: Final = 1 << 63

# What the fast paths consult for one `Limits`: ``(limits, secret-name verdicts or None
# when nothing is redacted, strings found clean, names found plain)``.
Checks = tuple[Limits, "dict[str, bool] | None", set[str], set[str]]


class _LastChecks:
    """The `Checks` made last (one object, one swap: a reader never mixes two limits')."""

    __slots__ = ("checks",)

    def __init__(self) -> None:
        self.checks: Checks | None = None


_LAST_CHECKS: Final = _LastChecks()


def checks_for(limits: Limits) -> Checks:
    """The caches `plain_budget` and `fast_object` consult under ``limits``, fetched once for
    them (every traced call asks twice) and again when a set has filled up (the secrets
    module then starts a new one)."""
    last = _LAST_CHECKS.checks
    if (
        last is not None
        and last[0] is limits
        and len(last[2]) < CLEAN_CAP
        and len(last[3]) < NAME_CACHE_CAP
    ):
        return last
    secret = secret_name_cache(limits) if limits.redact else None
    made = _LAST_CHECKS.checks = (limits, secret, clean_strings(limits), plain_names(limits))
    return made


def plain_budget(value: Any, depth: int, budget: int, checks: Checks) -> int:
    """Budget left after `value` if it is plain JSON needing no cut, else -1.

    Plain: str/int/finite float/bool/None and dicts (str keys, none secret)
    and lists/tuples of plain values within every cap. Such values go straight
    to the C encoder (`encode_json_within`).
    `budget` (estimated output bytes) bounds the work on big values; ``checks`` are
    `checks_for` the limits.
    """
    limits, secret = checks[0], checks[1]
    kind = type(value)
    if kind is str:
        if len(value) > limits.max_string or (secret is not None and holds_secret(value, limits)):
            return -1
        return budget - len(value) - 3
    if kind is int:
        return budget - 8 if -_FAST_INT < value < _FAST_INT else -1
    if kind is float:  # NaN and infinities take the walk (it writes them as text)
        return budget - 8 if value - value == 0.0 else -1
    if kind is bool or value is None:
        return budget - 8
    if depth >= limits.max_depth or budget < 0:
        return -1
    if kind is list or kind is tuple:
        return _plain_list(value, depth, budget, checks)
    if kind is dict:
        return _plain_dict(value, depth, budget, checks)
    return -1


def _plain_list(value: list[Any] | tuple[Any, ...], depth: int, budget: int, checks: Checks) -> int:
    """`plain_budget` of a list or tuple: plain items within the caps."""
    limits, secret, clean, _ = checks
    if len(value) > limits.max_items:
        return -1
    for item in value:
        if type(item) is str:  # inline: the common item, worth skipping two calls
            size = len(item)
            if size > limits.max_string or (
                size >= 8
                and secret is not None
                and item not in clean
                and scrub_text(item, limits) is not item
            ):
                return -1
            budget -= size + 4
        else:
            budget = plain_budget(item, depth + 1, budget - 1, checks)
        if budget < 0:
            return -1
    return budget


def _plain_dict(value: dict[Any, Any], depth: int, budget: int, checks: Checks) -> int:
    """`plain_budget` of a dict: str keys within the caps, none secret, plain values."""
    limits, secret, clean, plain = checks
    if len(value) > limits.max_items:
        return -1
    if secret is not None and limits.max_string >= CLEAN_MAX_LEN:
        # Settings, headers, messages: every key a known plain name and every value a
        # string known clean, told in two C calls (a value that cannot be hashed: no).
        try:
            if plain.issuperset(value) and clean.issuperset(value.values()):
                return budget - text_dict_size(value)
        except TypeError:  # a value that cannot be hashed: the loop below
            pass
    for key, item in value.items():
        if type(key) is not str or len(key) > limits.max_string:
            return -1
        if secret is not None and secret.get(key, True) and is_secret_name(key, limits):
            return -1
        if type(item) is str:  # inline: the common value, worth skipping two calls
            size = len(item)
            if size > limits.max_string or (
                size >= 8
                and secret is not None
                and item not in clean
                and scrub_text(item, limits) is not item
            ):
                return -1
            if size < 8:  # clean by length: known as such to the check above
                clean.add(item)
            budget -= size + len(key) + 7
        else:
            budget = plain_budget(item, depth + 1, budget - len(key) - 4, checks)
        if budget < 0:
            return -1
    return budget


def holds_secret(text: str, limits: Limits) -> bool:
    """Whether scrubbing would change ``text`` (then the walk, which scrubs, takes over)."""
    return len(text) >= 8 and scrub_text(text, limits) is not text


def fast_object(arguments: dict[Any, Any], limits: Limits, max_bytes: int) -> str | None:
    """JSON for a dict of plain values (arguments, a result), secret top-level names
    redacted; None to take the walk."""
    if len(arguments) > limits.max_items:
        return None
    checks = checks_for(limits)
    _, secret, clean, _ = checks
    out: dict[Any, Any] | None = None
    budget = max_bytes
    for key, value in arguments.items():
        if type(key) is not str:
            return None
        if secret is not None and secret.get(key, True) and is_secret_name(key, limits):
            # A key that is itself a credential, or a value its name may not hide
            # (``token`` holding a logprobs entry): the walk decides.
            if scrub_text(key, limits) is not key or not hides_value(key, value, limits):
                return None
            out = dict(arguments) if out is None else out
            out[key] = REDACTED
            continue
        kind = type(value)  # scalars inline: the common case, worth skipping a call
        if kind is str:
            size = len(value)
            if size > limits.max_string or (
                size >= 8
                and secret is not None
                and value not in clean
                and scrub_text(value, limits) is not value
            ):
                return None
            budget -= size
        elif kind is int or kind is float:  # ints within 64 bits; NaN and infinities: the walk
            if not (-_FAST_INT < value < _FAST_INT if kind is int else value - value == 0.0):
                return None
        elif not (kind is bool or value is None):
            budget = plain_budget(value, 1, budget - len(key) - 4, checks)
            if budget < 0:
                return None
    return encode_json_within(arguments if out is None else out, max_bytes)


__all__ = ["Checks", "checks_for", "fast_object", "holds_secret", "plain_budget"]
