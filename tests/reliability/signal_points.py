"""Ctrl-C at every point of a traced call where CPython can raise it (a child process).

Python runs a signal's handler only at certain instructions (3.11+): a function's start
or a generator's resumption (``RESUME``), right after a call into C returns (``CALL``,
``CALL_FUNCTION_EX``) and at a loop's backward jump. This script traces one call at a
time with ``sys.settrace`` opcode events and raises ``KeyboardInterrupt`` — as the default
SIGINT handler does, so flow-xray tells it from a value's own — at the n-th such point
inside flow-xray's code, for n = 1, 2, ... until a call runs through untouched. Each
point's exception is raised where the real one would be handled: after a call, only when
the next instruction is in the same ``try`` region as the call.

For a traced function, generator, coroutine and async generator in turn, prints one
JSON object: the points tried, where a point left the caller's context changed, where
it left the call's span open (never ended), the interrupted calls seen more than once
in the capture.

Usage: ``signal_points.py SETUP``, SETUP one of capture (the local recorder), sdk (a
capture on SDK spans: set ``FLOW_XRAY_RECORDER=sdk``) or provider (a user's SDK
provider made global).
"""

from __future__ import annotations

import collections
import contextlib
import dis
import json
import os
import signal
import sys
from types import CodeType, FrameType
from typing import Any

import flow_xray
from flow_xray import trace
from flow_xray.runtime.context import current_context

PACKAGE = os.path.dirname(flow_xray.__file__)
SETUP = sys.argv[1]
KINDS = ("function", "generator", "coroutine", "async-generator")


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
    elif kind == "coroutine":
        _drive(answer(1, n))
    else:
        _drive(_consume(aitems(2, n)))


_AFTER: frozenset[int] = frozenset(
    dis.opmap[name] for name in ("CALL", "CALL_FUNCTION_EX", "JUMP_BACKWARD") if name in dis.opmap
)
_CALL = dis.opmap.get("CALL")
_THROUGH_C = ("__init__", "__new__", "__call__")  # Python code a C call runs (``type(...)``)


_TABLES: dict[CodeType, Any] = {}


def _handler_of(code: CodeType, offset: int) -> int | None:
    """Where an exception raised at ``offset`` is handled in ``code`` (None: not there)."""
    table = _TABLES.get(code)
    if table is None:
        table = _TABLES[code] = dis._parse_exception_table(code)  # type: ignore[attr-defined]
    return next((e.target for e in table if e.start <= offset < e.end), None)


class Points:
    """Raises at the ``n``-th signal check point in flow-xray's frames."""

    def __init__(self, n: int) -> None:
        self.n, self.seen, self.where = n, 0, None
        self.last: dict[int, tuple[int, int]] = {}  # frame: (opcode, offset) that just ran
        self.resumed: dict[int, int] = {}  # generator frame: its RESUME's offset
        self.inlined: set[int] = set()  # frames whose last CALL ran Python inline

    def __call__(self, frame: FrameType, event: str, arg: Any) -> Any:
        back = frame.f_back
        if back is not None and frame.f_code.co_name not in _THROUGH_C:
            self.inlined.add(id(back))  # a Python function called from CALL: no check after
        if not frame.f_code.co_filename.startswith(PACKAGE):
            return None
        frame.f_trace_opcodes = True
        frame.f_trace_lines = False
        if frame.f_code.co_code[frame.f_lasti + 1]:  # RESUME's argument: resumed, not started
            self.resumed[id(frame)] = frame.f_lasti
        else:
            self.hit(frame, "start")
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
            path = os.path.relpath(frame.f_code.co_filename, PACKAGE)
            self.where = f"{path}:{frame.f_lineno} {frame.f_code.co_name} ({what})"
            signal.default_int_handler(signal.SIGINT, frame)  # as Ctrl-C raises it


def points_of(kind: str) -> dict[str, Any]:
    where: dict[int, str] = {}
    leaked: list[str] = []
    with trace.capture() as result:
        n = 0
        while True:
            n += 1
            before = current_context()
            points = Points(n)
            sys.settrace(points)
            try:
                run(kind, n)
            except KeyboardInterrupt:
                pass
            finally:
                sys.settrace(None)
            if points.where is None:
                break
            where[n] = points.where
            if current_context() is not before:
                leaked.append(points.where)
                break  # later calls would nest under it
    nodes = []
    todo = list(result)
    while todo:
        node = todo.pop()
        nodes.append(node)
        todo.extend(node.children)
    calls = [node for node in nodes if node.inputs.get("n") in where]
    left_open = [
        where[node.inputs["n"]] for node in calls if node.incomplete and node.status == "ok"
    ]
    counts = collections.Counter(node.inputs["n"] for node in calls)
    return {
        "kind": kind,
        "points": n - 1,
        "recorded": len(calls),
        "leaked": leaked,
        "open": left_open,
        "twice": [where[k] for k, v in counts.items() if v > 1],
    }


if __name__ == "__main__":
    if SETUP == "provider":
        from opentelemetry import trace as trace_api
        from opentelemetry.sdk.trace import TracerProvider

        trace_api.set_tracer_provider(TracerProvider())
    for kind in KINDS:
        print(json.dumps(points_of(kind)), flush=True)
