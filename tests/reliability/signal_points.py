"""Ctrl-C at every point of a traced call where CPython can raise it (a child process).

Python runs a signal's handler only at certain instructions (3.11+): a function's start
or a generator's resumption (``RESUME``), right after a call into C returns (``CALL``,
``CALL_FUNCTION_EX``) and at a loop's backward jump. This script traces one call at a
time with ``sys.settrace`` opcode events and raises ``KeyboardInterrupt`` — as the default
SIGINT handler does, so flow-xray tells it from a value's own — at the n-th such point
inside flow-xray's code or OpenTelemetry's context module, for n = 1, 2, ... until a call
runs through untouched. Each point's exception is raised where the real one would be
handled: after a call, only when the next instruction is in the same ``try`` region as
the call.

For each of `KINDS` in turn (a traced function, generator, coroutine, async generator, a
call retrying a failing one, a `propagate`d call as a process pool's worker runs it, an
agent call around an LLM call, an LLM call returning a stream its caller reads), prints
one JSON object: the points tried, where a point left the caller's context changed,
where it left the call's span open (never ended), the interrupted calls seen more than
once in the capture, the tokens and errors counted against those recorded. Then one
each for the opening and closing of a capture, an ``all_threads`` one and a
``processes`` one: where a point left a capture listening, a span held in the
processor, the context changed or the child processes' channel open. Under a user's
provider, last, what its export received (`export_report`).

Usage: ``signal_points.py SETUP``, SETUP one of capture (the local recorder), sdk (a
capture on SDK spans: set ``FLOW_XRAY_RECORDER=sdk``) or provider (a user's SDK
provider made global, exporting as to a file).
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import dis
import json
import os
import signal
import sys
from collections.abc import Callable, Iterator
from types import CodeType, FrameType
from typing import Any

from opentelemetry import context as otel_context

import flow_xray
from flow_xray import attributes as attr, trace
from flow_xray.runtime import captures
from flow_xray.runtime.context import current_context
from flow_xray.sdk import processes
from flow_xray.sdk.process_channel import CHANNEL_ENV
from flow_xray.sdk.processor import get_processor
from flow_xray.tracing.propagation import Propagated

PACKAGE = os.path.dirname(flow_xray.__file__)
KINDS = (
    "function",
    "generator",
    "coroutine",
    "async-generator",
    "error",
    "propagated",
    "llm",
    "stream",
)
# Interrupted too: the OpenTelemetry context module's frames (what attaches a `propagate`d
# carrier's call and makes SDK spans current runs there).
CONTEXT_MODULE = os.path.dirname(otel_context.__file__)
PATHS = (PACKAGE, CONTEXT_MODULE)


@trace
def step(a: int, n: int) -> int:
    return a


@trace
def items(k: int, n: int) -> Any:
    yield from range(k)


@trace
async def answer(a: int, n: int) -> int:
    return a


@trace
async def aitems(k: int, n: int) -> Any:
    for i in range(k):
        yield i


@dataclasses.dataclass
class _Usage:
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int


@dataclasses.dataclass
class _Completion:  # shaped as the openai client's ChatCompletion (its module path too)
    id: str
    model: str
    usage: _Usage
    object: str = "chat.completion"


_Completion.__module__ = "openai.types.chat.chat_completion"
TOKENS = 160


@trace(kind="llm")
def chat(n: int) -> _Completion:
    return _Completion(f"chatcmpl-{n}", "gpt-4o-mini", _Usage(120, 40, TOKENS))


class _Stream:  # shaped as the openai client's Stream: read through its ``_iterator``
    def __init__(self, chunks: list[dict[str, Any]]) -> None:
        self._iterator = iter(chunks)

    def __iter__(self) -> Any:
        yield from self._iterator


_Stream.__module__ = "openai._streaming"


def _chunk(**fields: Any) -> dict[str, Any]:
    return {"object": "chat.completion.chunk", "model": "gpt-4o-mini", **fields}


@trace(kind="llm")
def chat_stream(n: int) -> _Stream:
    """Returns a stream its caller reads: its span ends when the reading does."""
    return _Stream(
        [
            _chunk(choices=[{"delta": {"content": "hi"}}]),
            _chunk(choices=[], usage={"prompt_tokens": 120, "completion_tokens": 40}),
        ]
    )


@trace
def agent(n: int) -> _Completion:
    return chat(n)  # reports the same request as its child: counted once


@trace
def fails(n: int, attempt: int) -> None:
    raise ValueError(f"bad input {n}")


@trace
def retries(n: int) -> int:
    for attempt in range(2):  # fails twice, handled here
        with contextlib.suppress(ValueError):
            fails(n, attempt)
    return n


# Work a process pool's worker runs for another process (as unpickled there): the caller's
# call and a processes capture's tag come in a carrier.
_REMOTE = {
    "traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
    "flow-xray-captures": "c0ffee",
}
in_worker = Propagated(step, None, _REMOTE)


def _drive(coroutine: Any) -> None:
    """Run a coroutine that never waits, without an event loop."""
    with contextlib.suppress(StopIteration):
        coroutine.send(None)


async def _consume(agen: Any) -> None:
    async for _ in agen:
        pass


def run(kind: str, n: int) -> None:
    if kind == "function":
        step(1, n)
    elif kind == "generator":
        for _ in items(2, n):
            pass
    elif kind == "llm":
        agent(n)
    elif kind == "stream":
        for _ in chat_stream(n):
            pass
    elif kind == "error":
        retries(n)
    elif kind == "coroutine":
        _drive(answer(1, n))
    elif kind == "propagated":
        in_worker(1, n)
    else:
        _drive(_consume(aitems(2, n)))


_AFTER: frozenset[int] = frozenset(
    dis.opmap[name] for name in ("CALL", "CALL_FUNCTION_EX", "JUMP_BACKWARD") if name in dis.opmap
)
_CALL = dis.opmap.get("CALL")
_RESUME = dis.opmap.get("RESUME")
_THROUGH_C = ("__init__", "__new__", "__call__")  # Python code a C call runs (``type(...)``)


_TABLES: dict[CodeType, Any] = {}


def _handler_of(code: CodeType, offset: int) -> int | None:
    """Where an exception raised at ``offset`` is handled in ``code`` (None: not there)."""
    table = _TABLES.get(code)
    if table is None:
        table = _TABLES[code] = dis._parse_exception_table(code)  # type: ignore[attr-defined]
    return next((e.target for e in table if e.start <= offset < e.end), None)


class Points:
    """Raises at the ``n``-th signal check point in flow-xray's frames (and the OpenTelemetry
    context module's)."""

    def __init__(self, n: int) -> None:
        self.n, self.seen, self.where = n, 0, None
        self.last: dict[int, tuple[int, int]] = {}  # frame: (opcode, offset) that just ran
        self.resumed: dict[int, int] = {}  # generator frame: its RESUME's offset
        self.inlined: set[int] = set()  # frames whose last CALL ran Python inline

    def __call__(self, frame: FrameType, event: str, arg: Any) -> Any:
        back = frame.f_back
        if back is not None and frame.f_code.co_name not in _THROUGH_C:
            self.inlined.add(id(back))  # a Python function called from CALL: no check after
        if not frame.f_code.co_filename.startswith(PATHS):
            return None
        frame.f_trace_opcodes = True
        frame.f_trace_lines = False
        code, offset = frame.f_code.co_code, frame.f_lasti
        if code[offset] == _RESUME and code[offset + 1] == 0:  # RESUME 0: a function starts
            self.hit(frame, "start")
        else:  # a generator resumed: by a send (checked), or by a throw (not)
            self.resumed[id(frame)] = offset
        return self.opcode

    def opcode(self, frame: FrameType, event: str, arg: Any) -> Any:
        if event != "opcode":
            return self.opcode
        code, key, offset = frame.f_code, id(frame), frame.f_lasti
        resumed = self.resumed.pop(key, None)
        if resumed is not None and _handler_of(code, resumed) == _handler_of(code, offset):
            self.hit(frame, "resume")
        inlined = key in self.inlined
        self.inlined.discard(key)
        last = self.last.get(key)
        self.last[key] = (code.co_code[offset], offset)
        if last is None or last[0] not in _AFTER or (last[0] == _CALL and inlined):
            return self.opcode
        if _handler_of(code, last[1]) == _handler_of(code, offset):
            self.hit(frame, dis.opname[last[0]])
        return self.opcode

    def hit(self, frame: FrameType, what: str) -> None:
        self.seen += 1
        if self.seen == self.n:
            path = _shown(frame.f_code.co_filename)
            self.where = f"{path}:{frame.f_lineno} {frame.f_code.co_name} ({what})"
            signal.default_int_handler(signal.SIGINT, frame)  # as Ctrl-C raises it


