"""Fixtures for the OTLP tests: a clean global provider, a loopback OTLP/HTTP receiver, Phoenix.

The Phoenix server is started once per session from its own virtualenv
(``FLOW_XRAY_PHOENIX_PYTHON``, default ``/opt/phoenix/bin/python``) through
``phoenix_loopback.py``, which keeps its gRPC receiver on 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, NoReturn

import pytest
from opentelemetry import trace as trace_api
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.util._once import Once

from flow_xray import provider as flow_provider

HERE = Path(__file__).parent
PHOENIX_PYTHON_DEFAULT = "/opt/phoenix/bin/python"
OTEL_ENV_PREFIXES = ("OTEL_",)
# Phoenix is ready in 10-12 s on an idle 2-core machine, but importing it alone
# took 27 s (45-60 s to healthy) while other suites shared the CPUs.
PHOENIX_START_TIMEOUT_S = 120


def reset_global_provider() -> None:
    """Forget the global TracerProvider.

    The OpenTelemetry API allows setting it once per process; its own test
    utilities (opentelemetry-test-utils ``reset_trace_globals``) reset these
    two private names the same way, which is what lets each test start clean.
    """
    trace_api._TRACER_PROVIDER_SET_ONCE = Once()
    trace_api._TRACER_PROVIDER = None


@pytest.fixture
def clean_otel(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No OTEL_* variables, no global provider, and every flow-xray exporter stopped afterwards."""
    for name in list(os.environ):
        if name.startswith(OTEL_ENV_PREFIXES):
            monkeypatch.delenv(name)
    reset_global_provider()
    yield
    flow_provider.shutdown(timeout_s=2.0)
    reset_global_provider()


def free_port() -> int:
    """A loopback TCP port nobody listens on (bound, read, released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass
class OtlpHttpReceiver:
    """A loopback OTLP/HTTP receiver that stores what it was sent."""

    url: str
    paths: list[str] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    requests: list[ExportTraceServiceRequest] = field(default_factory=list)

    def span_names(self) -> list[str]:
        """Names of every received span, in arrival order."""
        return [
            span.name
            for request in self.requests
            for resource in request.resource_spans
            for scope in resource.scope_spans
            for span in scope.spans
        ]

    def resource_attributes(self) -> list[dict[str, str]]:
        """The string resource attributes of every received ResourceSpans."""
        return [
            {kv.key: kv.value.string_value for kv in resource.resource.attributes}
            for request in self.requests
            for resource in request.resource_spans
        ]


@pytest.fixture
def otlp_receiver() -> Iterator[OtlpHttpReceiver]:
    """An OTLP/HTTP protobuf receiver on 127.0.0.1 (``receiver.url`` is its base URL)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    receiver = OtlpHttpReceiver(url=f"http://127.0.0.1:{server.server_address[1]}")
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            request = ExportTraceServiceRequest()
            request.ParseFromString(body)
            with lock:
                receiver.paths.append(self.path)
                receiver.headers.append({k.lower(): v for k, v in self.headers.items()})
                receiver.requests.append(request)
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            """Keep test output clean."""

    server.RequestHandlerClass = Handler
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield receiver
    server.shutdown()
    server.server_close()


# --- Phoenix -----------------------------------------------------------------


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


def _port_or_free(preferred: int) -> int:
    """The standard OTLP port when it is free, else any free loopback port."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind(("127.0.0.1", preferred))
        except OSError:
            return free_port()
    return preferred


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(url + "/healthz", timeout=2) as response:
            return bool(response.status == 200)
    except (OSError, urllib.error.URLError):
        return False


@pytest.fixture(scope="session")
def phoenix(e2e_missing: Callable[[str], NoReturn]) -> Iterator[Phoenix]:
    """Start Phoenix once per session on loopback ports; stop it by pid at the end."""
    python = os.environ.get("FLOW_XRAY_PHOENIX_PYTHON", PHOENIX_PYTHON_DEFAULT)
    if not Path(python).exists():
        e2e_missing(f"Phoenix interpreter not found at {python} (set FLOW_XRAY_PHOENIX_PYTHON)")
    http_port, grpc_port = _port_or_free(4318), _port_or_free(4317)
    with tempfile.TemporaryDirectory(prefix="flow-xray-phoenix-") as workdir:
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(OTEL_ENV_PREFIXES)},
            "PHOENIX_HOST": "127.0.0.1",
            "PHOENIX_PORT": str(http_port),
            "PHOENIX_GRPC_PORT": str(grpc_port),
            "PHOENIX_WORKING_DIR": workdir,
            "PHOENIX_TELEMETRY_ENABLED": "false",
            "PHOENIX_ALLOW_EXTERNAL_RESOURCES": "false",
        }
        log_path = Path(workdir) / "phoenix.log"
        with log_path.open("wb") as log:
            process = subprocess.Popen(
                [python, str(HERE / "phoenix_loopback.py"), "serve"],
                cwd=workdir,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        http_url = f"http://127.0.0.1:{http_port}"
        try:
            deadline = time.monotonic() + PHOENIX_START_TIMEOUT_S
            while not _healthy(http_url):
                if process.poll() is not None or time.monotonic() > deadline:
                    tail = log_path.read_text(errors="replace")[-2000:]
                    if "No module named 'phoenix" in tail:
                        e2e_missing(f"arize-phoenix is not installed for {python}")
                    pytest.fail(f"Phoenix not healthy after {PHOENIX_START_TIMEOUT_S} s:\n{tail}")
                time.sleep(0.5)
            yield Phoenix(http_url=http_url, grpc_url=f"http://127.0.0.1:{grpc_port}")
        finally:
            process.terminate()
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=5)


def run_python(script: Path, *args: str, env: dict[str, str], timeout_s: float = 60) -> Any:
    """Run ``script`` with this interpreter; return the CompletedProcess (text mode)."""
    return subprocess.run(
        [sys.executable, str(script), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout_s,
    )
