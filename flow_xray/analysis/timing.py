"""Where the time went: each call's own time, the "slow" calls, wall time, the critical path.

Computed over a trace's columns (`flow_xray.tree.columns`), so a million-call
page gets them without a dict per call. A call's status for the page
(``view_status``), used for colour everywhere:

- ``error``: the call raised (``status == "error"``).
- ``slow``: the call's *own* time -- its latency minus the time covered by its
  children's intervals -- is at least `SLOW_SHARE` of the trace's wall time.
  Measuring own time points at the call where time actually went rather than
  at every ancestor of it; a trace with a single node has nothing slow.
- ``ghost``: not a call but a function that could have run there and did not
  (``ghost: true``, added by the static context, see `flow_xray.analysis.static`).
- ``ok``: everything else, including calls that never ended (their labels say so).

The critical path is the chain of calls, root to leaf, that decides the wall
time: the root that ends last, then at each step the child of the current call
that ends last (the one the call waited for at its end; of two ending together,
the longer, which contributed more; then the first). A chain, never a set: a
loop of 100,000 sequential calls has a path of two calls, not 100,001. A call
that never ended counts as running until its parent's end. No OpenTelemetry here.
"""

from __future__ import annotations

import heapq
import operator
from array import array
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeGuard

from flow_xray.tree.columns import Columns

_FLOAT = frozenset({float})

SLOW_SHARE = 0.2
TOP = 10  # calls listed by `self_time`


@dataclass(frozen=True, slots=True)
class TreeShape:
    """A flat trace's tree: each call's children, the roots, and each call's interval: its
    start and its end (None if it never ended), as two sequences (a million calls' intervals as
    tuples would take 80 MB; the starts are usually the ``start_ms`` column itself)."""

    kids: list[Sequence[int]]  # a leaf's is an empty tuple, a parent's an array of rows
    roots: list[int]
    starts: Sequence[float]
    ends: Sequence[float | None]


def tree_shape(columns: Columns) -> TreeShape:
    """The tree of a trace's columns (``parent``, ``start_ms``, ``latency_ms``).

    A ghost row (``ghost: true``) is context, not a call: it is nobody's child
    here, so it never changes its parent's own time, the critical path or the
    repeated calls.
    """
    parents = columns["parent"]
    count = len(parents)
    kids: list[Any] = [()] * count  # a list only for the calls that have children
    roots: list[int] = []
    ghosts = columns.get("ghost")
    for index, parent in enumerate(parents):
        if parent < 0:
            roots.append(index)
        elif ghosts is not None and ghosts[index] is True:
            continue
        elif kids[parent]:
            kids[parent].append(index)
        else:  # an array: a million children's rows as ints in lists would take 32 MB more
            kids[parent] = array("q", (index,))
    starts = columns.get("start_ms") or [None] * count
    latencies = columns.get("latency_ms") or [None] * count
    if _FLOAT.issuperset(map(type, starts)) and _FLOAT.issuperset(map(type, latencies)):
        # every call ended, its times plain floats (the common case): no checks per call,
        # the ends as an array of doubles (8 bytes each, where a float object takes 24)
        return TreeShape(kids, roots, starts, array("d", map(operator.add, starts, latencies)))
    begins = [float(start) if _is_number(start) else 0.0 for start in starts]
    ends = [
        begin + float(latency) if _is_number(latency) else None
        for begin, latency in zip(begins, latencies, strict=True)
    ]
    return TreeShape(kids, roots, begins, ends)


