"""The OTLP/JSON file's own encoder writes what the SDK's encoder and protobuf write.

`spans_to_otlp_json` builds the document directly; `official_otlp_json` is the
SDK's OTLP encoder (``encode_spans``) and protobuf's ``MessageToDict``, the
oracle here. Every comparison is of the JSON text the file exporter writes.
"""

from __future__ import annotations

import json
import math
from typing import Any

import hypothesis.strategies as st
from hypothesis import HealthCheck, given, settings
from opentelemetry import context as context_api, trace as trace_api
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan, SpanLimits, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import Link, SpanContext, SpanKind, Status, StatusCode, TraceFlags
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from flow_xray.sdk import otlp_json_export
from flow_xray.sdk.otlp_json_export import official_otlp_json, spans_to_otlp_json


def _text(document: dict[str, Any]) -> str:
    return json.dumps(document, separators=(",", ":"), allow_nan=True)


def _same(spans: list[ReadableSpan]) -> None:
    assert _text(spans_to_otlp_json(spans)) == _text(official_otlp_json(spans))


def _provider(**kwargs: Any) -> tuple[TracerProvider, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider(shutdown_on_exit=False, **kwargs)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider, exporter


EVERY_KIND_OF_VALUE = {
    "text": "x",
    "empty text": "",
    "unicode": "żółw 🐢",
    "true": True,
    "false": False,
    "zero": 0,
    "int": -5,
    "int64 max": 2**63 - 1,
    "int64 min": -(2**63),
    "float": 1.5,
    "float zero": 0.0,
    "negative zero": -0.0,
    "nan": math.nan,
    "infinity": math.inf,
    "minus infinity": -math.inf,
    "big float": 1e300,
    "ints": (1, 2, 3),
    "empty array": (),
    "texts": ("a", ""),
    "booleans": (True, False),
    "floats": (0.5, -0.0, math.nan),
}


def test_spans_of_every_shape_the_sdk_makes_are_written_alike() -> None:
    """Values of every kind, events, links (local and remote), each status and kind,
    a remote parent with a trace state, dropped counts, two scopes and two resources."""
    limits = SpanLimits(max_span_attributes=16, max_events=2, max_links=1)
    first, exporter = _provider(
        resource=Resource({"service.name": "a", "n": 3}, "https://schema/1"), span_limits=limits
    )
    second, other = _provider(resource=Resource({}))
    tracer = first.get_tracer("lib", "1.2", "https://schema/scope", {"scope.flag": True})
    carrier = {
        "traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
        "tracestate": "vendor=value,other=1",
    }
    remote = TraceContextTextMapPropagator().extract(carrier)
    remote_context = trace_api.get_current_span(remote).get_span_context()
    values = EVERY_KIND_OF_VALUE
    with tracer.start_as_current_span("root", context=remote, attributes=values) as root:
        for n in range(4):  # two past the limit: dropped
            root.add_event(f"e{n}", {"n": n, "tags": ("x",)})
        root.add_event("", {})
        root.set_status(Status(StatusCode.ERROR, "boom"))
        links = [Link(remote_context, {"why": "cause"}), Link(root.get_span_context())]
        for kind in SpanKind:
            with tracer.start_as_current_span(kind.name.lower(), kind=kind, links=links) as span:
                span.set_status(Status(StatusCode.OK))
        with first.get_tracer("").start_as_current_span(""):
            pass
    token = context_api.attach(context_api.Context())
    try:
        with second.get_tracer("elsewhere").start_as_current_span("alone"):
            pass
    finally:
        context_api.detach(token)
    spans = [*exporter.get_finished_spans(), *other.get_finished_spans()]
    document = spans_to_otlp_json(spans)
    assert len(document["resourceSpans"]) == 2
    for dropped in ("dropped_attributes", "dropped_events", "dropped_links"):
        assert any(getattr(s, dropped) for s in spans), dropped
    _same(spans)


def test_spans_built_by_hand_without_a_scope_or_an_end_are_written_alike() -> None:
    """A `ReadableSpan` made directly (as a span processor or a test may): no scope, no
    end time, no status description, a parent that is remote."""
    context = SpanContext(7, 9, False, TraceFlags(1))
    parent = SpanContext(7, 8, True, TraceFlags(1))
    spans = [
        ReadableSpan(name="bare", context=context),
        ReadableSpan(
            name="child",
            context=SpanContext(7, 10, False, TraceFlags(1)),
            parent=parent,
            events=[Event("tick", timestamp=0)],
            start_time=5,
        ),
        ReadableSpan(
            name="scoped",
            context=SpanContext(7, 11, False, TraceFlags(1)),
            instrumentation_scope=InstrumentationScope("s"),
            status=Status(StatusCode.UNSET),
        ),
    ]
    _same(spans)


def test_spans_of_equal_resources_and_scopes_are_grouped_as_the_sdk_groups_them() -> None:
    """Resources and scopes equal but not the same objects, spans of each interleaved: one
    group per equal resource, then per equal scope, in first-seen order, as officially."""
    first, again, other = (Resource({"service.name": n}) for n in ("a", "a", "b"))
    lib, lib_again, tool = (InstrumentationScope(*n) for n in (("x", "1"), ("x", "1"), ("y",)))
    pairs = [(first, lib), (other, tool), (again, lib_again), (first, tool), (other, lib_again)]
    pairs += [(again, None), (first, lib_again), (other, None)]
    spans = [
        ReadableSpan(
            name=f"s{i}",
            context=SpanContext(7, 100 + i, False, TraceFlags(1)),
            resource=resource,
            instrumentation_scope=scope,
        )
        for i, (resource, scope) in enumerate(pairs)
    ]
    document = spans_to_otlp_json(spans)
    assert [len(r["scopeSpans"]) for r in document["resourceSpans"]] == [3, 3]
    _same(spans)


class _MadeOnRead(ReadableSpan):
    """A span whose resource is a new object each time it is read (as a proxy's may be):
    the one read before is gone, and its id may come back for another."""

    @property
    def resource(self) -> Resource:
        return Resource({"service.name": self.name[:1]})


def test_resources_made_anew_on_each_read_are_grouped_by_what_they_hold() -> None:
    """Looked up by identity first, each resource is held while it is: one made anew on
    each read, and dropped, never lends its id to a different one."""
    spans = [
        _MadeOnRead(name=f"{side}{i}", context=SpanContext(7, 300 + i, False, TraceFlags(1)))
        for i, side in enumerate("aab" * 8)
    ]
    document = spans_to_otlp_json(spans)
    assert [len(r["scopeSpans"][0]["spans"]) for r in document["resourceSpans"]] == [16, 8]
    _same(spans)


def test_values_the_fast_path_leaves_alone_are_written_the_official_way(
    monkeypatch: Any,
) -> None:
    """Ints past 64 bits, bytes, nested arrays: the official encoder writes the batch."""
    official: list[int] = []
    real = otlp_json_export.official_otlp_json

    def counted(spans: Any) -> dict[str, Any]:
        official.append(len(spans))
        return real(spans)

    monkeypatch.setattr(otlp_json_export, "official_otlp_json", counted)
    context = SpanContext(7, 9, False, TraceFlags(1))
    for odd in (2**64, b"\x00\x01", ((1, 2),)):
        span = ReadableSpan(name="odd", context=context, attributes={"odd": odd, "fine": 1})
        assert _text(spans_to_otlp_json([span])) == _text(real([span]))
    assert official == [1, 1, 1]
    plain = ReadableSpan(name="plain", context=context, attributes={"fine": 1})
    spans_to_otlp_json([plain])
    assert official == [1, 1, 1]  # the direct path wrote it


SCALARS = st.one_of(
    st.text(max_size=8),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=True, allow_infinity=True),
)
VALUES = st.one_of(
    SCALARS,
    st.lists(st.text(max_size=4), max_size=3).map(tuple),
    st.lists(st.integers(min_value=-(2**63), max_value=2**63 - 1), max_size=3).map(tuple),
    st.lists(st.floats(), max_size=3).map(tuple),
    st.lists(st.booleans(), max_size=3).map(tuple),
)
ATTRIBUTES = st.dictionaries(st.text(min_size=1, max_size=6), VALUES, max_size=6)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    span_attributes=ATTRIBUTES,
    event_attributes=ATTRIBUTES,
    name=st.text(max_size=6),
    message=st.one_of(st.none(), st.text(max_size=6)),
)
def test_random_attributes_are_written_alike(
    span_attributes: dict[str, Any],
    event_attributes: dict[str, Any],
    name: str,
    message: str | None,
) -> None:
    """Any attributes of the SDK's kinds, on a span and on its event, any name and message."""
    provider, exporter = _provider()
    with provider.get_tracer("t").start_as_current_span(name, attributes=span_attributes) as span:
        span.add_event(name, event_attributes)
        span.set_status(Status(StatusCode.ERROR, message))
    _same(list(exporter.get_finished_spans()))
