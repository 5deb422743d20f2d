"""Start and stop the real Collector and Jaeger v2 for the end-to-end tests.

Every listener binds 127.0.0.1 on a free port. Jaeger runs with
``jaeger-config.yaml`` (in-memory storage, OTLP/gRPC in, the query API out).
A Collector runs one of the repository's own configs, unchanged: its
listeners and its export endpoint are set only through the ``${env:...}``
variables the config reads. Processes are stopped by their pid.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.backends.binaries import HERE
from tests.sdk.otlp.phoenix_server import free_port

JAEGER_CONFIG = HERE / "jaeger-config.yaml"
# Jaeger and a Collector start in about a second on an idle machine; allow for
# two cores shared with a busy test suite.
START_TIMEOUT_S = 60
STOP_TIMEOUT_S = 15


class ServerFailed(Exception):
    """A server exited or did not become ready; the message ends with its log."""


def _http_status(url: str) -> int | None:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            status: int = response.status
            return status
    except urllib.error.HTTPError as error:
        return error.code
    except OSError:
        return None


def _accepts(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(1)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def listening_addresses(pid: int) -> set[tuple[str, int]]:
    """(IPv4 or IPv6 address, port) of every TCP socket process ``pid`` listens on (Linux /proc)."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        with suppress(OSError):
            target = os.readlink(fd)
            if target.startswith("socket:["):
                inodes.add(target[len("socket:[") : -1])
    found: set[tuple[str, int]] = set()
    for table, family in (("tcp", socket.AF_INET), ("tcp6", socket.AF_INET6)):
        path = Path(f"/proc/{pid}/net/{table}")
        if not path.exists():
            continue
        for line in path.read_text().splitlines()[1:]:
            fields = line.split()
            local, state, inode = fields[1], fields[3], fields[9]
            if state != "0A" or inode not in inodes:  # 0A: LISTEN
                continue
            address, port = local.split(":")
            raw = bytes.fromhex(address)
            # /proc prints each 32-bit word of the address in host (little-endian) order.
            raw = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))
            found.add((socket.inet_ntop(family, raw), int(port, 16)))
    return found


@dataclass
class Process:
    """A started server: its process and the file its output goes to."""

    name: str
    process: subprocess.Popen[bytes]
    log_path: Path

    def log(self) -> str:
        """Everything the server printed so far."""
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def failed(self, why: str) -> ServerFailed:
        """A ServerFailed naming the server, ``why`` and the end of its log."""
        return ServerFailed(f"{self.name} {why}:\n{self.log()[-4000:]}")

    def wait_until(
        self, ready: Callable[[], bool], what: str, timeout_s: float = START_TIMEOUT_S
    ) -> None:
        """Poll ``ready()`` until it is true; raise if the process exits or time runs out."""
        deadline = time.monotonic() + timeout_s
        while not ready():
            if self.process.poll() is not None:
                raise self.failed(f"exited with status {self.process.returncode} before {what}")
            if time.monotonic() > deadline:
                raise self.failed(f"not {what} after {timeout_s:.0f} s")
            time.sleep(0.2)

    def stop(self) -> int:
        """Terminate by pid (SIGTERM, then SIGKILL after `STOP_TIMEOUT_S`); the exit status."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)
        return self.process.returncode


@contextmanager
def run_process(
    name: str, command: list[str], env: Mapping[str, str], workdir: Path
) -> Iterator[Process]:
    """Run ``command`` in ``workdir`` with exactly ``env`` (plus PATH) until the block ends."""
    log_path = workdir / f"{name}.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            command,
            cwd=workdir,
            env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), **env},
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    server = Process(name=name, process=process, log_path=log_path)
    try:
        yield server
    finally:
        server.stop()


# --- Jaeger --------------------------------------------------------------------


@dataclass
class Jaeger:
    """A running Jaeger v2: where OTLP/gRPC goes in and where its query API answers."""

    otlp_grpc: str
    query_url: str
    server: Process

    def get_json(self, path: str) -> Any:
        """GET a query API path; None on 404 (a trace Jaeger does not hold)."""
        try:
            with urllib.request.urlopen(self.query_url + path, timeout=5) as response:
                return json.load(response)
        except urllib.error.HTTPError as error:
            if error.code == 404:
                return None
            raise

    def trace(self, trace_id: str) -> Any:
        """The trace as Jaeger's UI fetches it (``GET /api/traces/ID``), or None."""
        return self.get_json(f"/api/traces/{trace_id}")

    def wait_for_trace(self, trace_id: str, span_count: int, timeout_s: float = 20.0) -> Any:
        """Poll until the trace holds ``span_count`` spans; the last answer (None if none)."""
        deadline = time.monotonic() + timeout_s
        body = None
        while time.monotonic() < deadline:
            body = self.trace(trace_id)
            if body and body.get("data") and len(body["data"][0]["spans"]) >= span_count:
                return body
            time.sleep(0.25)
        return body


