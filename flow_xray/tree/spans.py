"""Plain span data: the one shape every span source is reduced to, and a compact store of it.

The span processor turns SDK spans into rows of a `SpanStore`; the trace file
readers (`flow_xray.formats`) turn files into `SpanRecord`s; `flow_xray.tree.build` builds
`TraceNode` trees from either. Nothing here imports OpenTelemetry.
"""

from __future__ import annotations

import bisect
from array import array
from collections import deque
from collections.abc import Callable, Container, Iterable, Iterator, Mapping, Sequence
from dataclasses import MISSING, dataclass, field, fields
from typing import Any, Final, overload

from flow_xray import attributes as attr
from flow_xray.hexids import HexIds
from flow_xray.tree.packed import BLOCK, BLOCK_BITS, PackedValues
from flow_xray.tree.store_views import Statuses, trace_id_bytes

# str, bool, int, float or a sequence of them, as OpenTelemetry allows; typed
# loosely because readers (OTLP JSON) may also produce nested mappings.
AttributeValue = Any


@dataclass(frozen=True, slots=True)
class EventRecord:
    """A span event: name, wall-clock time (ns since the epoch) and attributes."""

    name: str
    time_ns: int
    attributes: Mapping[str, AttributeValue] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class SpanRecord:
    """One span as plain data.

    Ids are lowercase hex (32 digits for traces, 16 for spans). ``end_ns`` is
    None for a span that never ended (a crash, an interrupt, a capture that
    closed first). ``status`` is ``"UNSET"``, ``"OK"`` or ``"ERROR"``.
    """

    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    start_ns: int
    end_ns: int | None
    status: str = "UNSET"
    status_message: str | None = None
    attributes: Mapping[str, AttributeValue] = field(default_factory=dict)
    events: tuple[EventRecord, ...] = ()


# A row as the processor hands it over (ids as ints, parent 0 for none):
# (trace_id, span_id, parent_id, name, start_ns, end_ns, status, message, keys, values, events)
Row = tuple[int, int, int, str, int, int, str, "str | None", tuple[str, ...], tuple[Any, ...], Any]
Shape = tuple[str, "str | None", tuple[str, ...]]  # a row's status, status message, keys
PartColumns = tuple[
    Sequence[str], list[int], list[int], list[int], list[int], list[Shape], list[tuple[Any, ...]]
]
Columns = tuple["array[int]", "array[int]", "array[int]", "array[int]", list[str], Sequence[str]]

_LOW_64: Final = (1 << 64) - 1
_USAGE_KEYS: Final = frozenset((*attr.READ_MODEL, *attr.READ_PROMPT_TOKENS))


