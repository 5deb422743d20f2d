"""The counting rule on the wire: a span's exported usage names are decided once its
request's owner is known.

Backends (Phoenix, Langfuse, Tempo and Jaeger queries) add up
``llm.token_count.*`` / ``gen_ai.usage.*`` / ``llm.cost.*`` over a trace's
spans. When several spans report one LLM request (``@trace(kind="llm")``
around an instrumentor's span, two instrumentors side by side, the provider
SDK's own span) only one of them may carry those names, whichever ends first:
a returned stream's instrumentor span, for one, ends *after* the traced call
that returned it.

`UsageGate` sits in front of each of flow-xray's export pipelines (OTLP and the
OTLP JSON file, `flow_xray.sdk.otlp`). It sees every span start and end; a span
without a usage figure passes straight through. A span reporting one is held
until its subtree has ended, so have the siblings that overlapped it, and its
parent has moved on (ended, or started a child after it: an instrumentor may
create its span when the call returns, with the call's start time), then
the one counting rule (`flow_xray.analysis.accounting`, over the figures of
that span, its subtree and those siblings) decides: counted, it is exported
with its figure under every summed name (`flow_xray.llm.usage.with_both_families`:
the provider SDK's own span writes only ``gen_ai.usage.*``, an instrumentor's
no cost); not counted, its figure goes under ``flow_xray.usage.*``
(`flow_xray.llm.usage.as_duplicate`), the model staying. Held spans are
released at the latest by a flush or the shutdown, decided with what is known
by then.

What is kept per open span is small (its parent, start, the figures of the
finished spans below it); the figures kept per span are capped (`MAX_GROUPS`),
and so are the spans whose parent never started here (`MAX_PLACEHOLDERS`).
"""

from __future__ import annotations

import dataclasses
import threading
import weakref
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Final

from opentelemetry.sdk.trace import ReadableSpan

from flow_xray import attributes as attr
from flow_xray.analysis.accounting import build_result
from flow_xray.llm.requests import REPORT_KEYS, Request, report_from_attributes, same_request
from flow_xray.llm.usage import as_duplicate, with_both_families
from flow_xray.runtime import patches
from flow_xray.sdk.rows import to_record
from flow_xray.tree.model import TraceNode
from flow_xray.tree.spans import SpanRecord

__all__ = ["MAX_GROUPS", "MAX_PLACEHOLDERS", "UsageGate"]

MAX_GROUPS: Final = 4096
MAX_PLACEHOLDERS: Final = 4096
# What the rule reads of a held span: its figure, response id, scope and kind.
_KEPT_KEYS: Final = frozenset(
    {
        *attr.READ_MODEL,
        *attr.READ_PROMPT_TOKENS,
        *attr.READ_COMPLETION_TOKENS,
        *attr.READ_TOTAL_TOKENS,
        *attr.READ_COST,
        *attr.READ_RESPONSE_ID,
        attr.OTEL_SCOPE_NAME,
        attr.USAGE_COUNTED_IN,
        attr.SPAN_KIND,
    }
)


@dataclass(slots=True, eq=False)
class _Group:
    """A finished span's figure (if it reports one) and the figures below it."""

    record: SpanRecord | None
    start: int
    end: int
    below: list[_Group]


@dataclass(slots=True, eq=False)
class _Entry:
    """A span seen starting (or a placeholder for a parent not seen), until its subtree ends."""

    parent: int
    start: int
    end: int = 0
    pending: int = 1  # itself while open, plus its children whose subtree has not ended
    open_children: set[int] = field(default_factory=set)
    groups: list[_Group] = field(default_factory=list)
    record: SpanRecord | None = None
    held: ReadableSpan | None = None
    placeholder: bool = False
    latest_child_start: int = 0  # the latest start time of a child seen starting
    waiting: list[_Waiting] = field(default_factory=list)  # children waiting for it to move on


@dataclass(slots=True, eq=False)
class _Waiting:
    """A held span whose subtree has ended, waiting for overlapping siblings to end."""

    span: ReadableSpan
    group: _Group
    parent_id: int
    parent: _Entry | None
    blockers: set[int]
    released: bool = False


