"""No output of flow-xray damages what its path points at, and no input read ever blocks.

What an output path is decides what happens (`flow_xray.files`): a regular
file is replaced atomically (its permission bits and owner kept), a symlink
is followed and kept, a character device or a FIFO is written through, ``-``
is stdout, and anything else is one clear error with nothing touched. Every
test builds its own devices, FIFOs and links in a temporary folder: a
character device made with ``os.mknod`` (the numbers of ``/dev/null``, so
writing to it discards) when the tests run as root, never the machine's own.
Reading takes regular files and ``-`` only; a FIFO with no writer is refused
at once instead of hanging.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import socket
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from flow_xray import TraceResult, trace
from flow_xray.cli import cli
from flow_xray.errors import TraceFileError
from flow_xray.files import read_text, write_text_atomic
from flow_xray.formats.registry import load_trace

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX file kinds")

ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


def device_node(path: Path, kind: int, numbers: tuple[int, int]) -> Path:
    """A device node made here (root only): ``kind`` is ``stat.S_IFCHR`` or ``S_IFBLK``."""
    if not ROOT:
        pytest.skip("making a device node needs root")
    try:
        os.mknod(path, 0o666 | kind, os.makedev(*numbers))
    except PermissionError:
        pytest.skip("this container may not make device nodes")
    return path


def null_device(folder: Path, name: str = "null") -> Path:
    """A character device with /dev/null's numbers: writing to it discards."""
    return device_node(folder / name, stat.S_IFCHR, (1, 3))


def no_device(folder: Path) -> Path:
    """A block device node of major 0 (no driver: opening it fails)."""
    return device_node(folder / "blk", stat.S_IFBLK, (0, 0))


def kind(path: Path) -> str:
    mode = os.lstat(path).st_mode
    for test, name in (
        (stat.S_ISLNK, "link"),
        (stat.S_ISCHR, "chr"),
        (stat.S_ISFIFO, "fifo"),
        (stat.S_ISDIR, "dir"),
        (stat.S_ISSOCK, "sock"),
        (stat.S_ISBLK, "blk"),
        (stat.S_ISREG, "reg"),
    ):
        if test(mode):
            return name
    return "?"


def leftovers(folder: Path) -> list[str]:
    """Temporary files a write left behind (there must never be any)."""
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


@contextlib.contextmanager
def reading(fifo: Path) -> Iterator[list[bytes]]:
    """A reader on ``fifo`` for the block: everything written to it ends up in the list.

    The read end is open before the block starts (a writer that will not wait
    needs a reader there) and is drained concurrently, so a big write never
    fills the pipe; once the block is over, what is left is read to the end.
    """
    got: list[bytes] = []
    finished = threading.Event()
    end = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)

    def drain() -> None:
        chunks = []
        while True:
            # Asked before reading: an end of file read after the block was over is the
            # end (one read before it could have come before the writer even opened).
            over = finished.is_set()
            try:
                chunk: bytes | None = os.read(end, 1 << 16)
            except BlockingIOError:  # a writer is there, with nothing for now
                chunk = None
            if chunk:
                chunks.append(chunk)
            elif chunk == b"" and over:  # no writer (any more) and none to come
                got.append(b"".join(chunks))
                return
            else:
                time.sleep(0.005)

    thread = threading.Thread(target=drain, daemon=True)
    thread.start()
    try:
        yield got
    finally:
        finished.set()
        thread.join(30)
        os.close(end)


def small_result() -> TraceResult:
    @trace
    def step(x: int) -> int:
        return x + 1

    with trace.capture() as result:
        step(1)
    return result


# --- the writer, path kind by path kind ---------------------------------------------


def test_a_regular_file_is_replaced_atomically_keeping_its_mode(tmp_path: Path) -> None:
    """The new text replaces the old whole; the permission bits stay; no temp file is left."""
    target = tmp_path / "out.html"
    target.write_text("old", encoding="utf-8")
    target.chmod(0o640)
    write_text_atomic(target, "new")
    assert target.read_text(encoding="utf-8") == "new"
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert leftovers(tmp_path) == []