class SpanStore(Sequence[SpanRecord]):
    """Finished spans kept compactly, read back as `SpanRecord`s.

    A capture can hold a million spans, so rows the processor adds are not kept as objects
    with dicts: ids and times sit in typed arrays, attribute values are packed by function a
    block of rows at a time (`flow_xray.tree.packed`) beside an interned tuple of keys shared
    by every span of the same shape, names and statuses are interned, trace ids kept once per
    run of rows sharing one, events only for rows that have some. Records appended from
    elsewhere (other processes, snapshots of open spans) are kept as they are. Reading
    (iteration, indexing) builds each `SpanRecord` on the fly; the store never changes it.

    With ``max_spans`` the store is bounded: it keeps the first ``max_spans/2``
    spans to finish (the head), the last ones (the tail), and beyond the cap
    every failed span and every LLM call; the others are dropped and counted
    in `dropped`. For a dropped span only its parent link is kept (16 bytes),
    so `nearest_kept_parent` can hang its kept descendants under the nearest
    kept ancestor and the tree stays connected.

    Example::

        store = SpanStore()
        store.append(record)
        tree = build_tree(store)
    """

    __slots__ = (
        "_ends",
        "_events",
        "_head",
        "_ids",
        "_kept_links",
        "_lost_ids",
        "_lost_parents",
        "_names",
        "_odd_lost",
        "_others",
        "_parents",
        "_shapes",
        "_starts",
        "_strings",
        "_tail",
        "_trace_high",
        "_trace_int",
        "_trace_low",
        "_trace_starts",
        "_values",
        "dropped",
        "max_spans",
    )

    def __init__(self, max_spans: int | None = None) -> None:
        self.max_spans = max_spans
        self.dropped = 0
        self._ids = array("Q")
        self._parents = array("Q")
        self._starts = array("q")
        self._ends = array("q")
        # Trace ids by runs: the row where each run of one trace id starts, and the id as
        # two 64-bit halves (a loop of top-level calls starts a trace per call: 16 bytes
        # each, where its hex text would take 81).
        self._trace_starts = array("Q")
        self._trace_high = array("Q")
        self._trace_low = array("Q")
        self._trace_int = -1  # the last run's trace id as a number
        self._names: list[str] = []
        # (status, message, keys): interned, so most rows share one tuple
        self._shapes: list[tuple[str, str | None, tuple[str, ...]]] = []
        self._values = PackedValues()  # each row's attribute values
        self._events: dict[int, tuple[EventRecord, ...]] = {}  # by row, rows with events only
        self._others: list[SpanRecord] = []
        self._strings: dict[Any, Any] = {}
        self._odd_lost: dict[str, str | None] = {}  # parent links of dropped appended records
        self._head = (max_spans + 1) // 2 if max_spans is not None else -1
        self._tail: deque[Row | SpanRecord] = deque()
        self._lost_ids = array("Q")
        self._lost_parents = array("Q")
        self._kept_links: tuple[array[int], array[int], dict[str, str | None]] | None = None

    # --- adding ---------------------------------------------------------------

    def add(
        self,
        trace_id: int,
        span_id: int,
        parent_id: int,
        name: str,
        start_ns: int,
        end_ns: int,
        status: str,
        message: str | None,
        keys: tuple[str, ...],
        values: tuple[Any, ...],
        events: tuple[EventRecord, ...] = (),
    ) -> None:
        """Add one finished span given as plain parts (ids as ints, ``parent_id`` 0 for none)."""
        if self.max_spans is None:  # the common case: stored at once
            self._store(trace_id, span_id, parent_id, name, start_ns, end_ns, status, message,
                        keys, values, events)  # fmt: skip
            return
        row: Row = (trace_id, span_id, parent_id, name, start_ns, end_ns, status, message, keys,
                    values, events)  # fmt: skip
        if self._admit(row, status, keys, values):
            self._store(*row)

    def append(self, record: SpanRecord) -> None:
        """Add a record from any source (kept as it is)."""
        if self.max_spans is not None:
            keys = tuple(record.attributes)
            values = tuple(record.attributes.values())
            if not self._admit(record, record.status, keys, values):
                return
        self._others.append(record)

    def extend(self, records: Iterable[SpanRecord]) -> None:
        """`append` each record."""
        for record in records:
            self.append(record)

    def _store(
        self,
        trace_id: int,
        span_id: int,
        parent_id: int,
        name: str,
        start: int,
        end: int,
        status: str,
        message: str | None,
        keys: tuple[str, ...],
        values: tuple[Any, ...],
        events: tuple[EventRecord, ...],
    ) -> None:
        """Append one row to the columns: whole, or not at all (an exception raised inside,
        a signal's: Ctrl-C lands anywhere, leaves nothing half-added, see `_even_out`)."""
        try:
            strings = self._strings
            if trace_id != self._trace_int:
                self._new_trace_run(trace_id)
            if events:
                self._events[len(self._ids)] = events
            self._ids.append(span_id)
            self._parents.append(parent_id)
            self._starts.append(start)
            self._ends.append(end)
            self._names.append(strings.setdefault(name, name))
            shape = (status, message, keys)
            self._shapes.append(strings.setdefault(shape, shape))
            recent = self._values.recent
            recent.append(values)
            if len(recent) == BLOCK:
                self._values.pack(self._shapes, self._names)
        except BaseException:
            self._even_out()
            raise

    def _even_out(self) -> None:
        """Drop what a row left half-added (an exception raised inside `add`), so that every
        column holds the same rows again before the next one comes."""
        values, starts = self._values, self._trace_starts
        columns: tuple[Any, ...] = (self._ids, self._parents, self._starts, self._ends,
                                     self._names, self._shapes)  # fmt: skip
        rows = min(map(len, columns))
        packed = len(values.blocks) << BLOCK_BITS  # (a block packed, `recent` not yet emptied)
        del values.recent[max(rows - packed, 0) :]
        rows = min(rows, packed + len(values.recent))
        for column in columns:
            del column[rows:]
        for row in [row for row in self._events if row >= rows]:
            del self._events[row]
        runs = min(len(starts), len(self._trace_high), len(self._trace_low))
        while runs and starts[runs - 1] >= rows:
            runs -= 1
        for run_column in (starts, self._trace_high, self._trace_low):
            del run_column[runs:]
        self._trace_int = self._trace_high[-1] << 64 | self._trace_low[-1] if runs else -1

    def _new_trace_run(self, trace_id: int) -> None:
        self._trace_int = trace_id
        self._trace_starts.append(len(self._ids))
        self._trace_high.append(trace_id >> 64)
        self._trace_low.append(trace_id & _LOW_64)

    def _trace(self, index: int) -> str:
        """The trace id of row ``index``."""
        run = bisect.bisect_right(self._trace_starts, index) - 1
        return format(self._trace_high[run] << 64 | self._trace_low[run], "032x")

    # --- the cap --------------------------------------------------------------

    def _admit(
        self, item: Row | SpanRecord, status: str, keys: tuple[str, ...], values: tuple[Any, ...]
    ) -> bool:
        """Whether to keep ``item`` now; otherwise it waits in the tail (or is dropped)."""
        if len(self) < self._head or status == "ERROR" or _is_llm(keys, values):
            return True
        tail = self._tail
        if len(tail) >= (self.max_spans or 0) - self._head:
            if not tail:
                self._lose(item)
                return False
            self._lose(tail.popleft())
        tail.append(item)
        return False

    def _lose(self, item: Row | SpanRecord) -> None:
        self.dropped += 1
        self._kept_links = None
        if isinstance(item, SpanRecord):
            self._odd_lost[item.span_id] = item.parent_id
        else:
            self._lost_ids.append(item[1])
            self._lost_parents.append(item[2])

    def seal(self) -> SpanStore:
        """Move the tail into the store (done before reading); return the store."""
        tail, self._tail = self._tail, deque()
        for item in tail:
            if isinstance(item, SpanRecord):
                self._others.append(item)
            else:
                self._store(*item)
        return self

    def nearest_kept_parent(self, parent_id: str | None, kept: Container[str]) -> str | None:
        """The closest ancestor in ``kept`` of a span whose parent ``parent_id`` was dropped."""
        if not self.dropped:
            return None
        links = self._kept_links
        if links is None:
            order = sorted(range(len(self._lost_ids)), key=self._lost_ids.__getitem__)
            links = self._kept_links = (
                array("Q", (self._lost_ids[i] for i in order)),
                array("Q", (self._lost_parents[i] for i in order)),
                self._odd_lost,
            )
        ids, parents, odd = links
        current = parent_id
        for _ in range(self.dropped + 1):
            if current is None:
                return None
            if current in kept:
                return current
            if current in odd:
                current = odd[current]
                continue
            number = _hex_int(current)
            at = bisect.bisect_left(ids, number) if number is not None else len(ids)
            if at == len(ids) or ids[at] != number:
                return None
            current = format(parents[at], "016x") if parents[at] else None
        return None

    # --- reading --------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._ids) + len(self._others)

    @overload
    def __getitem__(self, index: int) -> SpanRecord: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[SpanRecord]: ...

    def __getitem__(self, index: int | slice) -> SpanRecord | Sequence[SpanRecord]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        rows = len(self._ids)
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError("span index out of range")
        return self._record(index) if index < rows else self._others[index - rows]

    def __iter__(self) -> Iterator[SpanRecord]:
        record = self._record
        for index in range(len(self._ids)):
            yield record(index)
        yield from self._others

    def columns(self) -> Columns:
        """The rows' span ids, parent ids (0 for none), start and end times (`NO_END`: never
        ended), names and statuses.

        Row ``i`` is item ``i`` of the store; the records appended from elsewhere
        (`appended`) come after the rows.
        """
        ids, parents, starts, ends = self._ids, self._parents, self._starts, self._ends
        return ids, parents, starts, ends, self._names, Statuses(self._shapes)

    @property
    def appended(self) -> Sequence[SpanRecord]:
        """The records added with `append` (kept as they are), after the rows."""
        return self._others

    def shapes(self) -> Sequence[tuple[str, str | None, tuple[str, ...]]]:
        """Each row's status, status message and attribute keys (one tuple shared by rows alike)."""
        return self._shapes

    def earliest_start(self) -> int | None:
        """The smallest start time, or None when empty."""
        starts = [min(self._starts)] if self._starts else []
        starts.extend(r.start_ns for r in self._others)
        return min(starts) if starts else None

    def parts(
        self, index: int
    ) -> (
        tuple[str, int, int, str, int, int | None, str, tuple[str, ...], tuple[Any, ...], Any]
        | None
    ):
        """Row ``index``'s fields without building its record: trace id, span id and parent id
        (ints, 0 for none), name, start, end (None if it never ended), status, attribute keys
        and values, events. None for a record appended from elsewhere (read it by index)."""
        if not 0 <= index < len(self._ids):
            return None
        status, _, keys = self._shapes[index]
        end = self._ends[index]
        return (
            self._trace(index),
            self._ids[index],
            self._parents[index],
            self._names[index],
            self._starts[index],
            None if end == NO_END else end,
            status,
            keys,
            self._values[index],
            self._events.get(index, ()),
        )

    def part_columns(self, rows: Sequence[int]) -> PartColumns:
        """`parts` of many rows as columns (rows only, not `appended` records): trace ids,
        span ids and parent ids (ints, 0 for none), starts, ends (`NO_END` if it never
        ended), shapes (`shapes`) and attribute values. Rows with events are `event_rows`."""
        if len(self._trace_starts) == 1:
            trace_ids: Sequence[str] = [self._trace(0)] * len(rows)
        else:  # (a trace per top-level call, say: kept as bytes)
            found = (self._trace_starts, self._trace_high, self._trace_low, len(self._ids), rows)
            trace_ids = HexIds(trace_id_bytes(*found), 16)
        return (
            trace_ids,
            list(map(self._ids.__getitem__, rows)),
            list(map(self._parents.__getitem__, rows)),
            list(map(self._starts.__getitem__, rows)),
            list(map(self._ends.__getitem__, rows)),
            list(map(self._shapes.__getitem__, rows)),
            self._values.take(rows),
        )

    @property
    def event_rows(self) -> Container[int]:
        """The rows whose spans have events."""
        return self._events.keys()

    def _record(self, index: int) -> SpanRecord:
        status, message, keys = self._shapes[index]
        parent = self._parents[index]
        end = self._ends[index]
        return _new_record(
            self._trace(index),
            format(self._ids[index], "016x"),
            format(parent, "016x") if parent else None,
            self._names[index],
            self._starts[index],
            None if end == NO_END else end,
            status,
            message,
            dict(zip(keys, self._values[index], strict=True)),
            self._events.get(index, ()),
        )