def _shown(filename: str) -> str:
    """``flow_xray/...`` or ``opentelemetry/context/...``."""
    root = PACKAGE if filename.startswith(PACKAGE) else os.path.dirname(CONTEXT_MODULE)
    return os.path.relpath(filename, os.path.dirname(root))


def each_point(action: Callable[[int], object]) -> Iterator[tuple[int, str]]:
    """Run ``action(n)`` with Ctrl-C at its n-th point for n = 1, 2, ...: yield ``(n, where)``
    after each run (the caller looks at what it left), until a run has no n-th point.
    ``action(0)`` runs first, untouched: what the first call builds once (caches of names,
    of classes) is built, so each run takes the same path."""
    action(0)
    n = 0
    while True:
        n += 1
        points = Points(n)
        sys.settrace(points)
        try:
            action(n)
        except KeyboardInterrupt:
            pass
        finally:
            sys.settrace(None)
        if points.where is None:
            return
        yield n, points.where


def points_of(kind: str) -> dict[str, Any]:
    """Ctrl-C at each point of one traced call of ``kind`` inside a capture."""
    where: dict[int, str] = {}
    leaked: list[str] = []
    with trace.capture() as result:
        before, tags = current_context(), captures.inherited_tags()
        for n, at in each_point(lambda n: run(kind, n)):
            where[n] = at
            if current_context() is not before or captures.inherited_tags() != tags:
                leaked.append(at)
                break  # later calls would nest under it
    calls = [node for node in result if node.inputs.get("n") in where]  # (every node)
    left_open = [
        where[node.inputs["n"]] for node in calls if node.incomplete and node.status == "ok"
    ]
    counts = collections.Counter(
        (node.name, json.dumps(node.inputs, sort_keys=True)) for node in calls
    )
    # Each request counted once, whichever of its spans were recorded before the interrupt.
    requests = {node.inputs.get("n") for node in result if node.meta.get("total_tokens")}
    return {
        "kind": kind,
        "points": len(where),
        "recorded": len(calls),
        "leaked": leaked,
        "open": left_open,
        "twice": [where[json.loads(i)["n"]] for (_, i), v in counts.items() if v > 1],
        "tokens": [result.totals.total_tokens, TOKENS * len(requests)],
        # Each failure counted once, at the call that raised it (interrupted calls: none).
        "errors": [result.totals.errors, sum(node.status == "error" for node in result)],
    }


