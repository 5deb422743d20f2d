"""`flow_xray.files.write_chunks_atomic` and `read_bytes`: a file written piece by piece,
by the rules `write_text_atomic` follows (the path kinds themselves: tests/reliability)."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from flow_xray.files import read_bytes, write_chunks_atomic


def _pieces(count: int, fail_after: int | None = None) -> Iterator[bytes]:
    for at in range(count):
        if fail_after is not None and at == fail_after:
            raise RuntimeError("the producer failed")
        yield f"piece {at}\n".encode()


def test_the_chunks_are_written_one_after_another(tmp_path: Path) -> None:
    """Every chunk, in order, makes the file."""
    write_chunks_atomic(tmp_path / "out", _pieces(3))
    assert (tmp_path / "out").read_bytes() == b"piece 0\npiece 1\npiece 2\n"


def test_a_producer_that_fails_leaves_the_old_file_and_nothing_else(tmp_path: Path) -> None:
    """A failure halfway keeps the old file whole and leaves no temporary file."""
    target = tmp_path / "out"
    target.write_bytes(b"old")
    with pytest.raises(RuntimeError, match="producer"):
        write_chunks_atomic(target, _pieces(5, fail_after=2))
    assert target.read_bytes() == b"old"
    assert os.listdir(tmp_path) == ["out"]


def test_a_replaced_file_keeps_its_mode(tmp_path: Path) -> None:
    """The new file gets the old one's permission bits, as `write_text_atomic` gives them."""
    target = tmp_path / "out"
    target.write_bytes(b"old")
    target.chmod(0o640)
    write_chunks_atomic(target, _pieces(1))
    assert stat.S_IMODE(target.stat().st_mode) == 0o640


def test_a_fifo_gets_the_chunks_and_stays_a_fifo(tmp_path: Path) -> None:
    """A FIFO with a reader is written through as the chunks come, never replaced."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # open first: no wait, no race
    try:
        write_chunks_atomic(fifo, _pieces(2))  # small: fits the pipe's buffer
        got = os.read(reader, 1 << 16)
    finally:
        os.close(reader)
    assert got == b"piece 0\npiece 1\n"
    assert stat.S_ISFIFO(fifo.stat().st_mode)


def test_dash_writes_the_chunks_to_stdout(capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    """``-`` is standard output, bytes as they are."""
    write_chunks_atomic("-", [b"\x89binary\n"])
    assert capsysbinary.readouterr().out == b"\x89binary\n"


def test_read_bytes_gives_a_regular_files_bytes(tmp_path: Path) -> None:
    """Bytes that are not text come back as they are."""
    (tmp_path / "f").write_bytes(b"\x89\x00\xff")
    assert read_bytes(tmp_path / "f") == b"\x89\x00\xff"


def test_read_bytes_refuses_a_fifo_without_waiting(tmp_path: Path) -> None:
    """A FIFO is refused before anything is read (no writer needed to return)."""
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(OSError, match="FIFO"):
        read_bytes(tmp_path / "pipe")
