"""OTLP export benchmark against a real backend (Arize Phoenix on loopback), one process.

Run: ``python tests/benchmarks/bench_export.py`` (Phoenix from
``FLOW_XRAY_PHOENIX_PYTHON``; it takes 10-60 s to start). Prints:

- export throughput: spans per second created and exported through flow-xray's
  batch pipeline (bounded queue, loss counting) to Phoenix over gRPC and over
  HTTP/protobuf, with the number of spans the backend did not accept;
- the per-call cost of a ``@trace`` call with export off and on (gRPC, HTTP),
  measured in interleaved rounds in this process; "on" includes the export
  thread competing for the GIL, and spans dropped because the calls outran the
  exporter (a full queue drops, it never blocks the caller).
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import machine  # noqa: F401  (imported first: this checkout's flow_xray, not an installed one)
from opentelemetry.context import Context
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor, TracerProvider
from timing import per_call_us, print_table

from flow_xray import trace
from flow_xray.sdk.otlp import ExportPipeline, build_exporter, close_all
from flow_xray.sdk.otlp_target import resolve_target
from flow_xray.sdk.provider import configure
from tests.sdk.otlp.phoenix_server import Phoenix, PhoenixMissing, phoenix_python, start_phoenix

THROUGHPUT_SPANS = 6_000
CHUNK = 2_000  # below the default queue size (2,048): measures export, not drops
CALLS_PER_ROUND = 5_000
ROUNDS = 3
INPUT = '{"query": "benchmark", "limit": 5}'


def pipeline_for(endpoint: str, protocol: str) -> ExportPipeline:
    target = resolve_target(endpoint, protocol, None)
    if target is None:
        raise SystemExit(f"no OTLP target for {endpoint}")
    return ExportPipeline((target.protocol, target.endpoint), build_exporter(target, 10.0))


def bench_throughput(endpoint: str, protocol: str, spans: int) -> tuple[float, int]:
    """Spans/s for creating and exporting ``spans`` spans, and how many were lost."""
    pipeline = pipeline_for(endpoint, protocol)
    resource = Resource.create({"openinference.project.name": f"bench-{protocol[:4]}"})
    provider = TracerProvider(resource=resource, shutdown_on_exit=False)
    provider.add_span_processor(pipeline.processor)
    tracer = provider.get_tracer("bench")
    start = time.perf_counter()
    for _ in range(spans // CHUNK):
        for _ in range(CHUNK):
            with tracer.start_as_current_span("step") as span:
                span.set_attribute("input.value", INPUT)
        pipeline.processor.force_flush()
    elapsed = time.perf_counter() - start
    lost = close_all([pipeline], 10.0, 1.0)
    return spans / elapsed, lost


class Toggle(SpanProcessor):
    """Forward ended spans to ``inner`` only while enabled (same cost shape on and off)."""

    def __init__(self, inner: SpanProcessor) -> None:
        self.inner = inner
        self.enabled = False

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        """Batch processors do nothing on start."""

    def on_end(self, span: ReadableSpan) -> None:
        if self.enabled:
            self.inner.on_end(span)


@trace(kind="tool")
def business(query: str, limit: int = 5) -> dict[str, Any]:
    return {"query": query, "hits": limit}


def bench_call_cost(phoenix: Phoenix) -> list[tuple[str, str]]:
    """Median µs per @trace call with export off, on to gRPC, on to HTTP (interleaved rounds)."""
    provider = configure(service_name="bench", resource_attributes={"env": "bench"})
    pipelines = {
        "grpc": pipeline_for(phoenix.grpc_url, "grpc"),
        "http/protobuf": pipeline_for(phoenix.http_url, "http/protobuf"),
    }
    toggles = {name: Toggle(p.processor) for name, p in pipelines.items()}
    for toggle in toggles.values():
        provider.add_span_processor(toggle)
    samples: dict[str, list[float]] = {"off": [], **{name: [] for name in toggles}}

    def call() -> Any:
        return business("benchmark", limit=5)

    per_call_us(call, 2_000)  # warm-up
    for _ in range(ROUNDS):
        for mode in samples:
            for name, toggle in toggles.items():
                toggle.enabled = name == mode
            samples[mode].append(per_call_us(call, CALLS_PER_ROUND))
            for toggle in toggles.values():
                toggle.enabled = False
            if mode in pipelines:
                pipelines[mode].processor.force_flush()
    off = statistics.median(samples["off"])
    rows = [("@trace call, export off", f"{off:.1f} µs")]
    for name in pipelines:
        on = statistics.median(samples[name])
        rows.append((f"@trace call, export on ({name})", f"{on:.1f} µs  ({on / off:.2f}x off)"))
    lost = close_all(list(pipelines.values()), 10.0, 1.0)
    offered = ROUNDS * CALLS_PER_ROUND * len(pipelines)
    rows.append(("spans dropped while export on", f"{lost} of {offered}"))
    return rows


def main() -> None:
    rows: list[tuple[str, str]] = []
    try:
        with start_phoenix(phoenix_python()) as phoenix:
            targets = (("grpc", phoenix.grpc_url), ("http/protobuf", phoenix.http_url))
            for protocol, endpoint in targets:  # warm-up: Phoenix is slow on its first spans
                bench_throughput(endpoint, protocol, CHUNK)
            for protocol, endpoint in targets:
                rate, lost = bench_throughput(endpoint, protocol, THROUGHPUT_SPANS)
                rows.append(
                    (f"export throughput ({protocol})", f"{rate:,.0f} spans/s  lost {lost}")
                )
            rows.extend(bench_call_cost(phoenix))
    except PhoenixMissing as missing:
        raise SystemExit(f"skipped: {missing}") from None
    print_table(rows)


if __name__ == "__main__":
    main()
