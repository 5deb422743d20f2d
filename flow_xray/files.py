"""Reading and writing the paths flow-xray is given, without harming what is there.

Writing (`write_text_atomic`, and `write_chunks_atomic` for a file made piece by
piece without ever holding all of it), by what the path is:

- a regular file, or nothing yet: replaced atomically. The text goes to a new
  file in the same folder, renamed over the target once complete, so a reader
  never sees half a file and a failure (an interrupt included) leaves none.
  The old file's permission bits, and its owner where the process may keep
  them (as root), carry over.
- a symlink: followed; its target is written as above and the link is kept.
- a character device (``/dev/null``, a terminal) or a FIFO: written through in
  place. Nothing is ever renamed over them; a FIFO no process reads is an
  error, never a wait. A path under ``/dev`` or ``/proc`` (``/dev/stdout``,
  ``/dev/fd/3``) is written through whatever it leads to, appending.
- ``-``: standard output.
- anything else (a directory, a socket, a block device): an `OSError` saying
  what it is; nothing is touched.

Reading (`read_text`) takes a regular file or ``-`` (standard input) only:
a FIFO, a device, a directory or a socket is refused before anything is read,
and opening never blocks. `write_problem` / `read_problem` say up front what
the writers and readers would refuse.

The ``os`` functions used are the ones this module found when it loaded: a
program that later replaces ``os.replace``, ``os.open`` or ``open`` (a test
fake, a sandbox, a joke) cannot redirect or break the writing of its trace.
"""

from __future__ import annotations

import errno
import io
import os
import re
import stat
import sys
from collections.abc import Iterable, Iterator
from contextlib import suppress
from typing import IO, Final

_open: Final = os.open
_close: Final = os.close
_write: Final = os.write
_fstat: Final = os.fstat
_stat: Final = os.stat
_lstat: Final = os.lstat
_readlink: Final = os.readlink
_replace: Final = os.replace
_unlink: Final = os.unlink
_urandom: Final = os.urandom
_fchmod: Final = getattr(os, "fchmod", None)
_fchown: Final = getattr(os, "fchown", None)
_set_blocking: Final = getattr(os, "set_blocking", None)
_access: Final = os.access
_FileIO: Final = io.FileIO

_O_CLOEXEC: Final = getattr(os, "O_CLOEXEC", 0)
_O_NOCTTY: Final = getattr(os, "O_NOCTTY", 0)
_O_NONBLOCK: Final = getattr(os, "O_NONBLOCK", 0)
_O_BINARY: Final = getattr(os, "O_BINARY", 0)  # Windows: no newline translation
# Names of a process's open files (``/dev/stdout``, ``/proc/self/fd/1``): written through,
# appending, whatever they lead to; a rename would detach the file the process holds.
_FD_LINK: Final = re.compile(r"/dev/(?:stdout|stderr|fd/\d+)|/proc/(?:self|thread-self|\d+)/fd/\d+")
_SURROGATE: Final = re.compile("[\ud800-\udfff]")
_CHUNK: Final = 1 << 20  # characters encoded at a time: no second copy of a big page


