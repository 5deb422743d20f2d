"""`flow_xray.interrupts.by_signal` tells a signal's exception from one raised on purpose.

The signals are real (SIGINT sent to the process runs the default Ctrl-C handler, an
interval timer runs SIGALRM handlers), so each case runs in a child process's main
thread; the child prints what `by_signal` answered for each.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

CHILD = textwrap.dedent(
    """
    import json, os, signal, sys, threading, time
    from flow_xray.interrupts import by_signal

    signal.signal(signal.SIGINT, signal.default_int_handler)  # (a background run ignores it)

    answers = {}

    def answer(name, run):
        try:
            run()
        except BaseException as exc:
            answers[name] = by_signal(exc)

    def raises_keyboard_interrupt():
        raise KeyboardInterrupt("from a hook")

    def raises_again():
        try:
            raises_keyboard_interrupt()
        except KeyboardInterrupt:
            raise

    def spin():
        n = 0
        while n >= 0:
            n += 1

    def interrupted(run):
        def go():
            threading.Timer(0.1, os.kill, (os.getpid(), signal.SIGINT)).start()
            run()
        return go

    def alarmed(handler):
        def go():
            signal.signal(signal.SIGALRM, handler)
            signal.setitimer(signal.ITIMER_REAL, 0.05)
            spin()
        return go

    def on_alarm(signum, frame):
        raise TimeoutError("time is up")

    class Stopper:
        def on_alarm(self, signum, frame):
            sys.exit(143)

    answer("raise KeyboardInterrupt", raises_keyboard_interrupt)
    answer("bare raise of it", raises_again)
    answer("sys.exit", lambda: sys.exit(3))
    answer("an error", lambda: 1 / 0)
    answer("Ctrl-C in a loop", interrupted(spin))
    answer("Ctrl-C in a blocking call", interrupted(lambda: time.sleep(5)))
    answer("alarm handler", alarmed(on_alarm))
    answer("handler method", alarmed(Stopper().on_alarm))
    print(json.dumps(answers))
    """
)


@pytest.mark.skipif(sys.platform == "win32", reason="needs SIGALRM")
def test_a_signals_exception_is_told_from_one_raised_on_purpose() -> None:
    """Raised by a ``raise`` statement or ``sys.exit``: not a signal. Raised by the default
    Ctrl-C handler (in a loop or a blocking call) or through a Python handler: a signal."""
    done = subprocess.run(
        [sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=60, check=True
    )
    assert json.loads(done.stdout) == {
        "raise KeyboardInterrupt": False,
        "bare raise of it": False,
        "sys.exit": False,
        "an error": False,
        "Ctrl-C in a loop": True,
        "Ctrl-C in a blocking call": True,
        "alarm handler": True,
        "handler method": True,
    }
