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
