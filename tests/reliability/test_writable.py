"""Every string is writable: lone surrogates and huge ints never stop a trace being written."""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Callable
from pathlib import Path

import pytest
from opentelemetry import trace as trace_api
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from flow_xray import OtlpJsonFileExporter, TraceResult, trace
from flow_xray.render.payload import read_page
from flow_xray.serialize.encode import MAX_KEY_CHARS
from flow_xray.serialize.text import writable, writable_data

BAD = "report-\udc80.csv"


def _strings(value: object) -> list[str]:
    """Every key and string in JSON-like data."""
    out: list[str] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, dict):
            out += [k for k in item if isinstance(k, str)]
            stack += item.values()
        elif isinstance(item, list):
            stack += item
    return out


def _all_encodable(result: TraceResult) -> bool:
    strings = _strings(result.to_dict())
    return all(s.encode("utf-8") is not None for s in strings)


def test_writable_escapes_lone_surrogates_only() -> None:
    """A lone surrogate becomes its visible escape; other text (emoji included) is kept."""
    assert writable(BAD) == "report-\\udc80.csv"
    assert writable("plain é 😀") == "plain é 😀"


def test_writable_data_reaches_keys_at_any_depth() -> None:
    """Keys and strings deep in nested data are escaped, without recursion limits."""
    deep: object = {"k\ud800": "v\udfff"}
    for _ in range(5000):
        deep = [deep]
    out = writable_data(deep)
    for _ in range(5000):
        out = out[0]
    assert out == {"k\\ud800": "v\\udfff"}


def test_surrogates_and_huge_ints_everywhere_still_give_html_and_json(tmp_path: Path) -> None:
    """Surrogates in arguments, keys, names, attributes=, annotate and errors; 10**5000 too."""

    @trace("step-\udc80", attributes={"file": BAD, "n": 10**5000, "l": [BAD]})
    def step(path: str, table: dict[str, str], n: int) -> str:
        trace.annotate(path=BAD, big=10**5000, nested={"k\udc80": BAD})
        raise ValueError(f"cannot open {path}")

    with trace.capture() as result, contextlib.suppress(ValueError):
        step(BAD, {"k\udc80": BAD}, 10**5000)
    assert _all_encodable(result)
    node = result.roots[0]
    assert node.name == "step-\\udc80"
    assert node.inputs["path"] == "report-\\udc80.csv"
    assert node.inputs["n"] == "<int bits=16610>"
    assert "\\udc80" in (node.error or "")
    result.save(tmp_path / "t.json")
    page = read_page(result.to_html(tmp_path / "t.html"))
    assert page["nodes"][0]["inputs"]["path"] == "report-\\udc80.csv"
    assert TraceResult.load(tmp_path / "t.json").roots[0].inputs["path"] == "report-\\udc80.csv"


