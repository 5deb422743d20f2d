"""How a span with a given set of attribute keys becomes a node: one `Plan` per key set.

The calls of one function share their attribute keys, so which values are a
node's first-class fields, which are metadata (``flow_xray.meta.*``) and which
stay attributes is worked out once per key set (`PLANS`), not once per span.
No OpenTelemetry here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from operator import itemgetter
from typing import Any, Final

from flow_xray import attributes as attr
from flow_xray.serialize.limits import Limits, get_limits
from flow_xray.tree.decode import MISSING, empty, plain
from flow_xray.tree.foreign import scrub_attributes

_META_LEN = len(attr.META_PREFIX)


def _taker(indexes: Sequence[int]) -> Callable[[tuple[Any, ...]], tuple[Any, ...]]:
    """A function giving the values at ``indexes`` of a tuple, as a tuple."""
    if not indexes:
        return lambda values: ()
    if len(indexes) == 1:
        at = indexes[0]
        return lambda values: (values[at],)
    return itemgetter(*indexes)


class Plan:
    """How a span with these attribute keys becomes a node: which values are consumed
    (first-class fields), which are metadata (and their short names), which are kept."""

    __slots__ = (
        "at_kind",
        "consumed",
        "foreign",
        "input_of",
        "limits",
        "messages",
        "meta",
        "others",
        "output_of",
        "pid",
        "shared",
        "simple",
        "take_consumed",
        "take_meta",
        "take_others",
        "usage",
    )

    def __init__(self, keys: tuple[str, ...]) -> None:
        consumed = [i for i, k in enumerate(keys) if k in attr.CONSUMED]
        meta = [
            i
            for i, k in enumerate(keys)
            if k not in attr.CONSUMED and k.startswith(attr.META_PREFIX)
        ]
        others = [
            i
            for i, k in enumerate(keys)
            if k not in attr.CONSUMED and not k.startswith(attr.META_PREFIX)
        ]
        self.consumed = tuple(keys[i] for i in consumed)
        self.meta = tuple(keys[i][_META_LEN:] for i in meta)
        self.others = tuple(keys[i] for i in others)
        self.take_consumed = _taker(consumed)
        self.take_meta = _taker(meta)
        self.take_others = _taker(others)
        self.messages = not MESSAGE_KEYS.isdisjoint(self.others)
        self.usage = not USAGE_KEYS.isdisjoint(self.consumed)  # model, tokens or cost
        self.foreign = attr.OTEL_SCOPE_NAME in keys  # another instrumentation's span
        self.pid = keys.index(attr.PROCESS_PID) if attr.PROCESS_PID in keys else -1
        # A span with none of these reads by position (`_fields`).
        self.simple = not (
            self.messages
            or self.usage
            or self.foreign
            or self.meta
            or attr.OUTCOME in keys
            or attr.INCOMPLETE in keys
        )
        self.at_kind = keys.index(attr.SPAN_KIND) if attr.SPAN_KIND in keys else -1
        self.input_of = _pair(keys, attr.INPUT_VALUE, attr.INPUT_MIME_TYPE, MISSING)
        self.output_of = _pair(keys, attr.OUTPUT_VALUE, attr.OUTPUT_MIME_TYPE, None)
        self.shared: dict[tuple[Any, ...], dict[str, Any]] = {}
        self.limits: Limits | None = None

    def others_of(self, values: tuple[Any, ...], raw: bool) -> dict[str, Any]:
        """The kept attributes of a span with these keys and ``values``.

        With ``raw`` (read-only use) spans with equal kept values share one
        dict: the calls of one function usually do (their source location).
        Not when the span carries chat messages: promoting them (`promote_messages`)
        takes them out of the dict.
        """
        if not self.others:
            return empty(raw)
        taken = self.take_others(values)
        if raw and not self.messages:
            if self.limits is not get_limits():  # kept values were scrubbed under these
                self.shared.clear()
                self.limits = get_limits()
            key = _share_key(taken)
            if key is not None:
                found = self.shared.get(key)
                if found is None:
                    if len(self.shared) >= 64:
                        self.shared.clear()
                    found = self.shared[key] = self._kept(taken)
                return found
        return self._kept(taken)

    def _kept(self, taken: tuple[Any, ...]) -> dict[str, Any]:
        if tuple in set(map(type, taken)):
            taken = tuple(plain(v) if type(v) is tuple else v for v in taken)
        kept = dict(zip(self.others, taken, strict=True))
        # What flow-xray wrote was scrubbed then; an attribute a program set on a
        # span itself through the OpenTelemetry API was not.
        limits = get_limits()
        scrubbed = scrub_attributes(kept, limits) if limits.redact else None
        return kept if scrubbed is None else scrubbed


def _share_key(values: tuple[Any, ...]) -> Any:
    """What spans sharing one dict of kept attributes must have in common: the same values,
    type for type (``False``, ``0`` and ``0.0`` are equal in Python, and so are ``0.0`` and
    ``-0.0``, but each is written as itself). None: not shared (a value other than text,
    a number, a bool or a tuple of those, such as a list from a file reader)."""
    if _EXACT.issuperset(map(type, values)):  # the common case: equal is the same value
        return values
    if _PRIMITIVE.issuperset(map(type, values)) and all(
        _PRIMITIVE.issuperset(map(type, value)) for value in values if type(value) is tuple
    ):
        return repr(values)  # exact for these: it tells each type and each float apart
    return None


# Values whose equality is exact (``True == 1``, but a bool is not an int here: by type).
_EXACT: Final = frozenset((str, int))
_PRIMITIVE: Final = frozenset((str, int, float, bool, type(None), tuple))


def _pair(
    keys: tuple[str, ...], value: str, mime: str, missing: Any
) -> Callable[[tuple[Any, ...]], tuple[Any, Any]]:
    """A function giving a span's ``(value, mime type)`` from its values; ``missing`` for
    an absent value, None for an absent mime type."""
    at = keys.index(value) if value in keys else -1
    at_mime = keys.index(mime) if mime in keys else -1
    if at >= 0 and at_mime >= 0:
        return itemgetter(at, at_mime)
    if at >= 0:
        return lambda values: (values[at], None)
    return lambda values: (missing, values[at_mime] if at_mime >= 0 else None)


PLANS: dict[tuple[str, ...], Plan] = {}


def make_plan(keys: tuple[str, ...]) -> Plan:
    plan = Plan(keys)
    if len(PLANS) >= 4096:  # bounded: spans whose keys vary freely get no cache
        PLANS.clear()
    PLANS[keys] = plan
    return plan


# The keys that show a span carries chat messages in a shape `promote_messages` reads.
MESSAGE_KEYS = attr.MESSAGE_KEYS
USAGE_KEYS = frozenset(
    (*attr.READ_MODEL, *attr.READ_PROMPT_TOKENS, *attr.READ_COMPLETION_TOKENS, *attr.READ_COST)
)
