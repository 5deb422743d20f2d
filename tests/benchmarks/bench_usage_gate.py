# Run: python tests/benchmarks/bench_usage_gate.py  (prints side-by-side medians of 5 runs)
"""Per-span cost of the usage gate: ExportPipeline's processor with the gate vs the same
processor with the gate bypassed (spans straight to the batch queue), in-memory exporter,
spans nested one level under an open root (the gate's worst ordinary case)."""

import statistics
import time

import machine  # noqa: F401  (imported first: this checkout's flow_xray, not an installed one)
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from flow_xray.sdk.otlp import ExportPipeline

N = 50_000
USAGE = {
    "llm.token_count.prompt": 12,
    "llm.token_count.completion": 7,
    "llm.model_name": "gpt-4o-mini",
}


class Bypass:
    def __init__(self, emit):
        self.emit = emit

    def started(self, span):
        pass

    def ended(self, span):
        self.emit(span)

    def release_all(self):
        pass


def run(gated, usage_every):
    pipeline = ExportPipeline(("b", "m"), InMemorySpanExporter(), max_queue_size=N + 10)
    if not gated:
        pipeline.processor.gate = Bypass(pipeline.processor._enqueue)
    provider = TracerProvider(shutdown_on_exit=False)
    provider.add_span_processor(pipeline.processor)
    tracer = provider.get_tracer("bench")
    t = time.perf_counter()
    with tracer.start_as_current_span("root"):
        for i in range(N):
            attrs = USAGE if usage_every and i % usage_every == 0 else None
            with tracer.start_as_current_span("call", attributes=attrs):
                pass
    elapsed = time.perf_counter() - t
    provider.shutdown()
    return elapsed / N * 1e6


for usage_every in (0, 10):
    pairs = [(run(False, usage_every), run(True, usage_every)) for _ in range(5)]
    b = statistics.median(p[0] for p in pairs)
    g = statistics.median(p[1] for p in pairs)
    label = "no span" if not usage_every else f"1 span in {usage_every}"
    print(
        f"usage on {label}: without gate {b:.1f} us/span, "
        f"with gate {g:.1f} us/span, ratio {g / b:.2f}"
    )
