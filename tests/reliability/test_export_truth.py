"""Export tells the truth: only an OTLP success counts as delivered; every lost span is reported.

A real HTTP server of our own on 127.0.0.1 answers the real OpenTelemetry SDK
HTTP exporter (through `configure`, as a user sets it up, and through a
``flow-xray run`` process) the way broken or misconfigured endpoints do: a
web page, bytes that are not an ``ExportTraceServiceResponse``, a redirect,
an error status, a partial success. Each time the spans arrived at the
server, and each time the count of lost ones (one warning line, no
credential in it) is exactly what the answer says.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from flow_xray import trace
from flow_xray.sdk import provider as flow_provider
from flow_xray.sdk.otlp_response import judge

TOKEN = "sk-live-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c"
PASSWORD = "hunter2-endpoint-pw"


def _partial(rejected: int, message: str) -> bytes:
    answer = ExportTraceServiceResponse()
    answer.partial_success.rejected_spans = rejected
    answer.partial_success.error_message = message
    return answer.SerializeToString()


@dataclass(frozen=True)
class Answer:
    """What the server sends back, and how many of 5 spans that loses."""

    status: int
    content_type: str | None
    body: bytes
    lost: int
    headers: tuple[tuple[str, str], ...] = ()


ANSWERS: dict[str, Answer] = {
    "200 with an HTML page": Answer(200, "text/html; charset=utf-8", b"<html>Sign in</html>", 5),
    "200 with plain text": Answer(200, "text/plain", b"OK", 5),
    "200 with bytes that do not parse": Answer(200, "application/x-protobuf", bytes(range(256)), 5),
    # Field 3 (length 3): parses, but as a field ExportTraceServiceResponse does not have.
    "200 with bytes that parse as unknown fields": Answer(
        200, "application/x-protobuf", b"\x1a\x03abc", 5
    ),
    "200 with JSON that is not OTLP": Answer(200, "application/json", b'["ok"]', 5),
    "307 redirect": Answer(
        307,
        None,
        b"",
        5,
        (("Location", f"https://user:{PASSWORD}@otlp.example:4318/v1/traces?token={TOKEN}"),),
    ),
    "308 redirect": Answer(308, None, b"", 5, (("Location", "/v2/traces"),)),
    "301 redirect": Answer(301, "text/html", b"<a href=/x>moved</a>", 5),
    "500": Answer(500, "text/plain", b"boom", 5),
    "400": Answer(400, None, b"", 5),
    "404": Answer(404, "text/html", b"<h1>Not Found</h1>", 5),
    "partial success, 2 rejected": Answer(
        200, "application/x-protobuf", _partial(2, "span too big\x1b[2J\u202e"), 2
    ),
    "partial success rejecting more than were sent": Answer(
        200, "application/x-protobuf", _partial(99, "all"), 5
    ),
    "partial success in JSON": Answer(
        200, "application/json", b'{"partialSuccess": {"rejectedSpans": "1"}}', 1
    ),
    "a warning only (rejected 0)": Answer(200, "application/x-protobuf", _partial(0, "slow"), 0),
    "200 with an empty body": Answer(200, "application/x-protobuf", b"", 0),
    "204 no content": Answer(204, None, b"", 0),
    "200 with an empty JSON answer": Answer(200, "application/json", b"{}", 0),
}


@dataclass
class Receiver:
    """A loopback HTTP server answering every POST with ``answer``; keeps what it got."""

    url: str
    answer: Answer = ANSWERS["200 with an empty body"]
    spans: list[str] = field(default_factory=list)


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    holder: list[Receiver] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # the http.server hook's name
            state = holder[0]
            body = self.rfile.read(int(self.headers["content-length"]))
            request = ExportTraceServiceRequest.FromString(body)
            state.spans += [
                span.name
                for resource in request.resource_spans
                for scope in resource.scope_spans
                for span in scope.spans
            ]
            answer = state.answer
            self.send_response(answer.status)
            if answer.content_type:
                self.send_header("Content-Type", answer.content_type)
            for name, value in answer.headers:
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(answer.body)))
            self.end_headers()
            self.wfile.write(answer.body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    holder.append(Receiver(f"http://127.0.0.1:{server.server_port}/v1/traces"))
    thread = threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    yield holder[0]
    server.shutdown()
    server.server_close()
    thread.join(5)


@pytest.fixture
def isolated(monkeypatch: pytest.MonkeyPatch, otel_globals: Callable[[], None]) -> Iterator[None]:
    for name in list(os.environ):
        if name.startswith("OTEL_"):
            monkeypatch.delenv(name)
    yield
    flow_provider.shutdown(timeout_s=2.0)


@trace
def step(i: int) -> int:
    return i


@pytest.mark.parametrize("case", sorted(ANSWERS))
def test_only_an_otlp_success_counts_as_delivered(
    receiver: Receiver, isolated: None, caplog: pytest.LogCaptureFixture, case: str
) -> None:
    """5 spans to a server giving ``case``: they arrive; exactly ``lost`` are reported lost,
    in one warning line that shows no credential."""
    receiver.answer = ANSWERS[case]
    endpoint = receiver.url.replace("http://", f"http://app:{PASSWORD}@")
    flow_provider.configure(
        endpoint=endpoint,
        protocol="http/protobuf",
        headers={"authorization": f"Bearer {TOKEN}"},
        export_timeout_s=3.0,
    )
    for i in range(5):
        step(i)
    with caplog.at_level(logging.WARNING, logger="flow_xray"):
        flow_provider.shutdown(timeout_s=3.0)
    assert receiver.spans == ["step"] * 5  # every request reached the server
    warnings = [r.getMessage() for r in caplog.records if "not exported" in r.getMessage()]
    lost = ANSWERS[case].lost
    if lost == 0:
        assert warnings == []
        return
    (warning,) = warnings
    counted = "1 span was" if lost == 1 else f"{lost} spans were"
    assert warning.startswith(f"flow-xray: {counted} not exported to http://app:"), warning
    assert TOKEN not in warning and PASSWORD not in warning, warning
    assert "\x1b" not in warning and "\u202e" not in warning
    assert "\n" not in warning and len(warning) < 500


def test_the_reasons_say_what_the_server_answered(
    receiver: Receiver, isolated: None, caplog: pytest.LogCaptureFixture
) -> None:
    """The warning names the status, the kind of body, the redirect's target (without its
    query or password), and a partial success's own message, escaped."""
    reasons = {}
    for case in ("200 with an HTML page", "307 redirect", "partial success, 2 rejected"):
        receiver.answer = ANSWERS[case]
        flow_provider.configure(endpoint=receiver.url, protocol="http/protobuf")
        for i in range(5):
            step(i)
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="flow_xray"):
            flow_provider.shutdown(timeout_s=3.0)
        (reasons[case],) = [r.getMessage() for r in caplog.records]
    assert (
        "the server answered 200 OK with a text/html body, not an OTLP response"
        in reasons["200 with an HTML page"]
    )
    assert (
        "the server answered 307 Temporary Redirect to "
        "https://user:[REDACTED:url-password]@otlp.example:4318/v1/traces; "
        "OTLP export does not follow redirects" in reasons["307 redirect"]
    )
    assert reasons["partial success, 2 rejected"].endswith(
        "the server rejected 2 of 5 spans: span too big\\x1b[2J\\u202e"
    )