def _span_ids(span: ReadableSpan) -> tuple[int, int]:
    """The span's id and its parent's (0 for none), read from the SDK span's own fields
    (its properties cost several times more, on every span)."""
    try:
        fields = span.__dict__
        context, parent = fields["_context"], fields["_parent"]
    except (AttributeError, KeyError):  # not laid out as the SDK's span
        context, parent = span.context, span.parent
    return (context.span_id if context else 0), (parent.span_id if parent is not None else 0)


def _compact(span: ReadableSpan) -> SpanRecord:
    """The span as the rule reads it: times, status and the usage-related attributes."""
    record = to_record(span)
    kept = {k: v for k, v in record.attributes.items() if k in _KEPT_KEYS}
    return dataclasses.replace(record, attributes=kept, events=())


class UsageGate:
    """Hold each span reporting LLM usage until its request's owner is known, then hand
    it (its figure renamed when counted elsewhere) to ``emit``; pass the rest at once.

    Thread-safe; ``emit`` is called outside the gate's lock.
    """

    def __init__(self, emit: Callable[[ReadableSpan], None]) -> None:
        self._emit = emit
        self._lock = threading.Lock()
        self._entries: dict[int, _Entry] = {}
        self._waiters: dict[int, list[_Waiting]] = {}
        self._placeholders: dict[int, None] = {}  # insertion order, for the cap
        _GATES.add(self)
        patches.install(_RESET_AT_FORK)

    def started(self, span: ReadableSpan) -> None:
        """A span started: track it under its parent."""
        span_id, parent_id = _span_ids(span)
        out: list[ReadableSpan] = []
        with self._lock:
            self._entries[span_id] = _Entry(parent_id, span.start_time or 0)
            parent = self._entries.get(parent_id) if parent_id else None
            if parent is not None and not parent.placeholder:
                parent.pending += 1
                parent.open_children.add(span_id)
                start = span.start_time or 0
                parent.latest_child_start = max(parent.latest_child_start, start)
                if parent.waiting:
                    out = self._moved_on(parent)
        for ready in out:
            self._emit(ready)

    def ended(self, span: ReadableSpan) -> None:
        """A span ended: pass it on, or hold it while its request's owner is not known."""
        attributes = span.attributes or {}
        reports = not REPORT_KEYS.isdisjoint(attributes) and (
            report_from_attributes(span.name, attributes) is not None
        )
        if not reports and not self._entries:
            self._emit(span)  # nothing open anywhere: no figure below can be waiting
            return
        out: list[ReadableSpan] = []
        with self._lock:
            self._end(span, reports, out)
        if not reports:
            self._emit(span)
        for ready in out:
            self._emit(ready)

    def release_all(self) -> None:
        """Decide every held span now, with what is known (a flush or the shutdown)."""
        out: list[ReadableSpan] = []
        with self._lock:
            waiting_now = [w for ws in self._waiters.values() for w in ws]
            waiting_now += [w for e in self._entries.values() for w in e.waiting]
            for waiting in waiting_now:
                if not waiting.released:
                    out.append(self._decide(waiting))
            self._waiters.clear()
            for entry in self._entries.values():
                entry.waiting = []
            for entry in self._entries.values():
                if entry.held is not None:
                    group = _Group(entry.record, entry.start, entry.end, _collapse(entry.groups))
                    parent = self._entries.get(entry.parent)
                    out.append(
                        self._decide(_Waiting(entry.held, group, entry.parent, parent, set()))
                    )
                    entry.held = None
        for ready in out:
            self._emit(ready)

    def reset(self) -> None:
        """Forget everything (a forked child: the parent's open spans are not its own)."""
        self._lock = threading.Lock()
        self._entries, self._waiters, self._placeholders = {}, {}, {}

    # --- under the lock ------------------------------------------------------------
    def _end(self, span: ReadableSpan, reports: bool, out: list[ReadableSpan]) -> None:
        span_id, parent_id = _span_ids(span)
        entry = self._entries.get(span_id)
        if entry is None or entry.placeholder:  # its start was not seen here
            groups = entry.groups if entry is not None else []
            self._placeholders.pop(span_id, None)
            entry = self._entries[span_id] = _Entry(parent_id, span.start_time or 0)
            entry.groups = groups
        entry.end = span.end_time or entry.start
        if reports:
            entry.record, entry.held = _compact(span), span
        if entry.waiting:
            out.extend(self._moved_on(entry, ended=True))
        entry.pending -= 1
        if entry.pending <= 0:
            self._finished(span_id, entry, out)

    def _finished(self, span_id: int, entry: _Entry, out: list[ReadableSpan]) -> None:
        """``span_id``'s subtree has ended: hand its figures up, decide what waited on it."""
        while True:
            del self._entries[span_id]
            group = _Group(entry.record, entry.start, entry.end, _collapse(entry.groups))
            parent = self._parent_of(entry, group)
            if parent is not None and (group.record is not None or group.below):
                parent.groups.append(group)
                if len(parent.groups) > MAX_GROUPS:
                    del parent.groups[0]
            if parent is not None:
                parent.open_children.discard(span_id)
            if entry.held is not None:
                self._hold(entry, group, parent, out)
            for waiting in self._waiters.pop(span_id, ()):
                waiting.blockers.discard(span_id)
                if not waiting.blockers:
                    self._ready(waiting, out)
            if parent is None or parent.placeholder:
                return
            parent.pending -= 1
            if parent.pending > 0:
                return
            span_id, entry = entry.parent, parent

    def _parent_of(self, entry: _Entry, group: _Group) -> _Entry | None:
        """The parent's entry; a placeholder when it was not seen starting and figures
        must wait for it (a parent in a child process, or started before this gate)."""
        if not entry.parent:
            return None
        parent = self._entries.get(entry.parent)
        if parent is None and (group.record is not None or group.below):
            parent = self._entries[entry.parent] = _Entry(0, entry.start, placeholder=True)
            self._placeholders[entry.parent] = None
            if len(self._placeholders) > MAX_PLACEHOLDERS:
                oldest = next(iter(self._placeholders))
                del self._placeholders[oldest]
                self._entries.pop(oldest, None)
        return parent

    def _hold(
        self, entry: _Entry, group: _Group, parent: _Entry | None, out: list[ReadableSpan]
    ) -> None:
        assert entry.held is not None
        blockers: set[int] = set()
        if parent is not None and not parent.placeholder:
            blockers = {
                child
                for child in parent.open_children
                if (sibling := self._entries.get(child)) is not None and sibling.start <= entry.end
            }
        waiting = _Waiting(entry.held, group, entry.parent, parent, blockers)
        entry.held = None
        if not blockers:
            self._ready(waiting, out)
            return
        for blocker in blockers:
            self._waiters.setdefault(blocker, []).append(waiting)

    def _ready(self, waiting: _Waiting, out: list[ReadableSpan]) -> None:
        """Decide ``waiting`` once its parent has moved on: ended, or started a child after
        it. Until then another sibling may still be reported as having started during it
        (an instrumentor that creates its span when the call returns, with its start time)."""
        parent = waiting.parent
        if waiting.released:
            return
        if (
            parent is None
            or parent.placeholder
            or parent.end
            or (parent.latest_child_start > waiting.group.end)
        ):
            out.append(self._decide(waiting))
        else:
            parent.waiting.append(waiting)

    def _moved_on(self, parent: _Entry, ended: bool = False) -> list[ReadableSpan]:
        """Decide the children that waited for ``parent`` to move on and now may."""
        out: list[ReadableSpan] = []
        still: list[_Waiting] = []
        for waiting in parent.waiting:
            if waiting.released:
                continue
            if ended or parent.latest_child_start > waiting.group.end:
                out.append(self._decide(waiting))
            else:
                still.append(waiting)
        parent.waiting = still
        return out

    def _decide(self, waiting: _Waiting) -> ReadableSpan:
        """The held span as it is exported, by the counting rule over what is known."""
        waiting.released = True
        span = waiting.span
        try:
            node = _judged(waiting)
            if node is None:
                return span
            attributes = span.attributes or {}
            if node[0].usage_counted is False:
                return _with(span, as_duplicate(attributes, node[1]))
            complete = with_both_families(attributes)
            return span if complete is None else _with(span, complete)
        except Exception:  # the rule failing must not lose the span: exported as it is
            return span


