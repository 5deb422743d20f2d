"""What a signal raises reaches the program, wherever it lands (`flow_xray.interrupts`).

Recording contains every exception a traced value's hooks raise, ``KeyboardInterrupt``
included. A signal's exception is the program's: Ctrl-C, a SIGTERM handler's exit, an
alarm handler's ``TimeoutError`` land in recording code as often as recording holds
the program's time (most of it, in a loop of small traced calls). Each test runs a
child process (signals go to its main thread; pytest's own is left alone).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap

import pytest

from tests.reliability.signal_points import KINDS

pytestmark = pytest.mark.skipif(os.name != "posix", reason="needs POSIX signals")

SPIN = textwrap.dedent(
    """
    import sys, time
    from flow_xray import trace

    @trace
    def step(a, b):
        return {"a": a, "b": b}

    def spin(ready):
        deadline = time.monotonic() + 20
        calls = 0
        while time.monotonic() < deadline:
            step(calls, 1)
            calls += 1
            if calls == 2000 and ready:
                print("ready", flush=True)
        return calls
    """
)


def _child(body: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", SPIN + textwrap.dedent(body)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
        # Back to Python's own Ctrl-C handling, whatever pytest was started with.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


@pytest.mark.parametrize(
    "where",
    ["capture", "capture on SDK spans", "user's SDK provider"],
)
def test_ctrl_c_stops_a_tight_traced_loop_every_time(where: str) -> None:
    """Five Ctrl-Cs, each while the loop runs: five KeyboardInterrupts, none swallowed, and
    the capture still holds the calls (the interrupted ones incomplete or ended)."""
    env = {"FLOW_XRAY_RECORDER": "sdk"} if where == "capture on SDK spans" else {}
    child = _child(
        f"""
        if {where == "user's SDK provider"}:
            from opentelemetry import trace as api
            from opentelemetry.sdk.trace import TracerProvider

            api.set_tracer_provider(TracerProvider())
        with trace.capture() as result:
            for _ in range(5):
                try:
                    spin(True)
                    print("not stopped", flush=True)
                except KeyboardInterrupt:
                    print("stopped", flush=True)
        print(len(result.find_all("step")), flush=True)
        """,
        env,
    )
    try:
        assert child.stdout is not None
        for _ in range(5):
            assert child.stdout.readline().strip() == "ready"
            child.send_signal(signal.SIGINT)
            assert child.stdout.readline().strip() == "stopped"
        out, err = child.communicate(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
    assert child.returncode == 0, err
    assert int(out.split()[-1]) >= 5 * 2000 and "could not" not in err, err


@pytest.mark.skipif(sys.version_info < (3, 11), reason="asyncio.run's Ctrl-C handling: 3.11+")
def test_a_second_ctrl_c_stops_an_asyncio_program_busy_in_traced_calls() -> None:
    """Under ``asyncio.run`` the first Ctrl-C only cancels the main task (delivered at its
    next ``await``); the second raises ``KeyboardInterrupt`` from asyncio's own handler (a
    ``functools.partial`` of a method), which must reach a coroutine busy in traced calls.
    The second is sent once the child saw the first (two pending signals would merge)."""
    child = _child(
        """
        import asyncio

        async def main():
            task = asyncio.current_task()
            deadline = time.monotonic() + 20
            calls, told = 0, False
            while time.monotonic() < deadline:
                step(calls, 1)
                calls += 1
                if calls == 2000:
                    print("ready", flush=True)
                if not told and task.cancelling():
                    print("cancelling", flush=True)
                    told = True
            print("not stopped", flush=True)

        with trace.capture() as result:
            try:
                asyncio.run(main())
            except KeyboardInterrupt:
                print("stopped", flush=True)
        print(len(result.find_all("step")), flush=True)
        """
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "ready"
        child.send_signal(signal.SIGINT)
        assert child.stdout.readline().strip() == "cancelling"
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
    assert child.returncode == 0, err
    assert out.split()[0] == "stopped" and int(out.split()[1]) >= 2000, (out, err)


def test_an_alarm_handlers_exception_reaches_the_loop_every_time() -> None:
    """An alarm whose handler raises ``TimeoutError`` (a common way to time-limit work)
    stops a tight traced loop each of 20 times, the handler itself traced or not."""
    child = _child(
        """
        import signal

        def on_alarm(signum, frame):
            raise TimeoutError("time is up")

        signal.signal(signal.SIGALRM, on_alarm)
        stopped = 0
        traced_handler = trace(on_alarm)  # a traced handler: the same, every other round
        with trace.capture():
            for round in range(20):
                signal.signal(signal.SIGALRM, traced_handler if round % 2 else on_alarm)
                signal.setitimer(signal.ITIMER_REAL, 0.02)
                try:
                    spin(False)
                except TimeoutError:
                    stopped += 1
        print(stopped)
        """
    )
    out, err = child.communicate(timeout=120)
    assert child.returncode == 0, err
    assert out.split() == ["20"]


def test_a_hooks_own_control_flow_exceptions_are_still_contained() -> None:
    """What a value's hook raises itself (``raise KeyboardInterrupt``, ``sys.exit()``, an
    error) is contained as before: the traced function returns its value; while a
    ``KeyboardInterrupt`` from Ctrl-C during the same kind of call is not contained."""
    child = _child(
        """
        import _thread, threading

        class Stops:
            def __init__(self, how):
                self.how = how
            def __repr__(self):
                self.how()
                return "never"

        def interrupt():
            raise KeyboardInterrupt

        def leave():
            sys.exit(3)

        @trace
        def echo(value):
            return value

        kept = []
        with trace.capture():
            for how in (interrupt, leave):
                kept.append(echo(Stops(how)).how.__name__)
            threading.Timer(0.3, _thread.interrupt_main).start()
            try:
                spin(False)
                kept.append("not stopped")
            except KeyboardInterrupt:
                kept.append("stopped")
        print(json.dumps(kept))
        """.replace("json.dumps", "__import__('json').dumps")
    )
    out, err = child.communicate(timeout=60)
    assert child.returncode == 0, err
    assert json.loads(out) == ["interrupt", "leave", "stopped"]


@pytest.mark.skipif(sys.version_info < (3, 11), reason="3.11+ bytecode: where signals are checked")
@pytest.mark.parametrize("setup", ["capture", "sdk", "provider"])
def test_ctrl_c_at_any_point_of_a_traced_call_leaves_the_callers_context(setup: str) -> None:
    """Ctrl-C raised at each point of a traced call where CPython can raise it, one point per
    call (`signal_points.py`: 70 to 400 points for a function, generator, coroutine and
    async generator, 540 to 1,350 for a call retrying a failing one, 100 to 320 for a
    `propagate`d call run as a process pool's worker runs it, 1,380 to 2,170 for an agent
    call around an LLM call, 550 to 1,250 for an LLM call returning a stream its caller
    reads). The caller's context is current afterwards every time: before, a
    ``KeyboardInterrupt`` landing between a wrapper's attach and detach left the call's span
    current, and every later traced call nested under that dead span; a worker's propagated
    call could leave the carrier's call current for the worker's next task; an export
    catching up (``complete``, as to a file: the user's provider here) could leave
    instrumentation suppressed for good. The call's span ends as interrupted (or complete,
    when its end was recorded first) and is recorded once, its LLM usage whole, each
    failure counted once (a returned stream's span ends with the reading, interrupted or
    not: before, a Ctrl-C while reading left it open, 360 of 660 points); only on SDK
    spans, in the processor's start bookkeeping inside the SDK's own start, does it stay
    open (shown incomplete). What the user's provider exported carries each request's
    usage once. The same for a capture's own opening and closing (350 to 670 points),
    ``all_threads`` and ``processes`` ones too."""
    script = os.path.join(os.path.dirname(__file__), "signal_points.py")
    env = {**os.environ, "FLOW_XRAY_RECORDER": "sdk" if setup == "sdk" else ""}
    done = subprocess.run(
        [sys.executable, script, setup], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    if setup == "provider":  # what its export received: each request counted once on the wire
        export = lines.pop()
        assert export["kind"] == "export" and export["requests"] >= 100, export
        assert export["twice"] == [], export
    *reports, plain, process_wide, processes = lines
    assert [r["kind"] for r in reports] == list(KINDS)
    for report in reports:
        assert report["points"] >= 50 and report["recorded"] >= 10, report
        assert report["leaked"] == [] and report["twice"] == [], report
        if setup == "capture":  # the local recorder ends one stopped even as it starts
            assert report["open"] == [], report
        else:  # the SDK's own start: the span it was making is not ours to end
            assert all(" on_start " in where for where in report["open"]), report
        # Each LLM request's tokens counted once and whole (a span interrupted while its
        # usage was being set kept part of it: 120 of 160 tokens).
        counted, expected = report["tokens"]
        assert counted == expected, report
        counted, failed = report["errors"]  # each failure once, at the call that raised it
        assert counted == failed, report
    # A capture's opening and closing: none leaves it listening (every later traced call in
    # the context would pile up in it), but at the start of its ``__exit__``, which no
    # context manager can guard (the ``with`` statement calls it; the exception is raised
    # before its first line runs).
    # The same for ``all_threads=True`` and for ``processes=True``, whose channel to child
    # processes (a socket, its reader thread, the environment children inherit) is closed
    # too: before, 100 of its 480 points left it open for good.
    assert [plain["kind"], process_wide["kind"], processes["kind"]] == [
        "capture",
        "capture-all-threads",
        "capture-processes",
    ]
    for capture in (plain, process_wide, processes):
        assert capture["points"] >= 200, capture
        assert all(" __exit__ (start)" in where for where in capture["left"]), capture


def test_after_ctrl_c_in_a_traced_generator_loop_later_calls_are_roots() -> None:
    """A notebook's interrupted cell: Ctrl-C (from a timer) while a loop consumes a traced
    generator, ten times; the traced call made after each is a root of its own trace, not
    a child of the interrupted generator's span (before: 8 times in 10)."""
    child = _child(
        """
        import _thread, threading
        from opentelemetry import trace as api

        @trace
        def items(n):
            yield from range(n)

        @trace
        def after():
            return api.get_current_span().get_span_context().span_id

        nested = 0
        with trace.capture() as result:
            for round in range(10):
                threading.Timer(0.05 + round * 0.01, _thread.interrupt_main).start()
                try:
                    deadline = time.monotonic() + 20
                    while time.monotonic() < deadline:
                        for _ in items(1000):
                            pass
                except KeyboardInterrupt:
                    pass
                after()
                nested += api.get_current_span().get_span_context().is_valid
        roots = [node.name for node in result if node.name == "after"]
        print(nested, len(roots))
        """
    )
    out, err = child.communicate(timeout=120)
    assert child.returncode == 0, err
    assert out.split() == ["0", "10"], (out, err)
