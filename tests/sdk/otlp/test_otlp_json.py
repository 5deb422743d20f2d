"""OTLP/JSON lines: the file exporter writes the Collector's format and the reader reads it back."""

from __future__ import annotations

import json
from pathlib import Path

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import SpanContext, Status, StatusCode, TraceFlags

from flow_xray.formats.otlp_json import read_otlp_json
from flow_xray.sdk.otlp_json_export import OtlpJsonFileExporter
from flow_xray.sdk.rows import to_record
from flow_xray.tree.spans import EventRecord, SpanRecord

GOLDEN = Path(__file__).parent / "golden" / "collector_spans.jsonl"
TRACE_ID = 0x5B8EFFF798038103D269B633813FC60C
ROOT_ID = 0xEEE19B7EC3C1B174
CHILD_ID = 0x00F067AA0BA902B7
T0 = 1_700_000_000_000_000_000
SECOND = 1_000_000_000


# The root span's attributes, as the golden Collector line holds them.
ROOT_ATTRIBUTES = {
    "openinference.span.kind": "AGENT",
    "llm.token_count.prompt": 120,
    "llm.cost.total": 0.0015,
    "flow_xray.meta.cached": False,
    "tags": ("a", "b"),
    "sizes": (1, 2),
}


def _context(span_id: int) -> SpanContext:
    return SpanContext(TRACE_ID, span_id, is_remote=False, trace_flags=TraceFlags(1))


def golden_spans() -> list[ReadableSpan]:
    """Two fixed spans (ids, clocks, values) that the golden line describes."""
    resource = Resource({"service.name": "golden"})
    scope = InstrumentationScope("flow_xray", "0.3.0")
    root = ReadableSpan(
        name="agent",
        context=_context(ROOT_ID),
        resource=resource,
        instrumentation_scope=scope,
        attributes=ROOT_ATTRIBUTES,
        events=[Event("checkpoint", {"step": 3}, timestamp=T0 + SECOND)],
        status=Status(StatusCode.OK),
        start_time=T0,
        end_time=T0 + 2 * SECOND,
    )
    child = ReadableSpan(
        name="search",
        context=_context(CHILD_ID),
        parent=_context(ROOT_ID),
        resource=resource,
        instrumentation_scope=scope,
        attributes={"input.value": '{"query": "otlp"}'},
        events=[
            Event(
                "exception",
                {"exception.type": "TimeoutError", "exception.message": "too slow"},
                timestamp=T0 + 14 * SECOND // 10,
            )
        ],
        status=Status(StatusCode.ERROR, "TimeoutError: too slow"),
        start_time=T0 + SECOND // 2,
        end_time=T0 + 3 * SECOND // 2,
    )
    return [root, child]


def test_exporter_writes_the_collector_file_format(tmp_path: Path) -> None:
    """One line per batch, equal (as JSON) to a hand-written Collector file-exporter line."""
    path = tmp_path / "spans.jsonl"
    exporter = OtlpJsonFileExporter(path)
    exporter.export(golden_spans())
    exporter.shutdown()
    lines = path.read_text(encoding="utf-8").splitlines()
    assert [json.loads(line) for line in lines] == [json.loads(GOLDEN.read_text())]


def test_reader_turns_a_collector_line_into_span_records() -> None:
    """The golden Collector line reads back as plain records with typed attribute values."""
    records = read_otlp_json(GOLDEN)
    assert records == [
        SpanRecord(
            trace_id="5b8efff798038103d269b633813fc60c",
            span_id="eee19b7ec3c1b174",
            parent_id=None,
            name="agent",
            start_ns=T0,
            end_ns=T0 + 2 * SECOND,
            status="OK",
            status_message=None,
            attributes=ROOT_ATTRIBUTES,
            events=(EventRecord("checkpoint", T0 + SECOND, {"step": 3}),),
        ),
        SpanRecord(
            trace_id="5b8efff798038103d269b633813fc60c",
            span_id="00f067aa0ba902b7",
            parent_id="eee19b7ec3c1b174",
            name="search",
            start_ns=T0 + SECOND // 2,
            end_ns=T0 + 3 * SECOND // 2,
            status="ERROR",
            status_message="TimeoutError: too slow",
            attributes={"input.value": '{"query": "otlp"}'},
            events=(
                EventRecord(
                    "exception",
                    T0 + 14 * SECOND // 10,
                    {"exception.type": "TimeoutError", "exception.message": "too slow"},
                ),
            ),
        ),
    ]


def test_sdk_spans_round_trip_through_a_file(tmp_path: Path) -> None:
    """Spans from a real tracer, exported and read back, equal the processor's own records."""
    path = tmp_path / "roundtrip.jsonl"
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(OtlpJsonFileExporter(path)))
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tracer = provider.get_tracer("roundtrip")
    with tracer.start_as_current_span("pipeline", attributes={"n": 2, "ratio": 0.5}) as root:
        root.add_event("started", {"ok": True})
        with tracer.start_as_current_span("step", attributes={"labels": ["x", "y"]}):
            pass
        try:
            with tracer.start_as_current_span("fails"):
                raise KeyError("missing")
        except KeyError:
            pass
    provider.shutdown()
    expected = [to_record(span) for span in memory.get_finished_spans()]
    assert [r.name for r in expected] == ["step", "fails", "pipeline"]
    assert read_otlp_json(path) == expected


def test_exporter_truncates_unless_appending(tmp_path: Path) -> None:
    """A new exporter starts a fresh file; ``append=True`` keeps earlier lines."""
    path = tmp_path / "spans.jsonl"
    for append in (False, False, True):
        exporter = OtlpJsonFileExporter(path, append=append)
        exporter.export(golden_spans()[:1])
        exporter.shutdown()
    assert len(path.read_text(encoding="utf-8").splitlines()) == 2