@contextmanager
def start_jaeger(binary: Path, workdir: Path) -> Iterator[Jaeger]:
    """Run Jaeger v2 with in-memory storage on free loopback ports until the block ends."""
    ports = {
        "JAEGER_OTLP_GRPC_PORT": free_port(),
        "JAEGER_QUERY_HTTP_PORT": free_port(),
        "JAEGER_QUERY_GRPC_PORT": free_port(),
    }
    env = {name: str(port) for name, port in ports.items()}
    command = [str(binary), f"--config={JAEGER_CONFIG}"]
    with run_process("jaeger", command, env, workdir) as server:
        jaeger = Jaeger(
            otlp_grpc=f"127.0.0.1:{ports['JAEGER_OTLP_GRPC_PORT']}",
            query_url=f"http://127.0.0.1:{ports['JAEGER_QUERY_HTTP_PORT']}",
            server=server,
        )
        server.wait_until(
            lambda: (
                _http_status(jaeger.query_url + "/api/services") == 200
                and _accepts(ports["JAEGER_OTLP_GRPC_PORT"])
            ),
            "serving its query API and OTLP receiver",
        )
        yield jaeger


# --- the Collector -----------------------------------------------------------------


@dataclass
class Collector:
    """A running Collector: its OTLP endpoints (gRPC URL, HTTP URL) and its output."""

    grpc_url: str
    http_url: str
    health_url: str
    server: Process


def collector_listen_env() -> dict[str, str]:
    """The variables that put a config's receivers and health check on free loopback ports."""
    return {
        "COLLECTOR_LISTEN_HOST": "127.0.0.1",
        "COLLECTOR_OTLP_GRPC_PORT": str(free_port()),
        "COLLECTOR_OTLP_HTTP_PORT": str(free_port()),
        "COLLECTOR_HEALTH_PORT": str(free_port()),
        "COLLECTOR_METRICS_PORT": str(free_port()),
    }


@contextmanager
def start_collector(
    binary: Path, config: Path, env: Mapping[str, str], workdir: Path
) -> Iterator[Collector]:
    """Run ``binary --config config`` until the block ends, ready when health_check says so.

    ``env`` holds every variable the config reads (`collector_listen_env` and the
    exporter's own); nothing else from the test's environment reaches it.
    """
    listen = {**collector_listen_env(), **env}
    command = [str(binary), f"--config={config}"]
    with run_process(f"collector-{config.stem}", command, listen, workdir) as server:
        collector = Collector(
            grpc_url=f"http://127.0.0.1:{listen['COLLECTOR_OTLP_GRPC_PORT']}",
            http_url=f"http://127.0.0.1:{listen['COLLECTOR_OTLP_HTTP_PORT']}",
            health_url=f"http://127.0.0.1:{listen['COLLECTOR_HEALTH_PORT']}/",
            server=server,
        )
        server.wait_until(lambda: _http_status(collector.health_url) == 200, "healthy")
        yield collector


def validate_config(binary: Path, config: Path) -> subprocess.CompletedProcess[str]:
    """``otelcol validate --config FILE`` with no environment set (every default applies)."""
    return subprocess.run(
        [str(binary), "validate", f"--config={config}"],
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
        capture_output=True,
        text=True,
        timeout=60,
    )