@pytest.mark.skipif(not ROOT, reason="changing a file's owner needs root")
def test_as_root_a_users_file_keeps_its_owner(tmp_path: Path) -> None:
    """Replacing another user's file as root gives it back to that user, not to root."""
    target = tmp_path / "theirs.json"
    target.write_text("old", encoding="utf-8")
    os.chown(target, 4321, 4321)
    write_text_atomic(target, "new")
    info = target.stat()
    assert (info.st_uid, info.st_gid) == (4321, 4321)
    assert target.read_text(encoding="utf-8") == "new"


def test_a_symlink_is_followed_and_kept(tmp_path: Path) -> None:
    """The link's target gets the text; the link stays a link to it."""
    (tmp_path / "real.html").write_text("old", encoding="utf-8")
    link = tmp_path / "link.html"
    link.symlink_to("real.html")
    write_text_atomic(link, "new")
    assert kind(link) == "link" and os.readlink(link) == "real.html"
    assert (tmp_path / "real.html").read_text(encoding="utf-8") == "new"


def test_a_dangling_symlink_creates_its_target(tmp_path: Path) -> None:
    """A link to a file not made yet: the file is made where it points; the link kept."""
    link = tmp_path / "link.json"
    link.symlink_to("made.json")
    write_text_atomic(link, "{}")
    assert kind(link) == "link" and (tmp_path / "made.json").read_text(encoding="utf-8") == "{}"


def test_a_character_device_is_written_through_and_stays_a_device(tmp_path: Path) -> None:
    """`--html /dev/null`-like: written into, never replaced by a regular file."""
    device = null_device(tmp_path)
    write_text_atomic(device, "x" * 100_000)
    assert kind(device) == "chr" and leftovers(tmp_path) == []


def test_a_symlink_to_a_character_device_keeps_both(tmp_path: Path) -> None:
    device = null_device(tmp_path)
    link = tmp_path / "out.html"
    link.symlink_to(device)
    small_result().to_html(link)
    assert kind(link) == "link" and kind(device) == "chr"