def test_judge_reads_answers_as_the_otlp_specification_defines_them() -> None:
    """The rules on their own: 4xx/5xx are the SDK's; 2xx needs an OTLP body; 3xx is lost."""
    assert judge(503, None, b"", None) is None
    assert judge(200, None, b"", None).accepted  # type: ignore[union-attr]
    assert judge(200, "application/x-protobuf; charset=binary", _partial(3, ""), None) == (
        judge(200, None, _partial(3, ""), None)
    )
    verdict = judge(200, None, _partial(3, "too old"), None)
    assert verdict is not None and verdict.loss(10) == "the server rejected 3 of 10 spans: too old"
    assert not judge(302, None, b"", "ftp://[bad").accepted  # type: ignore[union-attr]


@pytest.mark.slow
def test_flow_xray_run_reports_lost_spans_in_one_line(receiver: Receiver, tmp_path: Path) -> None:
    """A real `flow-xray run` exporting to a server that answers with a login page: the
    script's status and trace are kept; one line counts the lost spans; no credential shows."""
    receiver.answer = ANSWERS["200 with an HTML page"]
    script = tmp_path / "job.py"
    script.write_text(
        "from flow_xray import trace\n\n@trace\ndef step(i):\n    return i\n\n"
        "for i in range(3):\n    step(i)\n",
        encoding="utf-8",
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    endpoint = receiver.url.replace("http://", f"http://app:{PASSWORD}@")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "flow_xray",
            "run",
            "--otlp-endpoint",
            endpoint,
            "--otlp-protocol",
            "http/protobuf",
            "--otlp-header",
            f"authorization=Bearer {TOKEN}",
            "--json",
            "t.json",
            str(script),
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert receiver.spans == ["step"] * 3
    lost = [line for line in done.stderr.splitlines() if "not exported" in line]
    assert len(lost) == 1 and lost[0].startswith("flow-xray: 3 spans were not exported"), (
        done.stderr
    )
    assert "text/html" in lost[0]
    assert TOKEN not in done.stderr and PASSWORD not in done.stderr
    assert (tmp_path / "t.json").is_file()
