"""Every string is writable: lone surrogates and huge ints never stop a trace being written."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from pathlib import Path

from opentelemetry import trace as trace_api
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from flow_xray import OtlpJsonFileExporter, TraceResult, trace
from flow_xray.render.payload import read_page
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