def test_a_fifo_with_a_reader_gets_the_text_and_stays_a_fifo(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with reading(fifo) as got:
        write_text_atomic(fifo, "through the pipe")
    assert got == [b"through the pipe"] and kind(fifo) == "fifo"


def test_a_fifo_nobody_reads_is_an_error_not_a_wait(tmp_path: Path) -> None:
    """Writing to a FIFO with no reader fails at once (ENXIO), and the FIFO stays."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    started = time.monotonic()
    with pytest.raises(OSError, match="no process is reading") as raised:
        write_text_atomic(fifo, "x")
    assert raised.value.errno == errno.ENXIO
    assert time.monotonic() - started < 2 and kind(fifo) == "fifo"


@pytest.mark.parametrize("what", ["dir", "sock", "blk"])
def test_other_kinds_of_file_are_an_error_and_untouched(tmp_path: Path, what: str) -> None:
    """A directory, a socket or a block device: an OSError naming it, and nothing changes."""
    holder = None
    if what == "dir":
        path = tmp_path / "d"
        path.mkdir()
    elif what == "sock":
        path = tmp_path / "s"
        holder = socket.socket(socket.AF_UNIX)
        holder.bind(str(path))
    else:
        path = no_device(tmp_path)
    try:
        with pytest.raises(
            OSError, match={"dir": "directory", "sock": "socket"}.get(what, "block")
        ):
            write_text_atomic(path, "x")
        assert kind(path) == what and leftovers(tmp_path) == []
    finally:
        if holder is not None:
            holder.close()


def test_a_lone_surrogate_fails_before_anything_is_created(tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    with pytest.raises(UnicodeEncodeError):
        write_text_atomic(target, "ok \udc80")
    assert list(tmp_path.iterdir()) == []


def test_a_failed_write_keeps_the_old_file_and_leaves_nothing(tmp_path: Path) -> None:
    """A write interrupted halfway (here: by a KeyboardInterrupt) keeps the old file whole."""

    class Interrupting(str):
        def __getitem__(self, index: object) -> str:
            raise KeyboardInterrupt

    target = tmp_path / "t.json"
    target.write_text("old", encoding="utf-8")
    with pytest.raises(KeyboardInterrupt):
        write_text_atomic(target, Interrupting("new text"))
    assert target.read_text(encoding="utf-8") == "old" and leftovers(tmp_path) == []


def test_dash_writes_to_stdout(capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    write_text_atomic("-", "é to stdout\n")
    assert capsysbinary.readouterr().out == "é to stdout\n".encode()


def test_the_writer_ignores_a_programs_replaced_os_functions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A script that replaced os.replace/os.open/open (a fake file system left behind)
    cannot redirect or break the writing of its trace."""

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("patched by the program")

    for name in ("replace", "rename", "open", "write", "fstat", "stat", "unlink"):
        monkeypatch.setattr(os, name, broken)
    monkeypatch.setattr("builtins.open", broken)
    write_text_atomic(tmp_path / "t.json", "{}")
    monkeypatch.undo()
    assert (tmp_path / "t.json").read_text(encoding="utf-8") == "{}"


# --- the reader ------------------------------------------------------------------------


def test_reading_a_fifo_without_a_writer_is_refused_at_once(tmp_path: Path) -> None:
    """`TraceResult.load` of a FIFO nobody writes: a TraceFileError in well under a second."""
    fifo = tmp_path / "spans.jsonl"
    os.mkfifo(fifo)
    started = time.monotonic()
    with pytest.raises(TraceFileError, match="FIFO"):
        TraceResult.load(fifo)
    assert time.monotonic() - started < 2


@pytest.mark.parametrize("what", ["dir", "chr", "sock"])
def test_reading_anything_but_a_regular_file_is_refused(tmp_path: Path, what: str) -> None:
    holder = None
    if what == "dir":
        path = tmp_path / "d"
        path.mkdir()
    elif what == "chr":
        path = null_device(tmp_path)
    else:
        path = tmp_path / "s"
        holder = socket.socket(socket.AF_UNIX)
        holder.bind(str(path))
    try:
        with pytest.raises(
            TraceFileError,
            match={"dir": "directory", "chr": "character device"}.get(what, "socket"),
        ):
            load_trace(path)
        with pytest.raises(OSError):
            read_text(path)
    finally:
        if holder is not None:
            holder.close()


def test_the_machines_dev_null_is_refused_as_input() -> None:
    """Reading /dev/null (read-only, nothing written): refused as not a trace file."""
    with pytest.raises(TraceFileError, match="character device"):
        load_trace("/dev/null")


def test_a_symlink_to_a_trace_file_is_read(tmp_path: Path) -> None:
    small_result().save(tmp_path / "real.json")
    (tmp_path / "link.json").symlink_to("real.json")
    assert [n.name for n in TraceResult.load(tmp_path / "link.json")] == [
        n.name for n in TraceResult.load(tmp_path / "real.json")
    ]


# --- the commands ------------------------------------------------------------------------


def invoke(*args: str, stdin: str | None = None) -> object:
    return CliRunner().invoke(cli, list(args), input=stdin, catch_exceptions=False)


def one_error(result: object) -> str:
    assert result.exit_code == 2, result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), lines
    return lines[0]


def test_view_to_a_character_device_keeps_the_device(tmp_path: Path) -> None:
    device = null_device(tmp_path)
    small_result().save(tmp_path / "t.json")
    done = invoke("view", str(tmp_path / "t.json"), "--html", str(device))
    assert done.exit_code == 0, done.output
    assert kind(device) == "chr"


def test_view_refuses_a_directory_socket_or_block_device_up_front(tmp_path: Path) -> None:
    small_result().save(tmp_path / "t.json")
    holder = socket.socket(socket.AF_UNIX)
    holder.bind(str(tmp_path / "s"))
    try:
        line = one_error(invoke("view", str(tmp_path / "t.json"), "--html", str(tmp_path / "s")))
        assert "socket" in line and kind(tmp_path / "s") == "sock"
    finally:
        holder.close()