def _collapse(groups: Iterable[_Group]) -> list[_Group]:
    """Groups without a figure of their own replaced by the groups below them."""
    out: list[_Group] = []
    for group in groups:
        if group.record is not None:
            out.append(group)
        else:
            out.extend(group.below)
    return out


def _overlap(a: _Group, b: _Group) -> bool:
    return a.start <= b.end and b.start <= a.end


# Siblings are handed up as their subtrees end, so a parent's groups run in about the
# order they ended: after this many in a row ending before a group started, no earlier
# one overlaps it (a parent with thousands of calls costs a few looks per decision).
_LOOK_BACK: Final = 64


def _overlapping(groups: list[_Group], group: _Group) -> list[_Group]:
    """The groups of ``group``'s siblings that overlap it in time, latest first."""
    found: list[_Group] = []
    before = 0
    for other in reversed(groups):
        if other is group:
            continue
        if _overlap(other, group):
            found.append(other)
            before = 0
        elif other.end < group.start:
            before += 1
            if before >= _LOOK_BACK:
                break
    return found


def _records(groups: Iterable[_Group], parent: str | None) -> Iterator[SpanRecord]:
    """The groups' figures as records, each parented by the nearest figure above it."""
    stack = [(group, parent) for group in groups]
    while stack:
        group, above = stack.pop()
        if group.record is not None:
            yield dataclasses.replace(group.record, parent_id=above)
            above = group.record.span_id
        stack.extend((child, above) for child in group.below)


