"""The private channel child processes send their spans over: a local socket and its frames.

The parent (a ``processes=True`` capture) listens on a socket only it and its
children know: an abstract Unix socket on Linux (no file anywhere), a Unix
socket in a private temporary folder elsewhere on POSIX, loopback TCP on
Windows. Its address and a random token travel in ``FLOW_XRAY_CHANNEL``; a
connection whose first frame does not carry the token is dropped.

A frame is a header (payload length, a kind byte, a 64-bit key: the span id)
and a `marshal` payload (plain tuples, dicts, strings and numbers; marshal
keeps tuples and any int or string). The header lets the parent match a
span's end to its start without decoding the start, which it then never
needs unless the span never ended. A child writes each frame with one
blocking ``sendall`` as the span starts or ends, so nothing is buffered in
the child: a child killed with SIGKILL loses nothing it already sent. A
signal's exception raised inside a send (Ctrl-C reaches every process of the
terminal's group; a pool worker outlives its task's) cuts one frame short:
the child's next frame opens a new connection. A Unix socket queues the bytes
at the receiver during the send, so work a child reports done afterwards (a
pool result) cannot overtake its spans. The parent's reader thread only moves
bytes into per-connection buffers, polling (every 2 ms while data flows,
backing off to 20 ms when idle) rather than waking on every frame: a wake-up
per frame would hand the CPU to the reader on each send and make each one
cost a context switch. A child's 4 MiB send buffer (or the system's cap)
absorbs what arrives between two polls. Frames are decoded when a capture
asks (`Hub.drain`), which first reads whatever is queued.
"""

from __future__ import annotations

import contextlib
import hmac
import logging
import marshal
import os
import secrets
import shutil
import socket
import struct
import sys
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Final

logger = logging.getLogger("flow_xray")

CHANNEL_ENV: Final = "FLOW_XRAY_CHANNEL"
PROTOCOL: Final = 1
_HELLO: Final = "flow-xray"
_HEADER: Final = struct.Struct(">IBQ")  # payload length, kind, key
HELLO_KIND: Final = 0
MAX_FRAME: Final = 64 * 1024 * 1024
_RECV_BYTES: Final = 1 << 20
_SEND_BUFFER: Final = 4 << 20  # the kernel caps it (net.core.wmem_max)
_POLL_BUSY_S: Final = 0.002
_POLL_IDLE_S: Final = 0.02
# A child blocked this long on a parent that reads nothing gives up sending.
SEND_TIMEOUT_S: Final = 30.0


def encode(kind: int, key: int, message: Any) -> bytes:
    """One frame: the header, then the marshalled message.

    Raises:
        ValueError: the message holds something marshal cannot write.
    """
    payload = marshal.dumps(message, 4)
    return _HEADER.pack(len(payload), kind, key) + payload


def decode(payload: bytes) -> Any:
    """The message of a frame's payload; None when it does not decode."""
    try:
        return marshal.loads(payload)
    except (ValueError, EOFError, TypeError):
        logger.debug("flow-xray: a child sent a frame that does not decode")
        return None


# (pid of the sender, kind, key, payload) as `Hub.drain` returns them.
Frame = tuple[int, int, int, bytes]


@dataclass(frozen=True)
class Address:
    """Where the parent listens: ``family`` is ``"unix"`` or ``"tcp"``."""

    token: str
    family: str
    location: str  # a Unix socket path ("@" first: abstract), or "host:port"

    def __str__(self) -> str:
        return f"{PROTOCOL}:{self.token}:{self.family}:{self.location}"

    @classmethod
    def parse(cls, text: str | None) -> Address | None:
        """Read ``FLOW_XRAY_CHANNEL``'s value; None when absent or not this protocol."""
        if not text:
            return None
        parts = text.split(":", 3)
        if len(parts) != 4 or parts[0] != str(PROTOCOL) or parts[2] not in ("unix", "tcp"):
            return None
        return cls(parts[1], parts[2], parts[3])

    def connect(self) -> socket.socket:
        """Open a connection to the parent (blocking, with the send timeout)."""
        if self.family == "unix":
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                sock.settimeout(SEND_TIMEOUT_S)
                sock.connect(_unix_name(self.location))
            except OSError:
                sock.close()
                raise
        else:
            host, _, port = self.location.rpartition(":")
            sock = socket.create_connection((host, int(port)), timeout=SEND_TIMEOUT_S)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, _SEND_BUFFER)
        return sock


