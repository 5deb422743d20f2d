"""Odd processes under ``flow-xray run``: the trace lands where asked, the status is the script's.

Each script is run twice, with plain ``python`` and with ``python -m flow_xray
run``, as real subprocesses, and the exit statuses are compared. The cases:
a forked child that outlives its parent, a script that closes its stderr, one
that changes or deletes its working directory, SIGTERM while the script waits
in a long C call, the corpus of `tests.reliability.odd_scripts` (streams,
``sys.exit``, hooks, replaced os functions, signals), and SIGTERM while the
trace itself is being written.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import stat
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import odd_scripts
import pytest
from click.testing import CliRunner

from flow_xray.cli import cli
from flow_xray.tree.model import TraceResult

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX process semantics")

HEADER = """
import os, sys, time
from flow_xray import trace

@trace
def work(x):
    return x
"""


def env() -> dict[str, str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    clean["PYTHONUNBUFFERED"] = "1"
    return clean


def script(folder: Path, name: str, body: str) -> Path:
    path = folder / name
    path.write_text(HEADER + textwrap.dedent(body), encoding="utf-8")
    return path


def plain(cwd: Path, path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(path)], cwd=cwd, env=env(), capture_output=True, text=True, timeout=60
    )


def traced(cwd: Path, path: Path, *options: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "flow_xray", "run", *options, str(path)],
        cwd=cwd,
        env=env(),
        capture_output=True,
        text=True,
        timeout=120,
    )


def names(path: Path) -> list[str]:
    return [node.name for node in TraceResult.load(path)]


def _ended(pid: int) -> bool:
    """Whether process ``pid`` (not ours to wait for) has ended: gone, or a zombie nobody
    reaped (a container's first process may never reap)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as stat_file:
            return stat_file.read().rpartition(")")[2].split()[0] == "Z"
    except OSError:
        return False


@pytest.mark.slow
def test_a_forked_child_that_outlives_its_parent_never_writes_the_parents_files(
    tmp_path: Path,
) -> None:
    """The parent writes its trace; the child, finishing later, leaves both files alone."""
    path = script(
        tmp_path,
        "forks.py",
        """
        work("parent-before")
        if os.fork() == 0:
            time.sleep(1.0)  # the parent has written its trace by now
            work("child")
            with open("child-done", "w") as done:
                done.write(str(os.getpid()))
        else:
            work("parent-after")
        """,
    )
    expected = plain(tmp_path, path)
    for marker in tmp_path.glob("child-done"):
        marker.unlink()
    done = traced(tmp_path, path, "--json", "t.json", "--html", "t.html")
    assert done.returncode == expected.returncode == 0, done.stderr
    written = {name: (tmp_path / name).read_bytes() for name in ("t.json", "t.html")}
    deadline = time.monotonic() + 30
    marker = tmp_path / "child-done"
    while not (marker.exists() and marker.read_text()) and time.monotonic() < deadline:
        time.sleep(0.05)
    child = int(marker.read_text())
    while not _ended(child):  # the child's interpreter shutting down writes nothing either
        assert time.monotonic() < deadline, "the forked child did not end"
        time.sleep(0.05)
    assert {name: (tmp_path / name).read_bytes() for name in written} == written
    assert names(tmp_path / "t.json") == ["work", "work"]
    inputs = [node.inputs["x"] for node in TraceResult.load(tmp_path / "t.json")]
    assert inputs == ["parent-before", "parent-after"]


@pytest.mark.parametrize("how", ["os.close(2)", "sys.stderr.close()"])
def test_a_script_that_closes_stderr_exits_with_its_own_status_and_gets_its_trace(
    tmp_path: Path, how: str
) -> None:
    path = script(tmp_path, "quiet.py", f"work(1)\n{how}\nwork(2)\n")
    expected = plain(tmp_path, path)
    done = traced(tmp_path, path, "--json", "t.json")
    assert done.returncode == expected.returncode == 0, done.stderr
    assert names(tmp_path / "t.json") == ["work", "work"]
    assert (tmp_path / "quiet_trace.html").is_file()
    assert "Traceback" not in done.stderr


@pytest.mark.slow
def test_a_script_that_changes_folder_gets_its_trace_where_the_user_asked(tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    path = script(tmp_path, "moves.py", "os.chdir('elsewhere')\nwork(1)\n")
    expected = plain(tmp_path, path)
    done = traced(tmp_path, path, "--json", "out/t.json", "--html", "t.html")
    assert done.returncode == 2 and "out" in done.stderr  # missing folder: refused up front
    (tmp_path / "out").mkdir()
    done = traced(tmp_path, path, "--json", "out/t.json", "--html", "t.html")
    assert done.returncode == expected.returncode == 0, done.stderr
    assert names(tmp_path / "out" / "t.json") == ["work"]
    assert (tmp_path / "t.html").is_file()
    assert not list((tmp_path / "elsewhere").iterdir())


@pytest.mark.slow
def test_a_script_that_deletes_its_starting_folder(tmp_path: Path) -> None:
    """Outputs inside the deleted folder: one line says why, the status stays the script's;
    outputs asked for elsewhere (by a relative path) are written there."""
    body = """
        import shutil
        start = os.getcwd()
        os.chdir("..")
        shutil.rmtree(start)
        work(1)
        """
    for attempt in ("inside", "outside"):
        start = tmp_path / attempt
        start.mkdir()
        path = script(tmp_path, f"{attempt}.py", body)
        if attempt == "inside":
            expected = plain(start, path)
            start.mkdir()
            done = traced(start, path, "--json", "t.json")
        else:
            done = traced(start, path, "--json", "../kept.json", "--html", "../kept.html")
        assert done.returncode == expected.returncode == 0, done.stderr
        assert "Traceback" not in done.stderr
        if attempt == "inside":
            lines = [line for line in done.stderr.splitlines() if "error" in line]
            assert len(lines) == 1 and "no longer exists" in lines[0], done.stderr
        else:
            assert names(tmp_path / "kept.json") == ["work"]
            assert (tmp_path / "kept.html").is_file()


SLEEPERS = {
    "time.sleep": "time.sleep(60)",
    "socket.recv": "import socket; a, b = socket.socketpair(); a.recv(1)",
    "Event.wait": "import threading; threading.Event().wait(60)",
}


@pytest.mark.slow
@pytest.mark.parametrize("call", sorted(SLEEPERS))
def test_sigterm_during_a_long_c_call_acts_at_once_and_the_trace_is_written(
    tmp_path: Path, call: str
) -> None:
    """The status is plain Python's (143, as the shell reports SIGTERM), the call is
    interrupted, and the process ends long before the 60 s wait would have."""
    path = script(
        tmp_path,
        "waits.py",
        f"""
        @trace
        def wait():
            print("ready", flush=True)
            {SLEEPERS[call]}

        wait()
        """,
    )
    statuses = []
    for command in (
        [sys.executable, str(path)],
        [sys.executable, "-m", "flow_xray", "run", "--json", "t.json", str(path)],
    ):
        process = subprocess.Popen(
            command, cwd=tmp_path, env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        assert process.stdout is not None
        assert process.stdout.readline().strip() == b"ready"
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=30)
        statuses.append(process.returncode)
    assert statuses[1] in (143, -signal.SIGTERM)  # flow-xray exits 143 itself
    assert statuses[0] == -signal.SIGTERM  # plain Python is killed by the signal
    statuses[1] = -signal.SIGTERM if statuses[1] == 143 else statuses[1]
    assert statuses[0] == statuses[1]
    data = json.loads((tmp_path / "t.json").read_text(encoding="utf-8"))
    assert data["totals"]["interrupted"] == 1 and data["totals"]["errors"] == 0


# --- the corpus of odd scripts ---------------------------------------------------------


def _streams(kind: str) -> tuple[Any, Any]:
    """stdout and stderr for a run: pipes, or one of them on /dev/full (writes fail: ENOSPC)."""
    full = open("/dev/full", "w")  # noqa: SIM115  # closed by the caller
    if kind == "full stdout":
        return full, subprocess.PIPE
    if kind == "full stderr":
        return subprocess.PIPE, full
    full.close()
    return subprocess.PIPE, subprocess.PIPE


def _status(cwd: Path, command: list[str], kind: str) -> tuple[int, str]:
    """The exit status of ``command`` (128 + N when killed by signal N) and its stderr."""
    stdout, stderr = _streams(kind)
    try:
        done = subprocess.run(
            command,
            cwd=cwd,
            env=env(),
            stdin=subprocess.DEVNULL,
            stdout=stdout,
            stderr=stderr,
            timeout=120,
        )
    finally:
        for stream in (stdout, stderr):
            if hasattr(stream, "close"):
                stream.close()
    code = done.returncode
    return (128 - code if code < 0 else code), (done.stderr or b"").decode(errors="replace")


def check_odd_script(tmp_path: Path, name: str, kind: str) -> None:
    """``name`` from the corpus: plain python's status under ``flow-xray run``, and its trace."""
    path = tmp_path / "odd.py"
    path.write_text(odd_scripts.HEADER + odd_scripts.SCRIPTS[name], encoding="utf-8")
    expected, _ = _status(tmp_path, [sys.executable, str(path)], kind)
    command = [sys.executable, "-m", "flow_xray", "run", "--json", "t.json", str(path)]
    status, stderr = _status(tmp_path, command, kind)
    assert status == expected, f"{name} ({kind}): python {expected}, flow-xray {status}\n{stderr}"
    assert names(tmp_path / "t.json") == ["work"], f"{name} ({kind}): {stderr}"
    assert (tmp_path / "odd_trace.html").is_file()
    assert "flow_xray/" not in stderr, stderr  # no traceback through flow-xray's own code
    assert not list(tmp_path.glob(".*.tmp"))


CORPUS = [(name, kind) for name, kinds in odd_scripts.STREAMS.items() for kind in kinds]


@pytest.mark.parametrize(
    ("name", "status"),
    [
        ("stderr is a tee", 0),
        ("both are tees, then it raises", 1),
        ("sys.exit(obj) whose __str__ raises KeyboardInterrupt", 1),
        ("sys.exit(int subclass with a failing __str__)", 3),
        ("an excepthook that raises", 1),
        ("os.replace, os.rename, os.open and open replaced", 0),
    ],
)
def test_odd_scripts_in_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, status: int
) -> None:
    """The inner loop's share of the corpus, run in this process through click's runner:
    the script's status (plain python's, measured by the slow test below), its trace, and
    flow-xray's summary line on the stderr the command started with."""
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "odd.py"
    path.write_text(odd_scripts.HEADER + odd_scripts.SCRIPTS[name], encoding="utf-8")
    with monkeypatch.context() as patched:  # what the script changes is undone afterwards
        for module, attribute in (("os", "replace"), ("os", "rename"), ("os", "open")):
            patched.setattr(module + "." + attribute, getattr(os, attribute))
        patched.setattr("builtins.open", open)
        patched.setattr(sys, "excepthook", sys.excepthook)
        done = CliRunner().invoke(cli, ["run", "--json", "t.json", str(path)])
    assert done.exit_code == status, done.output
    assert names(tmp_path / "t.json") == ["work"]
    assert "flow-xray: wrote odd_trace.html" in done.stderr


@pytest.mark.slow
@pytest.mark.parametrize(("name", "kind"), CORPUS)
def test_an_odd_script_keeps_pythons_exit_status_and_its_trace(
    tmp_path: Path, name: str, kind: str
) -> None:
    """Whatever the script does to its streams, exit, hooks or os functions: the status is
    plain python's and the trace is written, with no traceback of flow-xray's."""
    check_odd_script(tmp_path, name, kind)


# The JSON goes to a FIFO the test holds open without reading: once the pipe is full the
# write waits, for as long as the test likes (its progress line shows after 1 s). The
# viewer is written first, to a regular file.
CALLS = 20_000
BIG = f"""
import sys
from flow_xray import trace

@trace
def leaf(i):
    return i

for i in range({CALLS}):
    leaf(i)
sys.exit(3)
"""


def _stop_while_writing(tmp_path: Path, signals: int) -> tuple[int, str, bytes]:
    """Run the `CALLS`-call script under ``flow-xray run --json t.json``, t.json a FIFO;
    once its write shows progress, send ``signals`` SIGTERMs, each once the child said it
    got the one before; with one, then read the FIFO to its end. The status, stderr and
    what the FIFO gave."""
    path = tmp_path / "big.py"
    path.write_text(BIG, encoding="utf-8")
    fifo = tmp_path / "t.json"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    process = subprocess.Popen(
        [sys.executable, "-m", "flow_xray", "run", "--json", "t.json", str(path)],
        cwd=tmp_path,
        env=env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    # (a line that never comes: the child is stopped, the test fails rather than waits)
    watchdog = threading.Timer(60, process.kill)
    watchdog.start()
    seen: list[str] = []
    with process, contextlib.ExitStack() as cleanup:
        cleanup.callback(os.close, reader)
        cleanup.callback(watchdog.cancel)

        def wait_for(start: str) -> None:
            for line in process.stderr:  # type: ignore[union-attr]
                seen.append(line)
                if line.startswith(start):
                    return
            raise AssertionError(f"no line {start!r}: {''.join(seen)}")

        wait_for("flow-xray: writing t.json…")
        process.send_signal(signal.SIGTERM)
        wait_for("flow-xray: got SIGTERM: finishing the trace first (send it again to stop)")
        data = b""
        if signals == 2:
            process.send_signal(signal.SIGTERM)
        else:
            os.set_blocking(reader, True)
            while chunk := os.read(reader, 1 << 20):
                data += chunk
        rest = process.communicate(timeout=120)[1]
    return process.returncode, "".join(seen) + rest, data


@pytest.mark.slow
def test_sigterm_while_the_trace_is_written_finishes_it_and_keeps_the_scripts_status(
    tmp_path: Path,
) -> None:
    """The script exited 3; SIGTERM during the final write: one line says so at once, the
    write finishes (the viewer and the whole JSON), and the status is still 3."""
    status, stderr, data = _stop_while_writing(tmp_path, 1)
    assert status == 3, stderr
    assert len(TraceResult.from_dict(json.loads(data))) == CALLS
    assert (tmp_path / "big_trace.html").read_text(encoding="utf-8").rstrip().endswith("</html>")
    assert "got SIGTERM while writing the trace: finished writing it first" in stderr
    assert "Traceback" not in stderr


@pytest.mark.slow
def test_a_second_sigterm_stops_the_write_and_leaves_no_partial_file(tmp_path: Path) -> None:
    """Asked twice: writing stops with one line saying what was not written, the viewer
    written before stays whole, nothing else is left (the FIFO is still a FIFO), and the
    status is still 3."""
    status, stderr, _ = _stop_while_writing(tmp_path, 2)
    assert status == 3, stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.py", "big_trace.html", "t.json"]
    assert stat.S_ISFIFO((tmp_path / "t.json").lstat().st_mode)
    html = (tmp_path / "big_trace.html").read_text(encoding="utf-8")
    assert html.rstrip().endswith("</html>")
    assert "stopped by a second signal while writing t.json: it was not written" in stderr
    assert "Traceback" not in stderr