def _record_maker() -> Callable[..., SpanRecord]:
    """A `SpanRecord` constructor for rows, about twice as fast as the frozen dataclass's own
    (which sets each field through ``object.__setattr__``). Fields past the ten a row fills
    get their defaults, so a field added to `SpanRecord` later is never left unset."""
    slots = [SpanRecord.__dict__[f.name].__set__ for f in fields(SpanRecord)]
    rest = [
        (slot, f.default, f.default_factory)
        for slot, f in zip(slots[10:], fields(SpanRecord)[10:], strict=True)
    ]
    t0, t1, t2, t3, t4, t5, t6, t7, t8, t9 = slots[:10]
    new = object.__new__

    def make(*parts: Any) -> SpanRecord:
        record = new(SpanRecord)
        a0, a1, a2, a3, a4, a5, a6, a7, a8, a9 = parts
        t0(record, a0)
        t1(record, a1)
        t2(record, a2)
        t3(record, a3)
        t4(record, a4)
        t5(record, a5)
        t6(record, a6)
        t7(record, a7)
        t8(record, a8)
        t9(record, a9)
        for slot, default, factory in rest:
            slot(record, factory() if factory is not MISSING else default)
        return record

    return make


_new_record = _record_maker()
NO_END: Final = -(1 << 63)  # ``end_ns`` of a row for a span that never ended


def _is_llm(keys: tuple[str, ...], values: tuple[Any, ...]) -> bool:
    """An LLM call: kind LLM, or a model or token count on the span."""
    for key, value in zip(keys, values, strict=False):
        if key in _USAGE_KEYS or (key == attr.SPAN_KIND and value == "LLM"):
            return True
    return False


def _hex_int(text: str) -> int | None:
    try:
        return int(text, 16)
    except ValueError:
        return None