def _unix_name(location: str) -> str:
    return "\0" + location[1:] if location.startswith("@") else location


class Client:
    """A child's end: sends frames to the parent, connecting on first use.

    Thread-safe. Any failure (the parent is gone, or stopped listening) makes
    it drop everything from then on: a child's work never waits on tracing.
    """

    def __init__(self, address: Address) -> None:
        self.address = address
        self._sock: socket.socket | None = None
        self._lock = threading.Lock()
        self._broken = False

    def send(self, frame: bytes) -> None:
        """Send one encoded frame (see `encode`)."""
        if self._broken:
            return
        with self._lock:
            if self._broken:
                return
            try:
                if self._sock is None:
                    self._sock = self.address.connect()
                    hello = (_HELLO, PROTOCOL, self.address.token, os.getpid())
                    self._sock.sendall(encode(HELLO_KIND, 0, hello))
                self._sock.sendall(frame)
            except OSError:
                logger.debug("flow-xray: the parent process stopped collecting", exc_info=True)
                self._broken = True
                self._close()
            except BaseException:
                # A signal's exception (Ctrl-C) out of ``sendall``: how much of the frame
                # went is unknown, so this connection's framing is lost. The next frame
                # goes over a new one; the parent drops a frame cut short at the end of one.
                self._close()
                raise

    def close(self) -> None:
        """Close the connection (the parent then has everything sent so far)."""
        with self._lock:
            self._broken = True
            self._close()

    def after_fork(self) -> None:
        """In a forked child: the connection is the parent's; this process opens its own."""
        self._lock = threading.Lock()
        self._close()  # closes this process's copy only; the parent's stays open

    def _close(self) -> None:
        sock, self._sock = self._sock, None
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.close()


class _Connection:
    __slots__ = ("buffer", "pid", "sock")

    def __init__(self, sock: socket.socket) -> None:
        self.sock: socket.socket | None = sock
        self.buffer = bytearray()
        self.pid: int | None = None  # set by the hello frame


