"""The bounded walk: any value to JSON-compatible data under the caps, never raising.

`to_jsonable` converts whatever a program passes (records, mappings,
sequences, sets, buffers, arrays, exceptions, odd objects) into dicts with
str keys, lists, str, int, finite float, bool and None, applying the caps of
`Limits` and leaving `CUT` markers wherever it stopped. The walk is bounded
by its output budget, not by its input, so a 10M-element list costs what a
small one does; secret keys are redacted and credentials scrubbed from text
on the way. `bounded_repr` is the repr counterpart, for exception arguments (no OpenTelemetry).
"""

from __future__ import annotations

import datetime
import enum
import heapq
import itertools
import math
import uuid
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence, Set as AbstractSet, ValuesView
from decimal import Decimal
from pathlib import PurePath
from typing import Any, Final

from flow_xray.interrupts import let_signals_through
from flow_xray.serialize.containers import is_shape_class, known_shape
from flow_xray.serialize.cut import (
    CUT,
    MARKER_BYTES,
    SCRUB_MARGIN,
    encode_json,
    scrubbed_head,
    truncated,
    utf8_len,
)
from flow_xray.serialize.limits import Limits
from flow_xray.serialize.memo import ClassMemo
from flow_xray.serialize.reprs import MAX_INT_BITS, Reprs, repr_once, safe_repr, type_name
from flow_xray.serialize.secrets import REDACTED, hides_value, is_secret_name, scrub_text
from flow_xray.serialize.shapes import (
    MISSING,
    array_summary,
    array_values,
    buffer_summary,
    cheap_repr,
    exception_args,
    fields,
    is_array_class,
    is_opaque_class,
    is_record_class,
    length,
    own_repr,
)
from flow_xray.serialize.text import writable

CYCLE: Final = "<cycle>"
# A hard ceiling on walk depth keeps Python recursion safe whatever max_depth says.
_DEPTH_CEILING: Final = 64
# Sets up to this size are ordered exactly (heapq.nsmallest: well under a millisecond);
# bigger ones by their first items met, so a 10M-element set costs what a small one does.
_SORT_MAX: Final = 4096
# An unknown object longer than this is summarised by its length, not its repr.
_REPR_MAX_LEN: Final = 1000


def _summary(value: Any, size: int | None) -> str:
    count = "" if size is None else f" len={size}"
    return f"<{type_name(value)}{count}>{CUT}"


def json_key(key: Any) -> str:
    """Dict key → str the way `json.dumps` converts keys; repr for other types.

    The key's class is ``type(key)`` (never its ``__class__``); only an enum
    member, or a key of no built-in kind, has its repr run.
    """
    kind = type(key)
    if kind is str:
        return writable(key)
    if key is None or kind is bool:
        return "null" if key is None else ("true" if key else "false")
    if issubclass(kind, enum.Enum):
        return safe_repr(key, 200)
    if issubclass(kind, str):
        return writable(str.__str__(key))
    if issubclass(kind, int) and int.bit_length(key) <= MAX_INT_BITS:
        return int.__repr__(key)
    if issubclass(kind, float):
        return float.__repr__(key) if math.isfinite(key) else _nonfinite(key)
    return safe_repr(key, 200)