def test_foreign_spans_with_surrogates_are_written_and_exported(
    tmp_path: Path, otel_globals: Callable[[], None]
) -> None:
    """Another instrumentation's span name, attributes, events with surrogates: every sink works."""
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(OtlpJsonFileExporter(tmp_path / "o.jsonl")))
    trace_api.set_tracer_provider(provider)
    tracer = provider.get_tracer("other.instrumentation")
    name, attrs = "GET /\udc80", {"k\udc80": BAD}
    with trace.capture() as result, tracer.start_as_current_span(name, attributes=attrs) as span:
        span.add_event("evt\ud800", {"a": [BAD]})
    provider.shutdown()
    result.save(tmp_path / "t.json")
    assert TraceResult.load(tmp_path / "t.json").roots[0].name == "GET /\\udc80"
    result.to_html(tmp_path / "t.html")
    page = read_page((tmp_path / "t.html").read_text(encoding="utf-8"))
    assert page["nodes"][0]["name"] == "GET /\udc80"  # the page's JSON escapes it
    line = json.loads((tmp_path / "o.jsonl").read_text(encoding="utf-8"))
    span_json = line["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    assert span_json["name"] == "GET /\\udc80"
    assert span_json["attributes"] == [
        {"key": "k\\udc80", "value": {"stringValue": "report-\\udc80.csv"}}
    ]
    loaded = TraceResult.load(tmp_path / "o.jsonl")
    assert loaded.roots[0].name == "GET /\\udc80"


def _own_provider_spans(run: Callable[[], object]) -> tuple[ReadableSpan, ...]:
    """Run ``run`` under a user's own SDK provider; the spans it finished."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace_api.set_tracer_provider(provider)
    run()
    provider.shutdown()
    return exporter.get_finished_spans()


def test_attribute_and_annotation_keys_reach_a_users_otlp_exporter_escaped(
    otel_globals: Callable[[], None], caplog: pytest.LogCaptureFixture
) -> None:
    """Surrogates in attributes= and annotate keys are escaped, so OTLP encodes every key."""

    @trace(attributes={"file-\udc80": 1})
    def step() -> None:
        trace.annotate(**{"note-\udc80": "x"})

    spans = _own_provider_spans(step)
    keys = set(spans[0].attributes or {})
    assert {"file-\\udc80", "flow_xray.meta.note-\\udc80"} <= keys
    with caplog.at_level(logging.ERROR):
        encoded = encode_spans(spans)  # what a user's OTLP exporter sends
    assert not caplog.records
    sent = {kv.key for kv in encoded.resource_spans[0].scope_spans[0].spans[0].attributes}
    assert keys == sent


def test_attribute_keys_are_capped_and_non_string_keys_converted(
    otel_globals: Callable[[], None],
) -> None:
    """A huge key is cut to MAX_KEY_CHARS with a marker; other key types become text, none lost."""

    class Key:
        def __repr__(self) -> str:
            raise RuntimeError("no repr")

    @trace(attributes={"k" * 1_000_000: 1, 7: 2, None: 3, Key(): 4})
    def step() -> None:
        trace.annotate(**{"m" * 1_000_000: 5})

    spans = _own_provider_spans(step)
    attributes = dict(spans[0].attributes or {})
    long_keys = [k for k in attributes if k.startswith(("kkk", "flow_xray.meta.mmm"))]
    assert len(long_keys) == 2
    assert all(k.endswith("…[truncated]") and len(k) < MAX_KEY_CHARS + 40 for k in long_keys)
    assert attributes["7"] == 2 and attributes["null"] == 3
    assert attributes["<Key object (repr failed: RuntimeError)>"] == 4


def test_foreign_ints_beyond_int64_are_exported_as_text(
    tmp_path: Path, otel_globals: Callable[[], None], caplog: pytest.LogCaptureFixture
) -> None:
    """Another instrumentation's 2**70 or 10**5000 attribute reaches the OTLP JSON file as text."""
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(OtlpJsonFileExporter(tmp_path / "o.jsonl")))
    tracer = provider.get_tracer("other.instrumentation")
    attributes = {"big": 2**70, "huge": 10**5000, "mixed": [1, -(2**64)], "small": 5}
    with caplog.at_level(logging.ERROR), tracer.start_as_current_span("s", attributes=attributes):
        trace_api.get_current_span().add_event("e", {"b": 2**64})
    provider.shutdown()
    assert not caplog.records
    line = json.loads((tmp_path / "o.jsonl").read_text(encoding="utf-8"))
    span = line["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    values = {a["key"]: a["value"] for a in span["attributes"]}
    assert values["big"] == {"stringValue": str(2**70)}
    assert values["huge"] == {"stringValue": "<int bits=16610>"}
    assert values["mixed"] == {
        "arrayValue": {"values": [{"stringValue": "1"}, {"stringValue": str(-(2**64))}]}
    }
    assert values["small"] == {"intValue": "5"}
    assert span["events"][0]["attributes"] == [{"key": "b", "value": {"stringValue": str(2**64)}}]


class _NoRepr:
    def __repr__(self) -> str:
        raise RuntimeError("no repr")


def test_usage_with_hostile_values_drops_them_with_readable_warnings(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """trace.usage(model=<no repr>, tokens=10**5000, cost=10**400): warnings that format, no loss.

    The valid fields still reach the span; each bad one is one warning naming it.
    """

    @trace
    def step() -> None:
        trace.usage(model=_NoRepr(), input_tokens=10**5000, output_tokens=3, cost_usd=10**400)

    with caplog.at_level(logging.DEBUG, logger="flow_xray"), trace.capture() as result:
        step()
    messages = [r.getMessage() for r in caplog.records]  # each one formats
    assert messages == [
        "flow_xray: ignoring cost_usd=<int bits=1329> (expected a number >= 0)",
        "flow_xray: ignoring model=<_NoRepr object (repr failed: RuntimeError)> "
        "(expected a non-empty str)",
        "flow_xray: ignoring input_tokens=<int bits=16610> (expected an int >= 0)",
    ]
    assert result.roots[0].meta["completion_tokens"] == 3


def test_a_span_kind_with_a_surrogate_is_written_escaped(otel_globals: Callable[[], None]) -> None:
    """@trace(kind="tool\\udc80") records the kind escaped, so every exporter encodes it."""

    @trace(kind="tool\udc80")
    def step() -> None:
        pass

    spans = _own_provider_spans(step)
    assert (spans[0].attributes or {})["openinference.span.kind"] == "TOOL\\UDC80"


def test_a_foreign_span_with_a_huge_int_attribute_saves(
    tmp_path: Path, otel_globals: Callable[[], None]
) -> None:
    """Another instrumentation's 10**5000 attributes (on the span, in an array, on an event)
    do not stop save() or to_html(): they are kept as text."""
    provider = TracerProvider()
    trace_api.set_tracer_provider(provider)
    tracer = provider.get_tracer("other.instrumentation")
    huge = {"n": 10**5000, "ids": (1, 2**70)}
    with trace.capture() as result, tracer.start_as_current_span("s", attributes=huge) as span:
        span.add_event("e", {"n": -(10**5000)})
    result.save(tmp_path / "t.json")
    result.to_html(tmp_path / "t.html")
    node = TraceResult.load(tmp_path / "t.json").roots[0]
    assert node.attributes["n"] == "<int bits=16610>"
    assert node.attributes["ids"] == ["1", str(2**70)]
    assert node.events[0]["attributes"]["n"] == "<int bits=16610>"


def test_every_span_of_a_resource_holding_a_lone_surrogate_is_escaped() -> None:
    """The resource is judged once per batch, and that verdict holds for each of its spans:
    all the spans of the resource with a lone surrogate are escaped (their resource's text
    made writable), the spans of a clean resource come back as they are."""
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.trace import SpanContext, TraceFlags

    from flow_xray.sdk.span_text import exportable_spans

    odd, clean = Resource({"host.name": "box-\udc80"}), Resource({"host.name": "box"})
    spans = [
        ReadableSpan(name=f"s{i}", context=SpanContext(5, 10 + i, False, TraceFlags(1)), resource=r)
        for i, r in enumerate([odd, clean, odd, clean, odd])
    ]
    out = exportable_spans(spans)
    assert [ready is span for ready, span in zip(out, spans, strict=True)] == [
        False, True, False, True, False
    ]  # fmt: skip
    assert {dict(s.resource.attributes)["host.name"] for s in out} == {"box-\\udc80", "box"}


def test_a_resource_made_anew_on_each_read_is_judged_each_time() -> None:
    """A span class whose resource is a new object on each read (the one before gone, its
    id free for the next): the batch's verdicts by identity never lend one resource's
    verdict to another."""
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.trace import SpanContext, TraceFlags

    from flow_xray.sdk.span_text import exportable_spans

    class MadeOnRead(ReadableSpan):
        @property
        def resource(self) -> Resource:
            return Resource({"host.name": "box-\udc80" if self.name[:1] == "b" else "box"})

    spans = [
        MadeOnRead(name=f"{side}{i}", context=SpanContext(5, 40 + i, False, TraceFlags(1)))
        for i, side in enumerate("abab" * 8)
    ]
    out = exportable_spans(spans)
    assert [ready is not span for ready, span in zip(out, spans, strict=True)] == [
        span.name[:1] == "b" for span in spans
    ]
