"""Fixtures for the OTLP tests: a clean global provider, a loopback OTLP/HTTP receiver, Phoenix.

The Phoenix server is started once per session from its own virtualenv
(``FLOW_XRAY_PHOENIX_PYTHON``); see `tests.sdk.otlp.phoenix_server`.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, NoReturn

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from flow_xray.sdk import provider as flow_provider
from tests.sdk.otlp.phoenix_server import (
    Phoenix,
    PhoenixFailed,
    PhoenixMissing,
    phoenix_python,
    start_phoenix,
)


@pytest.fixture
def clean_otel(monkeypatch: pytest.MonkeyPatch, otel_globals: Callable[[], None]) -> Iterator[None]:
    """No OTEL_* variables, no global provider, and every flow-xray exporter stopped afterwards."""
    for name in list(os.environ):
        if name.startswith("OTEL_"):
            monkeypatch.delenv(name)
    yield
    flow_provider.shutdown(timeout_s=2.0)


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
    # Polled every 50 ms, not the default 500: shutdown() waits for the loop to notice.
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield receiver
    server.shutdown()
    server.server_close()


# --- Phoenix -----------------------------------------------------------------


@pytest.fixture(scope="session")
def phoenix(e2e_missing: Callable[[str], NoReturn]) -> Iterator[Phoenix]:
    """Start Phoenix once per session on loopback ports; stop it by pid at the end."""
    try:
        with start_phoenix(phoenix_python()) as server:
            yield server
    except PhoenixMissing as missing:
        e2e_missing(str(missing))
    except PhoenixFailed as failed:
        pytest.fail(str(failed))