def _judged(waiting: _Waiting) -> tuple[TraceNode, str] | None:
    """The held span's node under the rule, and (when not counted) where it is counted."""
    record = waiting.group.record
    if record is None:
        return None
    groups = [waiting.group]
    if waiting.parent is not None:
        groups += _overlapping(waiting.parent.groups, waiting.group)
    parent_id = format(waiting.parent_id, "016x") if waiting.parent_id else None
    records = list(_records(groups, parent_id))
    if parent_id is not None:  # the parent, so the siblings are siblings
        start = min(r.start_ns for r in records)
        end = max(r.end_ns or r.start_ns for r in records)
        records.append(SpanRecord(record.trace_id, parent_id, None, "", start, end))
    result = build_result(records)
    nodes = {node.span_id: node for node in result}
    node = nodes.get(record.span_id)
    if node is None:
        return None
    return node, _counted_in(node, nodes.values())


def _request(node: TraceNode) -> Request:
    meta = node.meta
    return Request(
        next(
            (v for k in attr.READ_RESPONSE_ID if isinstance(v := node.attributes.get(k), str)), None
        ),
        meta.get("model"),
        meta.get("prompt_tokens"),
        meta.get("completion_tokens"),
    )


def _counted_in(node: TraceNode, nodes: Iterable[TraceNode]) -> str:
    """The name of the span counting ``node``'s request, or what its figure sums."""
    if node.usage_counted is not False:
        return ""
    own = _request(node)
    twin = next(
        (n for n in nodes if n is not node and n.usage_counted and same_request(_request(n), own)),
        None,
    )
    return twin.name if twin is not None else "the requests inside it"


def _with(span: ReadableSpan, attributes: dict[str, Any]) -> ReadableSpan:
    return ReadableSpan(
        name=span.name,
        context=span.context,
        parent=span.parent,
        resource=span.resource,
        attributes=attributes,
        events=span.events,
        links=span.links,
        kind=span.kind,
        status=span.status,
        start_time=span.start_time,
        end_time=span.end_time,
        instrumentation_scope=span.instrumentation_scope,
    )


_GATES: weakref.WeakSet[UsageGate] = weakref.WeakSet()


def _reset_all() -> None:
    for gate in tuple(_GATES):
        gate.reset()


_RESET_AT_FORK: Final = patches.ForkHook("usage gates", after_in_child=_reset_all)