def _nonfinite(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    return "Infinity" if value > 0 else "-Infinity"


class Walker:
    """One bounded conversion of a value to JSON-compatible data.

    `budget` is the output size still allowed, estimated as compact JSON bytes
    while walking; once spent, containers stop early with a marker item, so the
    walk costs O(output), not O(input), for lists, dicts and strings.
    """

    __slots__ = (
        "budget",
        "depth_cap",
        "items_cap",
        "limits",
        "on_path",
        "reprs",
        "string_cap",
    )

    def __init__(self, limits: Limits, budget: int, reprs: Reprs | None = None) -> None:
        self.limits = limits
        self.budget = budget
        self.string_cap = limits.max_string
        self.items_cap = limits.max_items
        self.depth_cap = min(limits.max_depth, _DEPTH_CEILING)
        # ids of the containers on the current path; never written to output.
        self.on_path: set[int] = set()
        # repr text by object id, shared by the retries of one encoding and by
        # every encoding of one call: each unknown object's __repr__ runs once.
        self.reprs: Reprs = {} if reprs is None else reprs

    def walk(self, value: Any, depth: int) -> Any:
        try:
            return self._convert(value, depth)
        except BaseException as exc:  # recording contains everything
            let_signals_through()
            failed = f"<{type_name(value)} object (serialization failed: {type_name(exc)})>"
            return self.text(failed)

    def text(self, value: str) -> str:
        room = self.budget - 2
        cap = self.string_cap if room >= self.string_cap else max(room, 0)
        total = len(value)
        value = writable(scrubbed_head(value, cap, self.limits))
        length = len(value) + total - min(total, cap + SCRUB_MARGIN)  # as if all were read
        if length > cap:
            keep = cap if cap == self.string_cap else max(cap - MARKER_BYTES, 0)
            value = value[:keep] + truncated(length - keep)
        size = utf8_len(value)
        if size > room + MARKER_BYTES and size > len(value):
            # Non-ASCII text spends several bytes per char: cut by bytes instead.
            data = value.encode("utf-8")[: max(room - MARKER_BYTES, 0)]
            kept = data.decode("utf-8", "ignore")
            value = kept + truncated(length - len(kept))
            size = utf8_len(value)
        self.budget -= size + 3
        return value

    def _convert(self, value: Any, depth: int) -> Any:
        kind = type(value)
        if kind is str:
            return self.text(value)
        if value is None or kind is bool:
            self.budget -= 6
            return value
        if kind is int:
            return self._int(value)
        if kind is float:
            return self._float(value)
        if kind is dict:
            return self._mapping(value, dict.items(value), len(value), depth)
        if kind is list or kind is tuple:
            return self._sequence(value, value, len(value), depth)
        return self._other(value, depth)

    def _int(self, value: int) -> int | str:
        if int.bit_length(value) > MAX_INT_BITS:
            return self.text(f"<int bits={int.bit_length(value)}>")
        self.budget -= 21 if value.bit_length() > 64 else 8
        return value

    def _float(self, value: float) -> float | str:
        if not math.isfinite(value):
            return self.text(_nonfinite(value))
        self.budget -= 25
        return value

    def _other(self, value: Any, depth: int) -> Any:
        """Anything but the exact built-in types: records, subclasses, mappings, sequences, sets.

        Told apart by ``type(value)`` only: ``isinstance`` would read the
        value's ``__class__``, which a lazy proxy (Django's ``SimpleLazyObject``)
        answers by evaluating itself. The way is chosen once per class (`_way`).
        """
        kind = type(value)
        way = _WAYS.get(kind)
        if way is None:
            way = _way(kind)
            _WAYS.put(kind, way)
        return way(self, value, kind, depth)

    # --- the ways (`_way`): each takes (value, its class, depth) -----------------------

    def _opaque(self, value: Any, kind: type, depth: int) -> Any:
        return self.text(self.repr(value))  # a mock: its own repr, nothing probed

    def _enum(self, value: Any, kind: type, depth: int) -> Any:
        return self.walk(value.value, depth)

    def _record(self, value: Any, kind: type, depth: int) -> Any:
        record = fields(value, self.items_cap)
        if record is None:  # (never for a record class; kept for the type checker)
            return self._leaf(value, kind, depth)
        return self._mapping(value, record[0], record[1], depth)

    def _scalar(self, value: Any, kind: type, depth: int) -> Any:
        """A subclass of str, int or float, read through the built-in type's own methods."""
        if issubclass(kind, str):
            return self.text(str.__str__(value))
        if issubclass(kind, int):
            return self._int(int.__int__(value))
        return self._float(float.__float__(value))

    def _dict(self, value: Any, kind: type, depth: int) -> Any:
        return self._mapping(value, dict.items(value), dict.__len__(value), depth)

    def _list(self, value: Any, kind: type, depth: int) -> Any:
        size = (list if issubclass(kind, list) else tuple).__len__(value)
        return self._sequence(value, iter(value), size, depth)

    def _shaped(self, value: Any, kind: type, depth: int) -> Any:
        shape = known_shape(value, kind)
        if shape is not None:
            return self._mapping(value, shape[0], shape[1], depth)
        return _later_way(kind)(self, value, kind, depth)

    def _any_mapping(self, value: Any, kind: type, depth: int) -> Any:
        return self._mapping(value, value.items(), length(value), depth)

    def _deque(self, value: Any, kind: type, depth: int) -> Any:
        return self._sequence(value, iter(value), length(value), depth)

    def _any_set(self, value: Any, kind: type, depth: int) -> Any:
        return self._set(value, depth)

    def _array(self, value: Any, kind: type, depth: int) -> Any:
        """A numpy scalar, a small array or frame as its values; a big one by its shape."""
        values = array_values(value)
        if values is not MISSING:
            return self._convert(values, depth)
        return self._leaf(value, kind, depth)

    def _iso(self, value: Any, kind: type, depth: int) -> Any:
        return self.text(value.isoformat())  # dates and times

    def _str(self, value: Any, kind: type, depth: int) -> Any:
        return self.text(str(value))  # timedelta, UUID, Decimal, paths

    def _error(self, value: Any, kind: type, depth: int) -> Any:
        return self.text(self._exception(value))

    def _leaf(self, value: Any, kind: type, depth: int) -> Any:
        """What is left: summaries, other sequences, the repr."""
        # Arrays, then anything exposing a buffer (bytes, array.array, mmap...): a summary.
        summary = array_summary(value) or buffer_summary(value)
        if summary is not None:
            return self.text(summary)
        if issubclass(kind, (Sequence, ValuesView)) and not issubclass(kind, type):
            return self._sequence(value, iter(value), length(value), depth)
        if _WAYS.get(kind) is Walker._leaf:  # no array, no buffer: the class's values by repr
            _WAYS.put(kind, Walker._by_repr)
        return self._by_repr(value, kind, depth)

    def _by_repr(self, value: Any, kind: type, depth: int = 0) -> str:
        """The repr, or a summary when a custom repr would be as long as a long value."""
        if own_repr(kind):
            size = length(value)
            if size is not None and size > _REPR_MAX_LEN:  # its repr would be as big: summarise
                return self.text(_summary(value, size))
        return self.text(self.repr(value))

    def _exception(self, value: BaseException) -> str:
        """An exception's repr, ``Type(args)``, from bounded reprs of its args when they are big."""
        args = exception_args(value)
        if cheap_repr(args):
            return self.repr(value)
        shown = [bounded_repr(a, self.limits, self.string_cap, self.reprs) for a in args[:20]]
        if len(args) > 20:
            shown.append(f"{CUT} +{len(args) - 20} more items")
        return f"{type_name(value)}({', '.join(shown)})"

    def repr(self, value: Any) -> str:
        """``safe_repr`` of ``value``, computed once per call (see `Reprs`)."""
        return repr_once(value, self.string_cap, self.reprs)

    def _container(
        self,
        fill: Callable[[Any, Iterable[Any], int | None, int], Any],
        owner: Any,
        items: Iterable[Any],
        size: int | None,
        depth: int,
    ) -> Any:
        """``fill(owner, items, size, depth)``, unless ``owner`` is past the depth cap (its
        summary) or already on the path from the root (the cycle marker)."""
        if depth >= self.depth_cap:
            return self.text(_summary(owner, size))
        key_id = id(owner)
        if key_id in self.on_path:
            return self.text(CYCLE)
        self.on_path.add(key_id)
        try:
            return fill(owner, items, size, depth)
        finally:
            self.on_path.discard(key_id)

    def _mapping(self, owner: Any, items: Iterable[Any], size: int | None, depth: int) -> Any:
        return self._container(self._fill_mapping, owner, items, size, depth)

    def _sequence(self, owner: Any, items: Iterable[Any], size: int | None, depth: int) -> Any:
        return self._container(self._fill_sequence, owner, items, size, depth)

    def _fill_mapping(self, owner: Any, items: Iterable[Any], size: int | None, depth: int) -> Any:
        out: dict[str, Any] = {}
        self.budget -= 2
        redact = self.limits.redact
        for count, (key, item) in enumerate(items):
            if count >= self.items_cap or self.budget <= 0:
                more = "" if size is None else f"+{size - count} "
                out[CUT] = f"{more}more keys"
                break
            name = json_key(key)
            if len(name) > self.string_cap:
                name = name[: self.string_cap] + CUT
            if redact and len(name) >= 8:
                name = scrub_text(name, self.limits)
            if name in out:
                name = f"{name}#{count}"
            self.budget -= utf8_len(name) + 4
            if (
                redact
                and is_secret_name(name, self.limits)
                and hides_value(name, item, self.limits)
            ):
                self.budget -= len(REDACTED) + 2
                out[name] = REDACTED
            else:
                out[name] = self.walk(item, depth + 1)
        return out

    def _fill_sequence(self, owner: Any, items: Iterable[Any], size: int | None, depth: int) -> Any:
        out: list[Any] = []
        self.budget -= 2
        for item in items:
            if len(out) >= self.items_cap or self.budget <= 0:
                more = "" if size is None else f" +{size - len(out)} more items"
                out.append(CUT + more)
                break
            out.append(self.walk(item, depth + 1))
        return out

    def _set(self, value: AbstractSet[Any], depth: int) -> Any:
        """A set as a list: ordered by value when its items are plain built-in values
        (C comparisons), else its first items met, ordered by their converted form.

        No user ``__lt__`` / ``__eq__`` ever runs: sorting 4,000 user objects
        would call their comparisons thousands of times.
        """
        size = length(value)
        if depth >= self.depth_cap:
            return self.text(_summary(value, size))
        cap = self.items_cap + 1  # one extra tells _sequence that more follow
        head = list(itertools.islice(value, _SORT_MAX + 1))
        if all(type(item) in _ORDERABLE for item in head):
            items = head if len(head) <= _SORT_MAX else head[:cap]
            try:
                ordered = heapq.nsmallest(cap, items)
            except TypeError:  # mixed types that do not compare: by their (built-in) repr
                ordered = heapq.nsmallest(cap, items, key=repr)
            return self._sequence(value, ordered, size, depth)
        return self._container(self._fill_set, value, head[:cap], size, depth)

    def _fill_set(self, owner: Any, items: Iterable[Any], size: int | None, depth: int) -> Any:
        """Items converted first, then ordered by their JSON text (the cut marker last)."""
        out: list[Any] = []
        self.budget -= 2
        more: str | None = None
        for item in items:
            if len(out) >= self.items_cap or self.budget <= 0:
                more = CUT + ("" if size is None else f" +{size - len(out)} more items")
                break
            out.append(self.walk(item, depth + 1))
        out.sort(key=_converted_order)
        if more is not None:
            out.append(more)
        return out


Way = Callable[[Walker, Any, type, int], Any]


def _way(kind: type) -> Way:
    """How the walk converts values of a class (not an exact built-in type), by the class
    alone: a mock, an enum, a record, a built-in's subclass, a standard library shape,
    a mapping, a deque, a set, an array, a date, a number or path shown as text, an
    exception; else a leaf (`Walker._leaf`: a buffer, a sequence, or the repr, and a
    class found to be neither a buffer nor a sequence is remembered as shown by repr)."""
    try:
        if is_opaque_class(kind):
            return Walker._opaque
        if issubclass(kind, enum.Enum):
            return Walker._enum
        if is_record_class(kind):
            return Walker._record
        if issubclass(kind, (str, int, float)):
            return Walker._scalar
        if issubclass(kind, dict):
            return Walker._dict
        if issubclass(kind, (list, tuple)):
            return Walker._list
        if is_shape_class(kind):
            return Walker._shaped
        return _later_way(kind)
    except BaseException:  # a check that raised (a metaclass's hooks): a summary or the repr
        let_signals_through()
        return Walker._leaf


def _later_way(kind: type) -> Way:
    if issubclass(kind, Mapping):
        return Walker._any_mapping
    if issubclass(kind, deque):
        return Walker._deque
    if issubclass(kind, AbstractSet):
        return Walker._any_set
    if is_array_class(kind):
        return Walker._array
    if issubclass(kind, (datetime.date, datetime.time)):
        return Walker._iso
    if issubclass(kind, (datetime.timedelta, uuid.UUID, Decimal, PurePath)):
        return Walker._str
    if issubclass(kind, BaseException):
        return Walker._error
    return Walker._leaf


# The way of each class met (`_way`).
_WAYS: Final[ClassMemo[Way]] = ClassMemo()


# Item types whose built-in comparisons order a set without running user code.
_ORDERABLE: Final = frozenset({str, int, float, bool, bytes, type(None)})


def _converted_order(item: Any) -> str:
    try:
        return encode_json(item)
    except BaseException:  # NaN and the like: still ordered, by repr
        let_signals_through()
        return repr(item)


_PLAIN_REPR: Final = frozenset({str, int, float, bool, type(None), bytes})


def bounded_repr(value: Any, limits: Limits, max_chars: int, reprs: Reprs | None = None) -> str:
    """``repr(value)`` without rendering big contents: long text cut, big values summarised.

    Cheap reprs (`cheap_repr`) are the real one (once per call, from `reprs`);
    a long str is the repr of its head plus the marker; anything else big is
    the repr of its bounded walk (`to_jsonable`: ``<bytes len=50000000 …>``,
    lists cut with a count). Never raises.
    """
    try:
        if type(value) is str and len(value) > max_chars:
            return repr(value[:max_chars]) + truncated(len(value) - max_chars)
        if cheap_repr(value):
            if type(value) in _PLAIN_REPR:
                return repr(value)[: max_chars + 64]
            return repr_once(value, limits.max_string, reprs)[: max_chars + 64]
        converted = to_jsonable(value, limits, reprs)
        return converted if type(converted) is str else safe_repr(converted, max_chars)
    except BaseException as exc:  # recording contains everything
        let_signals_through()
        return f"<{type_name(value)} object (repr failed: {type_name(exc)})>"


def to_jsonable(value: Any, limits: Limits, reprs: Reprs | None = None) -> Any:
    """Convert any value to JSON-compatible data under `limits`; never raises.

    Returns dicts with str keys, lists, str, int, float (finite), bool and None.
    The walk is bounded by `limits.max_value_bytes` worth of output, so huge
    inputs cost about as much as small ones. `reprs` is the call's repr cache.
    """
    try:
        return Walker(limits, limits.max_value_bytes, reprs).walk(value, 0)
    except BaseException as exc:  # the walker contains errors; the last line
        let_signals_through()
        return f"<{type_name(value)} object (serialization failed: {type_name(exc)})>"


__all__ = ["CYCLE", "Walker", "bounded_repr", "json_key", "to_jsonable"]