def test_view_of_a_fifo_is_one_error_line(tmp_path: Path) -> None:
    fifo = tmp_path / "t.json"
    os.mkfifo(fifo)
    line = one_error(invoke("view", str(fifo)))
    assert "FIFO" in line and "pass -" in line


def test_view_reads_standard_input_and_writes_standard_output(tmp_path: Path) -> None:
    """`flow-xray view - --html -`: a trace piped in, the page piped out."""
    small_result().save(tmp_path / "t.json")
    done = invoke("view", "-", "--html", "-", stdin=(tmp_path / "t.json").read_text("utf-8"))
    assert done.exit_code == 0, done.stderr
    assert done.stdout.startswith("<!DOCTYPE html>")
    assert done.stderr == ""


def test_view_dash_without_html_writes_trace_html(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    small_result().save(tmp_path / "t.json")
    done = invoke("view", "-", stdin=(tmp_path / "t.json").read_text("utf-8"))
    assert done.exit_code == 0 and (tmp_path / "trace.html").is_file()


@pytest.mark.slow
def test_view_of_a_fifo_without_a_writer_does_not_hang(tmp_path: Path) -> None:
    """A real `flow-xray view FIFO` process: one error line and exit 2, promptly."""
    fifo = tmp_path / "spans.jsonl"
    os.mkfifo(fifo)
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "flow_xray", "view", str(fifo)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and time.monotonic() - started < 30
    assert done.stderr.count("error:") == 1 and "FIFO" in done.stderr


@pytest.mark.slow
def test_run_writes_through_devices_fifos_and_links_as_root_would_without_damage(
    tmp_path: Path,
) -> None:
    """`flow-xray run --html <device> --json <fifo with a reader>` and through a symlink:
    every node keeps its kind; the JSON arrives whole through the FIFO."""
    device = null_device(tmp_path)
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    script = tmp_path / "s.py"
    script.write_text("from flow_xray import trace\ntrace(lambda: 1)()\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    with reading(fifo) as got:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "flow_xray",
                "run",
                "--html",
                str(device),
                "--json",
                str(fifo),
                str(script),
            ],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert done.returncode == 0, done.stderr
    assert kind(device) == "chr" and kind(fifo) == "fifo"
    assert json.loads(got[0])["totals"]["nodes"] == 1
    assert leftovers(tmp_path) == []


def test_otlp_json_to_a_fifo_nobody_reads_is_one_error_before_the_script_runs(
    tmp_path: Path,
) -> None:
    """`run --otlp-json FIFO` with no reader: refused up front (the exporter would wait)."""
    fifo = tmp_path / "spans.jsonl"
    os.mkfifo(fifo)
    script = tmp_path / "s.py"
    script.write_text("open('ran', 'w').close()\n", encoding="utf-8")
    started = time.monotonic()
    line = one_error(invoke("run", "--otlp-json", str(fifo), str(script)))
    assert "no process is reading this FIFO" in line and time.monotonic() - started < 5
    assert not (tmp_path / "ran").exists() and kind(fifo) == "fifo"


def test_otlp_json_dash_is_refused_not_made_into_a_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    script = tmp_path / "s.py"
    script.write_text("\n", encoding="utf-8")
    assert "--otlp-json -" in one_error(invoke("run", "--otlp-json", "-", str(script)))
    assert not (tmp_path / "-").exists()


@pytest.mark.slow
def test_otlp_json_streams_into_a_fifo_with_a_reader(tmp_path: Path) -> None:
    """With a reader on the FIFO, every span arrives as OTLP JSON lines."""
    fifo = tmp_path / "spans.jsonl"
    os.mkfifo(fifo)
    script = tmp_path / "s.py"
    script.write_text("from flow_xray import trace\ntrace(lambda: 1)()\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    with reading(fifo) as got:
        done = subprocess.run(
            [sys.executable, "-m", "flow_xray", "run", "--otlp-json", str(fifo), str(script)],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert done.returncode == 0, done.stderr
    (line,) = got[0].decode().splitlines()
    assert "resourceSpans" in json.loads(line) and kind(fifo) == "fifo"