def capture_points(**options: bool) -> dict[str, Any]:
    """Ctrl-C at each point of a capture's opening and closing (and its one call): where
    one left a capture listening, spans held open in the processor, the context changed
    or, for a ``processes=True`` capture, the child processes' channel open (its socket
    and reader thread, the environment children inherit)."""

    def captured(n: int) -> None:
        with trace.capture(**options):
            step(1, n)

    before, tried, left = current_context(), 0, []
    for _, at in each_point(captured):
        tried += 1
        parent = processes._parent()
        if (
            captures.capturing()
            or captures.listening()
            or current_context() is not before
            or get_processor()._members
            or parent.hub is not None
            or CHANNEL_ENV in os.environ
        ):
            left.append(at)
            # Undone, for the next point's run.
            for listener in captures.listeners():
                captures.close_capture(listener, None)
            get_processor()._members.clear()
            parent.users = 0
            processes._stop_parent(parent)
    kind = "-".join(["capture", *(name.replace("_", "-") for name in options)])
    return {"kind": kind, "points": tried, "left": left}


def export_report(pipeline: Any) -> dict[str, Any]:
    """What the export received once flushed: the LLM requests whose usage an exported span
    carries under the summed names (the counting rule on the wire: each run of an LLM kind
    is one request, in a trace of its own), and those carried twice; the spans handed to the
    export that it never got."""
    pipeline.processor.gate.release_all()
    pipeline.processor.force_flush()
    counted = collections.Counter(
        span.context.trace_id
        for span in pipeline.exporter._inner.get_finished_spans()
        if span.attributes and attr.GEN_AI_INPUT_TOKENS in span.attributes
    )
    return {
        "kind": "export",
        "requests": len(counted),
        "twice": sorted(f"{trace:032x}" for trace, times in counted.items() if times > 1),
        "handed": pipeline.processor.submitted,
        "lost": pipeline.processor.submitted - pipeline.exporter.exported,
    }


if __name__ == "__main__":
    pipeline = None
    if sys.argv[1] == "provider":
        from opentelemetry import trace as trace_api
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

        from flow_xray.sdk.otlp import ExportPipeline

        provider = TracerProvider()
        # Exporting as ``flow-xray run`` does to a file (``complete``), each span's end
        # exporting the queue itself (instrumentation suppressed meanwhile), not only once
        # half of it waits.
        pipeline = ExportPipeline(("signals", "memory"), InMemorySpanExporter(), complete=True)
        pipeline.processor.catch_up_at = 1
        provider.add_span_processor(pipeline.processor)
        trace_api.set_tracer_provider(provider)
    for kind in KINDS:
        print(json.dumps(points_of(kind)), flush=True)
    print(json.dumps(capture_points()), flush=True)
    print(json.dumps(capture_points(all_threads=True)), flush=True)
    print(json.dumps(capture_points(processes=True)), flush=True)
    if pipeline is not None:
        print(json.dumps(export_report(pipeline)), flush=True)