def finish_columns(columns: Columns, totals: Any = None) -> TreeShape:
    """Add ``self_ms`` and ``view_status`` (see the module docstring) to a trace's columns.

    ``totals`` is the trace's totals (for the wall time) when known. Returns the
    trace's `TreeShape`, for `flow_xray.analysis.overview.overview`.
    """
    shape = tree_shape(columns)
    kids = shape.kids
    count = len(kids)
    wall = _wall_ms(totals, shape)
    # A call without children: its own time is its latency (the very float, not the end
    # minus the start, which rounds), at least 0; max(0.0, ...) without a call per call.
    latencies = columns.get("latency_ms") or [None] * count
    own = [
        None
        if end is None
        else _own_ms(start, end, kids[index], shape)
        if kids[index]
        else (mine if (mine := float(latency)) > 0.0 else 0.0)
        for index, (start, end, latency) in enumerate(
            zip(shape.starts, shape.ends, latencies, strict=True)
        )
    ]
    statuses = columns.get("status") or [None] * count
    ghosts = columns.get("ghost") or [None] * count
    columns["self_ms"] = own
    columns["view_status"] = [
        _status(status, ghost, mine, count, wall)
        for status, ghost, mine in zip(statuses, ghosts, own, strict=True)
    ]
    return shape


def critical_path(shape: TreeShape) -> list[int]:
    """Rows of the critical path (see the module docstring), root first; [] for no calls.

    Iterative; O(n) over the calls on the path and their children.
    """
    kids, starts, ends = shape.kids, shape.starts, shape.ends
    if not kids:
        return []
    horizon = _horizon(shape)

    def last(rows: Sequence[int], bound: float) -> int:
        """The row ending last (a call that never ended: at ``bound``), longer first, first."""

        def key(i: int) -> tuple[float, float, int]:
            stop = ends[i]
            end = bound if stop is None else stop
            return (end, end - starts[i], -i)

        return max(rows, key=key)

    path = [last(shape.roots, horizon)]
    while kids[path[-1]]:
        stop = ends[path[-1]]
        path.append(last(kids[path[-1]], horizon if stop is None else stop))
    return path


def self_time(own: Sequence[Any]) -> list[int]:
    """The `TOP` rows with the most own time (``self_ms``), most first."""
    timed = (i for i, value in enumerate(own) if value and _is_number(value))  # (no list of
    return heapq.nlargest(TOP, timed, key=lambda i: float(own[i]))  # a million rows)


def _horizon(shape: TreeShape) -> float:
    """When the last call ended (a call that never ended: its start)."""
    return max(s if e is None else e for s, e in zip(shape.starts, shape.ends, strict=True))


def _wall_ms(totals: Any, shape: TreeShape) -> float:
    if isinstance(totals, Mapping) and _is_number(totals.get("wall_time_ms")):
        return float(totals["wall_time_ms"])
    if not shape.kids:
        return 0.0
    return _horizon(shape) - min(shape.starts)


def _status(status: Any, ghost: Any, own: float | None, count: int, wall: float) -> str:
    if status == "error":
        return "error"
    if ghost is True:  # a function that could have run here but did not
        return "ghost"
    if count < 2 or wall <= 0 or own is None:
        return "ok"
    return "slow" if own >= SLOW_SHARE * wall else "ok"


def _own_ms(start: float, end: float, children: Sequence[int], shape: TreeShape) -> float:
    """Latency not covered by the union of the children's intervals (clipped to the parent).

    A child that never ended counts as running until the parent's end.
    """
    covered = 0.0
    cursor = start
    starts, ends = shape.starts, shape.ends
    closed: list[tuple[float, float]] = []
    for k in children:
        stop = ends[k]
        closed.append((starts[k], end if stop is None else stop))
    for child_start, child_end in sorted(closed):
        # max(child_start, cursor) and min(child_end, end), without two calls per child
        begin = cursor if cursor > child_start else child_start
        finish = end if end < child_end else child_end
        if finish > begin:
            covered += finish - begin
            cursor = finish
    rest = end - start - covered
    if not rest > 0.0:  # max(0.0, rest); NaN too
        return 0.0
    # On the nanosecond grid the times come from (the subtractions only added rounding):
    # then a page stores the column as whole nanoseconds, as it does latencies.
    return round(rest * 1e6) / 1e6 if rest < _NS_EXACT else rest


_NS_EXACT = 2.0**53 / 1e6  # ms below which a count of nanoseconds is an exact float


def _is_number(value: Any) -> TypeGuard[int | float]:
    kind = type(value)
    return kind is float or kind is int or (kind is not bool and isinstance(value, (int, float)))
