"""A script that sets up its own OpenTelemetry, as many services do."""

from opentelemetry import trace as otel
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from flow_xray import trace

exporter = InMemorySpanExporter()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(exporter))
otel.set_tracer_provider(provider)


@trace
def handle(request: str) -> str:
    with otel.get_tracer("app.db").start_as_current_span("SELECT users"):
        return request.upper()


if __name__ == "__main__":
    handle("a")
    handle("b")
    names = sorted(span.name for span in exporter.get_finished_spans())
    print("own exporter got:", ", ".join(names))