class Hub:
    """The parent's end: listens, buffers what children send, decodes on `drain`.

    Its reader thread runs from `start` to `close` (which may be called again: it
    finishes what an interrupted one left).
    """

    def __init__(self) -> None:
        self.token = secrets.token_hex(16)
        self._folder: str | None = None
        self._listener, self.address = self._listen()
        self._listener.setblocking(False)
        self._lock = threading.Lock()
        self._connections: list[_Connection] = []
        self._closed = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, name="flow-xray-processes", daemon=True)

    def start(self) -> None:
        """Start the reader thread (apart from making the hub, so whoever keeps the hub has it
        before a thread that must be stopped runs)."""
        self._thread.start()

    def _listen(self) -> tuple[socket.socket, Address]:
        if sys.platform.startswith("linux"):
            name = f"@flow-xray-{os.getpid()}-{secrets.token_hex(8)}"
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.bind(_unix_name(name))
        elif hasattr(socket, "AF_UNIX"):
            self._folder = tempfile.mkdtemp(prefix="flow-xray-")
            name = os.path.join(self._folder, "spans.sock")
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.bind(name)
        else:
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.bind(("127.0.0.1", 0))
            name = f"127.0.0.1:{sock.getsockname()[1]}"
        sock.listen(128)
        return sock, Address(self.token, "unix" if name[0] in "@/" else "tcp", name)

    # --- the reader thread ----------------------------------------------------

    def _serve(self) -> None:
        interval = _POLL_IDLE_S
        while not self._stop.wait(interval):
            with self._lock:
                if self._closed:
                    return
                self._accept()
                received = 0
                for connection in self._connections:
                    received += self._receive(connection)
            interval = _POLL_BUSY_S if received else min(interval * 2, _POLL_IDLE_S)

    def _accept(self) -> None:
        while True:
            try:
                sock, _ = self._listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                logger.debug("flow-xray: accepting a child's connection failed", exc_info=True)
                return
            sock.setblocking(False)
            self._connections.append(_Connection(sock))

    def _receive(self, connection: _Connection) -> int:
        """Move everything queued on the connection into its buffer; returns the byte count."""
        received = 0
        while connection.sock is not None:
            try:
                data = connection.sock.recv(_RECV_BYTES)
            except (BlockingIOError, InterruptedError):
                break
            except OSError:
                data = b""
            if not data:  # the child is done (or gone): keep what it sent
                self._forget(connection)
                break
            received += len(data)
            connection.buffer += data
            if connection.pid is None and not self._greet(connection):
                connection.buffer.clear()
                self._forget(connection)
                break
        return received

    def _greet(self, connection: _Connection) -> bool:
        """Check the first frame once it is complete; False drops the connection."""
        buffer = connection.buffer
        if len(buffer) < _HEADER.size:
            return True
        size, kind, _ = _HEADER.unpack_from(buffer)
        if size > 4096 or kind != HELLO_KIND:
            return False
        if len(buffer) < _HEADER.size + size:
            return True
        try:
            hello = marshal.loads(bytes(buffer[_HEADER.size : _HEADER.size + size]))
            name, protocol, token, pid = hello
        except (ValueError, TypeError, EOFError):
            return False
        if name != _HELLO or protocol != PROTOCOL or not isinstance(token, str):
            return False
        if not hmac.compare_digest(token.encode(), self.token.encode()):
            return False
        connection.pid = pid if isinstance(pid, int) else 0
        del buffer[: _HEADER.size + size]
        return True

    def _forget(self, connection: _Connection) -> None:
        sock, connection.sock = connection.sock, None
        if sock is not None:
            sock.close()

    # --- for captures -----------------------------------------------------------

    def drain(self) -> list[Frame]:
        """Every frame received so far, oldest first per child (payloads not decoded yet).

        Reads what is queued on the sockets first, so whatever a child sent
        before this call is included. A frame cut short (a child killed while
        sending) is dropped.
        """
        with self._lock:
            if self._closed:
                return []
            self._accept()
            for connection in self._connections:
                self._receive(connection)
            messages: list[Frame] = []
            for connection in self._connections:
                if connection.pid is not None:
                    pid = connection.pid
                    messages.extend((pid, *frame) for frame in _frames(connection.buffer))
            self._connections = [c for c in self._connections if c.sock is not None]
        return messages

    def close(self) -> list[Frame]:
        """Stop listening and drop every connection; returns the frames not drained yet."""
        messages = self.drain()
        with self._lock:
            self._closed = True
            while self._connections:
                self._forget(self._connections.pop())
        self._stop.set()
        if self._thread.ident is not None:  # (started)
            self._thread.join(timeout=5.0)
        self._release()
        return messages

    def _release(self) -> None:
        with contextlib.suppress(OSError):
            self._listener.close()
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)

    def after_fork(self) -> None:
        """In a forked child: these sockets are the parent's; close this process's copies only."""
        self._lock = threading.Lock()
        self._closed = True
        self._folder = None  # the parent removes it
        for connection in self._connections:
            if connection.sock is not None:
                connection.sock.close()
                connection.sock = None
        self._connections = []
        self._stop = threading.Event()
        with contextlib.suppress(OSError):
            self._listener.close()


def _frames(buffer: bytearray) -> Iterator[tuple[int, int, bytes]]:
    """Take the complete frames off the start of ``buffer``: ``(kind, key, payload)``."""
    position = 0
    end = len(buffer)
    try:
        while end - position >= _HEADER.size:
            size, kind, key = _HEADER.unpack_from(buffer, position)
            if size > MAX_FRAME:
                position = end  # not our framing: drop the rest
                break
            start = position + _HEADER.size
            if end - start < size:
                break
            yield kind, key, bytes(buffer[start : start + size])
            position = start + size
    finally:
        del buffer[:position]
