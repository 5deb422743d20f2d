"""Export pipelines: loss accounting, one warning instead of a flood, bounded shutdown."""

from __future__ import annotations

import logging
import socket
import threading
from collections.abc import Iterator, Sequence

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from flow_xray.sdk.otlp import ExportPipeline, build_exporter, close_all
from flow_xray.sdk.otlp_target import OtlpTarget


class GateExporter(SpanExporter):
    """Holds every export until ``gate`` opens; then accepts and counts the spans."""

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.received = 0

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        self.gate.wait(10)
        self.received += len(spans)
        return SpanExportResult.SUCCESS


class FailingExporter(SpanExporter):
    """Raises on every export, as a buggy third-party exporter might."""

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        raise RuntimeError("exporter bug")


def _emit(provider: TracerProvider, count: int) -> None:
    tracer = provider.get_tracer("test")
    for _ in range(count):
        with tracer.start_as_current_span("s"):
            pass


def test_full_queue_gives_one_warning_and_exact_loss_count(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Spans dropped by a full queue: one warning while running, their exact count at close."""
    gate = GateExporter()
    pipeline = ExportPipeline(("test", "gate"), gate, max_queue_size=512)
    provider = TracerProvider(shutdown_on_exit=False)
    provider.add_span_processor(pipeline.processor)
    with caplog.at_level(logging.WARNING):
        _emit(provider, 1200)
        gate.gate.set()
        lost = close_all([pipeline], 10.0, 1.0)
    messages = [(r.name, r.getMessage()) for r in caplog.records]
    assert lost == 1200 - gate.received > 0
    assert messages == [
        (
            "flow_xray",
            "flow-xray: export queue for gate is full, dropping spans (total reported at exit)",
        ),
        ("flow_xray", f"flow-xray: {lost} spans were not exported to gate (test)"),
    ]


def test_exporter_exceptions_are_contained_and_counted(caplog: pytest.LogCaptureFixture) -> None:
    """An exporter that raises loses its spans, reports the error, and never raises itself."""
    pipeline = ExportPipeline(("test", "broken"), FailingExporter())
    provider = TracerProvider(shutdown_on_exit=False)
    provider.add_span_processor(pipeline.processor)
    _emit(provider, 2)
    with caplog.at_level(logging.WARNING):
        assert close_all([pipeline], 5.0, 1.0) == 2
    assert [r.getMessage() for r in caplog.records] == [
        "flow-xray: 2 spans were not exported to broken (test): RuntimeError: exporter bug"
    ]


def test_a_complete_pipeline_stops_waiting_for_a_destination_that_takes_nothing() -> None:
    """``complete`` makes the ending thread export once half the queue waits; a destination
    refusing everything is tried once that way, then spans are dropped and counted as usual."""
    pipeline = ExportPipeline(("test", "broken"), FailingExporter(), 512, complete=True)
    provider = TracerProvider(shutdown_on_exit=False)
    provider.add_span_processor(pipeline.processor)
    _emit(provider, 3000)
    assert pipeline.processor.catch_up_at == 0
    assert close_all([pipeline], 5.0, 1.0) == 3000


class SpanInExport(SpanExporter):
    """Ends a span of its own provider inside its first exports (a library traced while it
    writes), and counts the spans it is given."""

    def __init__(self, provider: TracerProvider) -> None:
        self.provider = provider
        self.calls = 0
        self.received = 0

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        self.calls += 1
        if self.calls <= 3:
            with self.provider.get_tracer("inside").start_as_current_span("during export"):
                pass
        self.received += len(spans)
        return SpanExportResult.SUCCESS


def test_a_span_ended_inside_an_export_does_not_wait_for_that_export() -> None:
    """A span ended while a complete pipeline exports (on the exporting thread, which holds
    the queue's lock) is queued, not exported again from there: no deadlock."""
    provider = TracerProvider(shutdown_on_exit=False)
    exporter = SpanInExport(provider)
    pipeline = ExportPipeline(("test", "inside"), exporter, 512, complete=True)
    provider.add_span_processor(pipeline.processor)
    lost: list[int] = []

    def work() -> None:
        _emit(provider, 3000)
        lost.append(close_all([pipeline], 5.0, 1.0))

    worker = threading.Thread(target=work, daemon=True)
    worker.start()
    worker.join(30)
    assert not worker.is_alive(), "the export waited for itself"
    assert lost == [0] and exporter.received == 3003


@pytest.fixture
def silent_server() -> Iterator[int]:
    """A loopback TCP port that accepts connections and never answers (a hung backend)."""
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                accepted.append(server.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    thread.join(2)
    for connection in accepted:
        connection.close()
    server.close()


@pytest.mark.slow
@pytest.mark.parametrize("protocol", ["grpc", "http/protobuf"])
def test_hung_backend_spans_are_reported_lost_after_a_bounded_close(
    silent_server: int, protocol: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A backend that never answers: close gives up on its budget and counts every span lost."""
    path = "" if protocol == "grpc" else "/v1/traces"
    target = OtlpTarget(protocol, f"http://127.0.0.1:{silent_server}{path}")
    pipeline = ExportPipeline((protocol, target.endpoint), build_exporter(target, 1.0))
    provider = TracerProvider(shutdown_on_exit=False)
    provider.add_span_processor(pipeline.processor)
    _emit(provider, 3)
    with caplog.at_level(logging.WARNING):
        lost = close_all([pipeline], 0.5, 0.5)
    assert lost == 3
    (warning,) = [r.getMessage() for r in caplog.records]
    assert warning.startswith(f"flow-xray: 3 spans were not exported to {target.endpoint}")
