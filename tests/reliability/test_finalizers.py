"""Traced code run by the garbage collector (a finalizer, a weakref callback) harms nothing.

The collector runs at any allocation, in the middle of whatever allocated: flow-xray's
own bookkeeping (its spans are then left out), the SDK's ``get_tracer`` holding its lock
(the call runs untraced), CPython's ``ContextVar.set`` (which crashes when set again from
inside: CPython gh-148891; the inner span is not made current). Before, a traced
``__del__`` in a loop of traced calls segfaulted the program on the local recorder and
hung it on SDK spans. Each case runs in a child process: a crash or a hang must not take
the test run with it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

CHILD = textwrap.dedent(
    """
    import gc, weakref
    from flow_xray import trace

    @trace
    def close_connection(number):
        return number

    class Connection:
        def __init__(self, number):
            self.number = number
            self.me = self  # a cycle: only the collector frees it

        def __del__(self):
            close_connection(self.number)

    class Session:  # a cycle whose weakref callback runs traced code
        def __init__(self):
            self.me = self

    @trace
    def step(a, b):
        return {"a": a, "b": b}

    kept = []
    gc.set_threshold(50)  # collections as often as a busy program's
    with trace.capture() as result:
        for number in range(60_000):
            Connection(number)
            kept.append(weakref.ref(Session(), lambda ref, n=number: close_connection(n)))
            step(number, 1)
        kept.clear()
    print(len(result.find_all("step")), len(result.find_all("close_connection")))
    """
)


@pytest.mark.parametrize("recorder", ["local", "sdk"])
def test_a_traced_finalizer_in_a_loop_of_traced_calls_neither_crashes_nor_hangs(
    recorder: str,
) -> None:
    """60,000 traced calls, each leaving a cycle whose ``__del__`` and whose weakref
    callback call a traced function: the program ends normally with every call recorded
    (of the collector's calls, those made while flow-xray's own work was interrupted
    are left out)."""
    env = {**os.environ, "FLOW_XRAY_RECORDER": recorder}
    done = subprocess.run(
        [sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=120, env=env
    )
    assert done.returncode == 0, (done.returncode, done.stderr[-3000:])
    steps, closed = map(int, done.stdout.split())
    assert steps == 60_000 and 0 <= closed <= 120_000


OTHER_THREAD = textwrap.dedent(
    """
    import gc, sys, threading
    from opentelemetry import trace as api
    from flow_xray import trace

    GUARDED = {"_attach_var", "_detach_var"}
    go, done = threading.Event(), threading.Event()
    seen = {}

    def inside_a_set():
        frame = sys._getframe(2)
        while frame is not None:
            if frame.f_code.co_name in GUARDED and "flow_xray" in frame.f_code.co_filename:
                return True
            frame = frame.f_back
        return False

    class Handle:  # a cycle whose finalizer lets go of the GIL (as closing a socket does)
        def __init__(self):
            self.me = self

        def __del__(self):
            if not go.is_set() and inside_a_set():
                seen["inside"] = True
                go.set()
                done.wait(10)

    @trace
    def other():
        return api.get_current_span().get_span_context().span_id

    def other_thread():
        go.wait(30)
        seen["during"] = other()  # its own span, current while it runs
        seen["after"] = api.get_current_span().get_span_context().is_valid
        done.set()

    @trace
    def step(n):
        Handle()  # garbage once this returns
        return n

    thread = threading.Thread(target=other_thread)
    thread.start()
    with trace.capture(all_threads=True):
        for threshold in range(1, 200):  # one lines a collection up with a context's set
            gc.set_threshold(threshold)
            for n in range(300):
                if go.is_set():
                    break
                step(n)
        gc.set_threshold(700)
    go.set()
    thread.join()
    print(seen.get("inside", False), bool(seen["during"]), seen["after"])
    """
)


@pytest.mark.skipif(
    sys.version_info >= (3, 12), reason="3.12+ collects only between instructions, never in a set"
)
def test_another_threads_call_during_a_finalizer_inside_a_context_set_is_made_current() -> None:
    """A finalizer the collector runs inside a traced call's context ``set`` lets go of the
    GIL (closing a file or socket does), and another thread makes a traced call meanwhile:
    that call's span is current while it runs and its context is gone after it. Before,
    the guard against setting the context inside another ``set`` was process-wide: the
    other thread's call was not made current, or (inside a ``reset``) its context stayed
    attached and every later traced call of that thread nested under a finished span."""
    # (the local recorder: its allocations line a collection up with a set within the sweep;
    # the guard is the same on both paths)
    env = {**os.environ, "FLOW_XRAY_RECORDER": ""}
    done = subprocess.run(
        [sys.executable, "-c", OTHER_THREAD], capture_output=True, text=True, timeout=120, env=env
    )
    assert done.returncode == 0, done.stderr[-3000:]
    inside, current, after = done.stdout.split()
    assert inside == "True", "no collection ran inside a context set: widen the sweep"
    assert (current, after) == ("True", "False"), (done.stdout, done.stderr[-2000:])
