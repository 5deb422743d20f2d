"""Start and stop Arize Phoenix, a real OTLP backend, for tests and benchmarks.

Phoenix runs from its own virtualenv through ``phoenix_loopback.py`` (which
keeps its gRPC receiver on 127.0.0.1), in a temporary working directory, on
free loopback ports.
Spans are read back through its REST API.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
# Where CI installs Phoenix (its own virtualenv); override with FLOW_XRAY_PHOENIX_PYTHON.
PHOENIX_PYTHON_DEFAULT = "/opt/phoenix/bin/python"
# Phoenix is ready in 10-12 s on an idle 2-core machine, but importing it alone
# took 27 s (45-60 s to healthy) while other suites shared the CPUs.
START_TIMEOUT_S = 120


def phoenix_python() -> str:
    """The interpreter that has Phoenix installed."""
    return os.environ.get("FLOW_XRAY_PHOENIX_PYTHON", PHOENIX_PYTHON_DEFAULT)


class PhoenixMissing(Exception):
    """Phoenix is not installed for the given interpreter."""


class PhoenixFailed(Exception):
    """Phoenix was found but did not become healthy."""


def free_port() -> int:
    """A loopback TCP port nobody listens on (bound, read, released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass(frozen=True)
class Phoenix:
    """A running Phoenix: its HTTP base URL (OTLP/HTTP + REST) and gRPC endpoint."""

    http_url: str
    grpc_url: str

    def get_json(self, path: str) -> Any:
        """GET a REST path; None on 404 (an unknown project is 404 until its first span)."""
        try:
            with urllib.request.urlopen(self.http_url + path, timeout=5) as response:
                return json.load(response)
        except urllib.error.HTTPError as error:
            if error.code == 404:
                return None
            raise

    def wait_for_spans(self, project: str, count: int, timeout_s: float = 10.0) -> list[Any]:
        """Poll the project's spans until at least ``count`` arrived or the time is up."""
        deadline = time.monotonic() + timeout_s
        spans: list[Any] = []
        while time.monotonic() < deadline:
            body = self.get_json(f"/v1/projects/{project}/spans?limit=1000")
            spans = list(body["data"]) if body else []
            if len(spans) >= count:
                break
            time.sleep(0.25)
        return spans

    def healthy(self) -> bool:
        """True when ``GET /healthz`` answers 200."""
        try:
            with urllib.request.urlopen(self.http_url + "/healthz", timeout=2) as response:
                return bool(response.status == 200)
        except OSError:
            return False


# Bind failures in Phoenix's log: another process (a test worker starting its own
# Phoenix) took a port between `free_port` and Phoenix binding it.
_PORT_TAKEN = ("Failed to bind", "address already in use", "Address already in use")
_ATTEMPTS = 3


@contextmanager
def start_phoenix(python: str) -> Iterator[Phoenix]:
    """Run Phoenix with interpreter ``python`` until the block ends; stop it by its pid.

    Phoenix gets free loopback ports; when one was taken before Phoenix bound it
    (two test workers starting Phoenix at once), it starts again on others.

    Raises:
        PhoenixMissing: ``python`` does not exist or cannot import Phoenix.
        PhoenixFailed: Phoenix exited or stayed unhealthy for `START_TIMEOUT_S`.
    """
    if not Path(python).exists():
        raise PhoenixMissing(f"Phoenix interpreter not found at {python}")
    for attempt in range(1, _ATTEMPTS + 1):
        with tempfile.TemporaryDirectory(prefix="flow-xray-phoenix-") as workdir:
            process, server, log_path = _launch(python, Path(workdir))
            try:
                tail = _wait_until_healthy(process, server, log_path)
                if tail is None:
                    yield server
                    return
                if "No module named 'phoenix" in tail:
                    raise PhoenixMissing(f"arize-phoenix is not installed for {python}")
                if attempt == _ATTEMPTS or not any(word in tail for word in _PORT_TAKEN):
                    raise PhoenixFailed(f"Phoenix not healthy after {START_TIMEOUT_S} s:\n{tail}")
            finally:
                process.terminate()
                try:
                    process.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait(timeout=5)


def _launch(python: str, workdir: Path) -> tuple[subprocess.Popen[bytes], Phoenix, Path]:
    """Phoenix started in ``workdir`` on two free loopback ports, and its log."""
    http_port, grpc_port = free_port(), free_port()
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("OTEL_")},
        "PHOENIX_HOST": "127.0.0.1",
        "PHOENIX_PORT": str(http_port),
        "PHOENIX_GRPC_PORT": str(grpc_port),
        "PHOENIX_WORKING_DIR": str(workdir),
        "PHOENIX_TELEMETRY_ENABLED": "false",
        "PHOENIX_ALLOW_EXTERNAL_RESOURCES": "false",
    }
    log_path = workdir / "phoenix.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [python, str(HERE / "phoenix_loopback.py"), "serve"],
            cwd=workdir,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    server = Phoenix(
        http_url=f"http://127.0.0.1:{http_port}", grpc_url=f"http://127.0.0.1:{grpc_port}"
    )
    return process, server, log_path


def _wait_until_healthy(
    process: subprocess.Popen[bytes], server: Phoenix, log_path: Path
) -> str | None:
    """None once Phoenix answers healthy; the tail of its log if it exits or runs out of time."""
    deadline = time.monotonic() + START_TIMEOUT_S
    while not server.healthy():
        if process.poll() is not None or time.monotonic() > deadline:
            return log_path.read_text(errors="replace")[-2000:]
        time.sleep(0.5)
    return None