def kind_of(mode: int) -> str:
    """What a file of ``st_mode`` ``mode`` is, as a message says it (``"a FIFO (named pipe)"``)."""
    for test, name in (
        (stat.S_ISREG, "a regular file"),
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISBLK, "a block device"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def _refused(path: str, mode: int, doing: str) -> OSError:
    """The error for a file of a kind flow-xray does not ``doing`` ("read", "write", "replace")."""
    what = f"it is {kind_of(mode)}"
    if doing == "read":
        hint = " (to read a stream, pass - and pipe it in)" if stat.S_ISFIFO(mode) else ""
        message = f"{what}, not a file{hint}"
    elif doing == "write":
        message = f"{what}, not a file or a device" if not stat.S_ISDIR(mode) else what
    else:
        message = f"{what} now, which flow-xray never renames over"
    if stat.S_ISDIR(mode):
        return IsADirectoryError(errno.EISDIR, message, path)
    return OSError(errno.EINVAL, message, path)


# --- writing ---------------------------------------------------------------------


def write_text_atomic(
    path: str | os.PathLike[str], text: str, stdout: IO[str] | None = None
) -> None:
    """Write ``text`` as UTF-8 to ``path`` (``\\n`` line ends), as the module docstring says.

    ``-`` writes to ``stdout`` (default: ``sys.stdout``).

    Raises:
        OSError: the path cannot be written, or is a kind of file flow-xray does
            not write (a directory, a socket, a block device); nothing is left behind.
        UnicodeEncodeError: ``text`` holds a lone surrogate; nothing was written.
    """
    target = os.fspath(path)
    if target == "-":
        _to_stream(stdout if stdout is not None else sys.stdout, _chunks(text), text)
        return
    _check_encodable(text, target)
    write_chunks_atomic(path, _chunks(text))


def write_chunks_atomic(
    path: str | os.PathLike[str], chunks: Iterable[bytes], stdout: IO[str] | None = None
) -> None:
    """Write the bytes ``chunks`` gives, one after another, to ``path``, as
    `write_text_atomic` writes text: a regular file is replaced only once every
    chunk is written (a failure of the producer, an exception included, leaves
    the old file and no new one), a device or FIFO is written through as the
    chunks come. Only one chunk is held at a time.

    Raises:
        OSError: as `write_text_atomic`.
    """
    target = os.fspath(path)
    if target == "-":
        _to_stream(stdout if stdout is not None else sys.stdout, chunks)
        return
    try:
        info: os.stat_result | None = _stat(target)
    except FileNotFoundError:
        info = None  # nothing there, or a dangling symlink: created where it points
    if info is not None and not stat.S_ISREG(info.st_mode):
        if not (stat.S_ISCHR(info.st_mode) or stat.S_ISFIFO(info.st_mode)):
            raise _refused(target, info.st_mode, "write")
        _write_through(target, chunks, append=False)
    elif info is not None and _names_an_open_file(target):
        _write_through(target, chunks, append=True)
    else:
        _replace_atomically(os.path.realpath(target), chunks, info)


def _check_encodable(text: str, target: str) -> None:
    """A lone surrogate cannot be written as UTF-8: fail before anything is created."""
    if not text.isascii():
        found = _SURROGATE.search(text)
        if found is not None:
            raise UnicodeEncodeError(
                "utf-8", found.group(), 0, 1, f"lone surrogate at {found.start()} ({target})"
            )


def _names_an_open_file(path: str) -> bool:
    """Whether ``path`` is, or links to, a name of an open file (``/dev/stdout``...)."""
    current = os.path.abspath(path)
    for _ in range(8):  # a few symlink hops: a link to /dev/stdout counts
        if _FD_LINK.fullmatch(current):
            return True
        try:
            if not stat.S_ISLNK(_lstat(current).st_mode):
                return False
            current = os.path.join(os.path.dirname(current), _readlink(current))
        except OSError:
            return False
        current = os.path.normpath(current)
    return False


def _chunks(text: str) -> Iterator[bytes]:
    for start in range(0, len(text), _CHUNK):
        yield text[start : start + _CHUNK].encode("utf-8")


def _write_all(fd: int, chunks: Iterable[bytes]) -> None:
    for chunk in chunks:
        view = memoryview(chunk)
        while view:
            view = view[_write(fd, view) :]


def _to_stream(stream: IO[str] | None, chunks: Iterable[bytes], text: str | None = None) -> None:
    """Standard output: bytes to its buffer when it has one (after what is queued), else
    ``text`` (or the chunks decoded, what is not UTF-8 shown escaped)."""
    if stream is None:
        raise OSError(errno.EBADF, "there is no standard output", "-")
    try:
        stream.flush()
        buffer = getattr(stream, "buffer", None)
        if buffer is not None:
            for chunk in chunks:
                buffer.write(chunk)
            buffer.flush()
        elif text is not None:
            stream.write(text)
            stream.flush()
        else:
            for chunk in chunks:
                stream.write(chunk.decode("utf-8", "backslashreplace"))
            stream.flush()
    except ValueError:  # closed or detached
        raise OSError(errno.EBADF, "standard output is closed", "-") from None


def _write_through(target: str, chunks: Iterable[bytes], *, append: bool) -> None:
    """A device or FIFO (or a /dev, /proc path): opened without creating, truncating or waiting."""
    flags = os.O_WRONLY | _O_CLOEXEC | _O_NOCTTY | _O_NONBLOCK | _O_BINARY
    try:
        fd = _open(target, flags | (os.O_APPEND if append else 0))
    except OSError as exc:
        if exc.errno == errno.ENXIO:  # a FIFO with no reader
            raise OSError(errno.ENXIO, "no process is reading this FIFO", target) from None
        raise
    try:
        mode = _fstat(fd).st_mode
        if stat.S_ISREG(mode) and not append:
            # It became a regular file since it was looked at: writing at offset 0
            # would overwrite its start. Say so rather than guess.
            raise OSError(errno.EAGAIN, "the file changed while it was being written", target)
        if _set_blocking is not None:
            _set_blocking(fd, True)  # opened without waiting; a slow reader is waited for
        _write_all(fd, chunks)
    finally:
        _close(fd)


def _replace_atomically(real: str, chunks: Iterable[bytes], old: os.stat_result | None) -> None:
    """Write a new file beside ``real`` and rename it over ``real``."""
    folder, name = os.path.split(real)
    fd, temporary = _new_file(folder or ".", name)
    try:
        try:
            if old is not None:
                _keep_mode_and_owner(fd, old)
            _write_all(fd, chunks)
        finally:
            _close(fd)
        now = _current(real)
        if now is not None and not stat.S_ISREG(now.st_mode):
            # Something else took the path meanwhile (a FIFO, a device): never rename over it.
            raise _refused(real, now.st_mode, "replace")
        _replace(temporary, real)
    except BaseException:
        with suppress(OSError):
            _unlink(temporary)
        raise


def _current(path: str) -> os.stat_result | None:
    try:
        return _lstat(path)
    except FileNotFoundError:
        return None


def _new_file(folder: str, name: str) -> tuple[int, str]:
    """A new, empty file in ``folder`` that nothing else can have opened, and its path."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_CLOEXEC | _O_BINARY
    stem = name[:200]  # room for the suffix within a file name's 255 bytes
    for _ in range(100):
        temporary = os.path.join(folder, f".{stem}.{_urandom(4).hex()}.tmp")
        try:
            return _open(temporary, flags, 0o666), temporary
        except FileExistsError:
            continue
    raise OSError(errno.EEXIST, "could not create a temporary file", folder)


def _keep_mode_and_owner(fd: int, old: os.stat_result) -> None:
    """Give the new file the old one's permission bits and, where allowed, its owner."""
    if _fchown is not None:
        with suppress(OSError):  # not root: the file is ours, as any rewrite would make it
            _fchown(fd, old.st_uid, old.st_gid)
    if _fchmod is not None:
        _fchmod(fd, stat.S_IMODE(old.st_mode))


def write_problem(path: str) -> str | None:
    """Why `write_text_atomic` could not write ``path``, checked without writing; None if it can.

    The reasons: a folder that does not exist or is not writable, a file that
    is not writable, a directory, a socket or a block device.
    """
    if path == "-":
        return None
    try:
        info: os.stat_result | None = _stat(path)
    except FileNotFoundError:
        info = None
    except OSError as exc:
        return exc.strerror or str(exc)
    if info is not None:
        if stat.S_ISCHR(info.st_mode) or stat.S_ISFIFO(info.st_mode):
            return None if _access(path, os.W_OK) else "it is not writable"
        if not stat.S_ISREG(info.st_mode):
            return f"it is {kind_of(info.st_mode)}"
        if not _access(path, os.W_OK):
            return "file is not writable"
        if _names_an_open_file(path):
            return None
    folder = os.path.dirname(os.path.realpath(path))
    if not os.path.isdir(folder):
        return f"folder {folder} does not exist"
    if not _access(folder, os.W_OK | os.X_OK):
        return f"folder {folder} is not writable"
    return None


# --- reading ---------------------------------------------------------------------


def read_text(path: str | os.PathLike[str], encoding: str = "utf-8-sig") -> str:
    """The text of a regular file, or of standard input for ``-``; nothing else is read.

    The default encoding tolerates a UTF-8 byte order mark.

    Raises:
        OSError: the file cannot be opened or read, or is not a regular file
            (a FIFO, a device, a directory, a socket: refused without blocking).
        UnicodeDecodeError: the file is not in ``encoding``.
    """
    stdin = sys.stdin
    if os.fspath(path) == "-" and stdin is not None and getattr(stdin, "buffer", None) is None:
        return stdin.read()  # a text stream only (a test's StringIO)
    return read_bytes(path).decode(encoding)


def read_bytes(path: str | os.PathLike[str]) -> bytes:
    """The bytes of a regular file, or of standard input for ``-``, as `read_text` reads them.

    Raises:
        OSError: as `read_text`.
    """
    source = os.fspath(path)
    if source == "-":
        return _read_stdin()
    flags = os.O_RDONLY | _O_CLOEXEC | _O_NOCTTY | _O_NONBLOCK | _O_BINARY
    try:
        fd = _open(source, flags)
    except OSError as exc:
        if exc.errno == errno.ENXIO:  # a socket file
            raise _refused(source, stat.S_IFSOCK, "read") from None
        raise
    try:
        mode = _fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise _refused(source, mode, "read")
        with _FileIO(fd, "r", closefd=False) as raw:
            data = raw.readall()
    finally:
        _close(fd)
    return data


def _read_stdin() -> bytes:
    stream = sys.stdin
    if stream is None:
        raise OSError(errno.EBADF, "there is no standard input", "-")
    buffer = getattr(stream, "buffer", None)
    if buffer is None:  # a text stream only (a test's StringIO)
        return stream.read().encode("utf-8", "surrogateescape")
    data: bytes = buffer.read()
    return data


def read_problem(path: str) -> str | None:
    """Why `read_text` would refuse ``path`` (checked without opening it); None if it reads."""
    if path == "-":
        return None
    try:
        info = _stat(path)
    except FileNotFoundError:
        return "no such file"
    except OSError as exc:
        return exc.strerror or str(exc)
    if not stat.S_ISREG(info.st_mode):
        return _refused(path, info.st_mode, "read").strerror
    return None
