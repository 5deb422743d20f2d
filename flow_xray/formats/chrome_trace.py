"""Chrome trace-event files (viztracer, ``chrome://tracing``, Perfetto's JSON) as a call tree.

The object form ``{"traceEvents": [...], ...}`` and the bare array ``[...]``
both hold timed events: ``"ph": "X"`` complete events (``ts`` and ``dur`` in
microseconds) and ``"B"`` / ``"E"`` begin/end pairs, per process (``pid``) and
thread (``tid``); ``"M"`` metadata names the threads. Calls nest by time within
a thread: an event inside another's interval is its child. Each process is one
trace; thread names become ``thread.name``, and when a process has several
threads each thread is a root holding its calls. viztracer names a call
``func (path:line)``: the node is named ``func`` with ``code.file.path`` and
``code.line.number``; its logged arguments (``args.func_args``) are the inputs
and ``args.return_value`` the output. Ids are counters in file order, so the
same file always gives the same tree. No OpenTelemetry here.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from flow_xray import attributes as attr, jsontext
from flow_xray.analysis.accounting import build_result
from flow_xray.errors import TraceFileError
from flow_xray.formats.parsed import Parsed
from flow_xray.tree.model import TraceResult
from flow_xray.tree.spans import SpanRecord

__all__ = ["read", "read_trace_events", "recognises"]

_LOCATION: Final = re.compile(r"^(?P<name>.+) \((?P<path>.+):(?P<line>\d+)\)$")
_PHASES: Final = frozenset("XBEMiIbenCsftPORNDcpP")
# Sub-microsecond slack: viztracer rounds ts and dur separately to 3 decimals.
_SLACK_NS: Final = 2


@dataclass
class _Call:
    """One call of one thread, from an X event or a B/E pair."""

    name: str
    start_ns: int
    end_ns: int | None
    order: int
    args: Mapping[str, Any] = field(default_factory=dict)


def _events(document: Any) -> list[Any] | None:
    events = document.get("traceEvents") if isinstance(document, Mapping) else document
    if isinstance(events, list) and all(isinstance(e, Mapping) for e in events):
        return events
    return None


def recognises(parsed: Parsed) -> bool:
    """Trace events: an object with a ``traceEvents`` list, or a list of ``ph`` events."""
    events = _events(parsed.first) if parsed.whole else None
    if events is None:
        return False
    if isinstance(parsed.first, Mapping):
        return True
    return bool(events) and all("ph" in e and e["ph"] in _PHASES for e in events[:16])


def read(parsed: Parsed) -> TraceResult:
    """The call tree of a file `recognises` accepted."""
    return build_result(read_trace_events(_events(parsed.first) or []))


def _ns(value: Any, what: str, number: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TraceFileError(f"trace event {number}: {what} {value!r:.40} is not a number")
    return round(value * 1000)


def _thread_calls(
    events: Sequence[Any],
) -> tuple[dict[tuple[Any, Any], list[_Call]], dict[tuple[Any, Any], str]]:
    """Each thread's calls (from X events and B/E pairs) and the threads' names."""
    calls: dict[tuple[Any, Any], list[_Call]] = defaultdict(list)
    open_calls: dict[tuple[Any, Any], list[_Call]] = defaultdict(list)
    names: dict[tuple[Any, Any], str] = {}
    for number, event in enumerate(events, start=1):
        phase, thread = event.get("ph"), (event.get("pid", 0), event.get("tid", 0))
        args = event.get("args") if isinstance(event.get("args"), Mapping) else {}
        if phase == "M" and event.get("name") == "thread_name":
            names[thread] = str(args.get("name", ""))
        elif phase == "X":
            start = _ns(event.get("ts"), "ts", number)
            end = start + _ns(event.get("dur", 0), "dur", number)
            calls[thread].append(_Call(str(event.get("name", "")), start, end, number, args))
        elif phase == "B":
            call = _Call(
                str(event.get("name", "")), _ns(event.get("ts"), "ts", number), None, number, args
            )
            calls[thread].append(call)
            open_calls[thread].append(call)
        elif phase == "E" and open_calls[thread]:
            open_calls[thread].pop().end_ns = _ns(event.get("ts"), "ts", number)
    return calls, names


def read_trace_events(events: Sequence[Any]) -> list[SpanRecord]:
    """Chrome trace events as span records nested by time within each thread.

    Raises:
        TraceFileError: an event's time is not a number (the message says which).
    """
    calls, names = _thread_calls(events)
    threads_per_pid: dict[Any, int] = defaultdict(int)
    for pid, _ in calls:
        threads_per_pid[pid] += 1
    records: list[SpanRecord] = []
    counter = 0
    for (pid, tid), thread_calls in sorted(
        calls.items(), key=lambda kv: min(c.order for c in kv[1])
    ):
        trace_id = f"{_int(pid):032x}"
        thread_attrs: dict[str, Any] = {attr.PROCESS_PID: _int(pid), attr.THREAD_ID: _int(tid)}
        if (pid, tid) in names:
            thread_attrs[attr.THREAD_NAME] = names[(pid, tid)]
        root: str | None = None
        if threads_per_pid[pid] > 1:  # several threads: one root per thread
            counter += 1
            root = f"{counter:016x}"
            starts = [c.start_ns for c in thread_calls]
            ends = [c.end_ns if c.end_ns is not None else c.start_ns for c in thread_calls]
            label = names.get((pid, tid)) or f"thread {tid}"
            records.append(
                SpanRecord(
                    trace_id, root, None, label, min(starts), max(ends), "UNSET", None, thread_attrs
                )
            )
        thread_calls.sort(key=lambda c: (c.start_ns, -(c.end_ns or c.start_ns), c.order))
        stack: list[tuple[str, int | None]] = []  # (span id, end) of the calls enclosing this one
        for call in thread_calls:
            while stack and not _inside(call, stack[-1][1]):
                stack.pop()
            counter += 1
            span_id = f"{counter:016x}"
            parent = stack[-1][0] if stack else root
            records.append(_record(call, trace_id, span_id, parent, thread_attrs))
            stack.append((span_id, call.end_ns))
    return records


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _inside(call: _Call, end: int | None) -> bool:
    """Whether ``call`` (starting at or after the enclosing call's start) ends by ``end``."""
    if end is None:  # an open B event encloses everything after it
        return True
    return call.start_ns <= end and (call.end_ns or call.start_ns) <= end + _SLACK_NS


def _record(
    call: _Call, trace_id: str, span_id: str, parent: str | None, thread: Mapping[str, Any]
) -> SpanRecord:
    attributes: dict[str, Any] = dict(thread)
    name = call.name
    match = _LOCATION.match(name)
    if match:
        name = match["name"]
        attributes[attr.CODE_FUNCTION] = name
        attributes[attr.CODE_FILE] = match["path"]
        attributes[attr.CODE_LINE] = int(match["line"])
    args = dict(call.args)
    returned = args.pop("return_value", None)
    inputs = args.pop("func_args", None) if "func_args" in args else (args or None)
    if inputs is not None:
        attributes[attr.INPUT_VALUE] = jsontext.dumps(
            inputs if isinstance(inputs, Mapping) else {"args": inputs}
        )
        attributes[attr.INPUT_MIME_TYPE] = attr.MIME_JSON
    if returned is not None:
        attributes[attr.OUTPUT_VALUE] = (
            returned if isinstance(returned, str) else jsontext.dumps(returned)
        )
        attributes[attr.OUTPUT_MIME_TYPE] = (
            attr.MIME_TEXT if isinstance(returned, str) else attr.MIME_JSON
        )
    return SpanRecord(
        trace_id,
        span_id,
        parent,
        name,
        call.start_ns,
        call.end_ns,
        "UNSET",
        None,
        attributes,
        (),
    )
