"""Where a command's own lines go, and how they look: terminal-safe, never failing.

Every line a ``flow-xray`` command prints (summaries, warnings, ``error:``
lines, ``diff``'s report, progress) goes through a `Console`: credentials are
scrubbed and `flow_xray.terminal.terminal_text` escapes whatever could act on
the terminal, so text from a trace (a call name holding ``ESC[2J``) shows as
text. Writing a line never raises: a closed stream, a full device or a pipe
nobody reads costs the line, never the command's outcome.

A command that runs a script (``run``, ``dot export``) keeps the streams it
started with (`Console.kept`): the script may replace ``sys.stdout`` /
``sys.stderr`` (a tee without ``fileno()``, ``None``), close them, or point
descriptor 2 at ``/dev/full``; flow-xray's lines still reach the stdout and
stderr the command was started with, through duplicates of their descriptors
taken before the script ran, and the script's streams are left as it left
them, so Python ends the process as it would have ended the script.
"""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import IO

from flow_xray.terminal import terminal_text

# Bound now: a script that replaces them cannot silence flow-xray's lines.
_os_write, _os_open, _os_close = os.write, os.open, os.close
_os_dup, _os_dup2, _os_isatty = os.dup, os.dup2, os.isatty


def scrubbed(text: str, *, newlines: bool = False) -> str:
    """``text`` as the terminal may show it: credentials replaced, nothing that acts on it.

    ``newlines`` keeps line breaks (a traceback); else the text is one line.
    """
    # Loaded on first use: `flow-xray --help` and `dot demo` never need it.
    from flow_xray.serialize import get_limits, scrub_text  # noqa: PLC0415

    return terminal_text(scrub_text(text, get_limits()), newlines=newlines)


class _Sink:
    """One output stream: the object, and a duplicate of its descriptor when kept."""

    def __init__(self, stream: IO[str] | None, fd: int | None) -> None:
        self.stream = stream
        self.fd = fd
        self.broken = False

    def write(self, text: str) -> None:
        """Write ``text``; a failure loses it and nothing else."""
        if self.broken or not text:
            return
        try:
            self.output(text)
        except BrokenPipeError:
            self._quiet()  # the reader went away (`| head`): say nothing more
        except (OSError, ValueError, LookupError, AttributeError, TypeError):
            pass  # closed, full, detached, not a stream: the line is lost, nothing else

    def output(self, text: str) -> None:
        """Write ``text``, raising `OSError` when it could not be written."""
        if self.fd is not None:
            self._flush_stream()  # what the stream holds goes out first
            encoding = getattr(self.stream, "encoding", None) or "utf-8"
            data = memoryview(text.encode(encoding, "backslashreplace"))
            while data:
                data = data[_os_write(self.fd, data) :]
            return
        if self.stream is None:
            raise OSError(errno.EBADF, "there is no such stream")
        try:
            self.stream.write(text)
            self.stream.flush()
        except ValueError:  # closed or detached
            raise OSError(errno.EBADF, "the stream is closed") from None

    def _flush_stream(self) -> None:
        with suppress(Exception):
            if self.stream is not None:
                self.stream.flush()

    def _quiet(self) -> None:
        """Stop writing, and point the stream at /dev/null so Python's exit flush succeeds."""
        self.broken = True
        with suppress(Exception):
            fd = self.fd if self.fd is not None else self.stream.fileno()  # type: ignore[union-attr]
            null = _os_open(os.devnull, os.O_WRONLY)
            _os_dup2(null, fd)
            _os_close(null)

    def isatty(self) -> bool:
        with suppress(Exception):
            if self.fd is not None:
                return _os_isatty(self.fd)
            return bool(self.stream is not None and self.stream.isatty())
        return False


class Console:
    """A command's stdout and stderr (see the module docstring).

    ``line`` prints one terminal-safe line; ``block`` several (a traceback);
    ``write`` raw text flow-xray made itself (a progress line's ``\\r``).
    """

    def __init__(self, out: _Sink, err: _Sink) -> None:
        self._out = out
        self._err = err

    @classmethod
    def current(cls) -> Console:
        """The streams as they are now (``sys.stdout`` / ``sys.stderr``)."""
        return cls(_Sink(sys.stdout, None), _Sink(sys.stderr, None))

    @classmethod
    @contextmanager
    def kept(cls) -> Iterator[Console]:
        """The streams as they are now, kept for the block whatever a script does to them.

        Where a stream is a real file, its descriptor is duplicated, and lines go
        to the duplicate; the duplicates are closed afterwards.
        """
        sinks = [_Sink(stream, _duplicate(stream)) for stream in (sys.stdout, sys.stderr)]
        try:
            yield cls(*sinks)
        finally:
            for sink in sinks:
                if sink.fd is not None:
                    with suppress(OSError):
                        _os_close(sink.fd)

    def line(self, text: str, *, err: bool = True) -> None:
        """Print ``text`` as one line: scrubbed, every control character escaped."""
        (self._err if err else self._out).write(scrubbed(text) + "\n")

    def block(self, text: str, *, err: bool = True) -> None:
        """Print ``text`` keeping its line breaks (a traceback), scrubbed and escaped otherwise."""
        (self._err if err else self._out).write(scrubbed(text, newlines=True))

    def write(self, text: str, *, err: bool = True) -> None:
        """Print text flow-xray composed itself, as it is (its parts already made safe)."""
        (self._err if err else self._out).write(text)

    def isatty(self, *, err: bool = True) -> bool:
        """Whether the stream is a terminal (a progress line then updates in place)."""
        return (self._err if err else self._out).isatty()

    def output(self, text: str) -> None:
        """Write an output file's ``text`` to stdout (the path ``-``).

        Raises:
            OSError: stdout is closed, full, or its reader went away.
        """
        self._out.output(text)


def _duplicate(stream: IO[str] | None) -> int | None:
    """A duplicate of ``stream``'s descriptor, or None when it has none (click's runner)."""
    try:
        fd = stream.fileno() if stream is not None else None
        return _os_dup(fd) if isinstance(fd, int) else None
    except (OSError, ValueError, AttributeError):  # not a real file, closed, no descriptors left
        return None
