"""Tracing-core benchmark: per-call cost side by side with the bare SDK and with peers.

Run: ``python tests/benchmarks/bench_trace.py [--rounds N] [--calls N] [--no-peers]
[--no-viztracer]``; the machine's load average is printed at the start and the end.

Every contestant runs the same function, for a small payload (``f(1, 2)``: two
ints in, a small dict holding them back), a 1 KB payload (a 1 KB string in, a dict holding
it back) and a 1 KB payload shaped like real tool and LLM arguments (a
512-character prompt and a dict of 20 short strings, such as ``"value-07"``,
in; a dict holding both back). Rounds interleave all contestants (the order
rotates each round), so machine noise hits them alike. A contestant's time in a
round is the fastest of ten batches, in CPU time of the process (all its
threads, so peers' background exporters count). Each contestant shows its best
time over the rounds and that as a ratio to the best time of the reference span
**B** (noise only ever adds time, so best times are the steadiest estimate),
then the per-round ratios to B measured in the same round: median [min-max]:

- **B**: the bare OpenTelemetry SDK span as SPEC section 7 defines it:
  ``start_as_current_span`` plus ``input.value`` / ``output.value`` attributes
  holding the ``repr()`` of the arguments and of the result,
  ``SimpleSpanProcessor`` -> ``InMemorySpanExporter``;
- **A**: the bare SDK writing every attribute ``@trace`` writes (kind, source,
  inputs and outputs with their mime types), exported the same way as B;
- **S**: the bare SDK doing the same work as a capture: the span carries every
  attribute ``@trace`` writes, is exported to the same sink and kept in memory
  (a second in-memory exporter) - the floor for ``@trace`` inside a capture
  (target <= 1.3x of it, SPEC section 7);
- ``@trace`` inside ``trace.capture()`` and outside any capture, both under the
  user's global SDK provider (the same kind of provider as B; target outside
  <= 1.1x B);
- ``@trace`` inside ``trace.capture()`` with no provider configured, where the
  local recorder records the calls (`flow_xray.sdk.local`; target <= 0.3x B for
  the small payload, <= 0.5x B for 1 KB), and the same with captures on SDK
  spans (what ``FLOW_XRAY_RECORDER=sdk`` does) beside it;
- peers' decorators, when installed: OpenLLMetry (``traceloop-sdk``
  ``@workflow``), OpenInference (``@tracer.chain``), Logfire
  (``@logfire.instrument``, ``send_to_logfire=False``), Langfuse (``@observe``,
  spans kept in memory, no network) and MLflow (``@mlflow.trace``, local store).
  Each exports to an in-memory exporter where the peer allows it;
- viztracer, when installed (its C tracer records every Python call while it
  runs; the contestant is the plain function called under a started tracer):
  without arguments (``VizTracer()``) and with them
  (``VizTracer(log_func_args=True, log_func_retval=True)``, which keeps the
  ``repr`` of each argument and of the result). ``--no-peers`` keeps it;
  ``--no-viztracer`` drops it.

It also prints the cost ``@trace`` adds when nothing collects spans (target
<= 1 us per call, SPEC section 7): no provider at all, before any capture and
after several have come and gone; and an SDK provider disabled by
``OTEL_SDK_DISABLED``. And what closing a capture costs per call it held: a
capture defers turning up to 4096 ended spans into compact rows to its close
(see `bench_close`), so that work is shown apart from the per-call figures.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import gc
import json
import logging
import os
import statistics
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator
from typing import Any

from machine import load_average
from opentelemetry import trace as trace_api
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.util._once import Once
from timing import best_per_call_us, print_table

from flow_xray import trace

# Peers must not reach the network: no telemetry pings, no real backends.
os.environ.setdefault("TRACELOOP_TELEMETRY", "false")
os.environ.setdefault("LANGFUSE_PUBLIC_KEY", "pk-lf-benchmark")
os.environ.setdefault("LANGFUSE_SECRET_KEY", "sk-lf-benchmark")
os.environ.setdefault("LANGFUSE_HOST", "http://127.0.0.1:9")
os.environ.setdefault("MLFLOW_TRACKING_URI", "file://" + tempfile.mkdtemp(prefix="mlruns-"))

TEXT_1K = ("The quick brown fox jumps over the lazy dog. " * 24)[:1024]
# The common shape of tool and LLM arguments: a prompt and a dict of short settings.
OPTIONS = {f"field-{i:02}": f"value-{i:02}" for i in range(20)}
PAYLOADS: dict[str, tuple[tuple[Any, ...], dict[str, Any]]] = {
    "small": ((1, 2), {}),  # f(1, 2)
    "1 KB": ((TEXT_1K, 5), {}),
    "1 KB str+dict": ((TEXT_1K[:512], OPTIONS), {}),
}


LOCAL = "flow-xray @trace, capture, no provider: local recorder"
LOCAL_TARGETS = {"small": 0.3, "1 KB": 0.5, "1 KB str+dict": 0.5}


def business(query: str, limit: Any = 5) -> dict[str, Any]:
    """The user's function: a small dict back, holding the query (1 KB for the big payloads)
    and ``limit`` (the dict of short strings for the argument-shaped payload)."""
    return {"query": query, "hits": limit}


def _reset_global_provider() -> None:
    # The API sets a global provider once per process; the benchmark needs several in turn.
    trace_api._TRACER_PROVIDER_SET_ONCE = Once()  # type: ignore[attr-defined]
    trace_api._TRACER_PROVIDER = None  # type: ignore[attr-defined]


def _memory_provider(*exporters: InMemorySpanExporter) -> TracerProvider:
    provider = TracerProvider()
    for exporter in exporters:
        provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider


class Contestant:
    """One way of running ``business`` traced, with what it needs around each round."""

    def __init__(
        self,
        name: str,
        make: Callable[[Callable[..., Any]], Callable[..., Any]],
        around: Callable[[], contextlib.AbstractContextManager[Any]] = contextlib.nullcontext,
        clear: Callable[[], None] = lambda: None,
    ) -> None:
        self.name = name
        self.fn = make(business)
        self.around = around
        self.clear = clear


def bare_span(tracer: trace_api.Tracer) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """B: a span with input.value/output.value attributes, the ``repr()`` of the arguments
    and of the result (SPEC section 7)."""

    def make(func: Callable[..., Any]) -> Callable[..., Any]:
        def call(query: str, limit: Any = 5) -> Any:
            with tracer.start_as_current_span("business") as span:
                span.set_attribute("input.value", repr({"query": query, "limit": limit}))
                result = func(query, limit)
                span.set_attribute("output.value", repr(result))
                return result

        return call

    return make


def same_work_span(tracer: trace_api.Tracer) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """The bare SDK writing every attribute ``@trace`` writes (kind, source, mime types)."""
    code = business.__code__
    static = {
        "openinference.span.kind": "CHAIN",
        "code.function.name": business.__qualname__,
        "code.file.path": os.path.relpath(code.co_filename),
        "code.line.number": code.co_firstlineno,
    }

    def make(func: Callable[..., Any]) -> Callable[..., Any]:
        def call(query: str, limit: Any = 5) -> Any:
            with tracer.start_as_current_span("business", attributes=static) as span:
                span.set_attribute("input.value", json.dumps({"query": query, "limit": limit}))
                span.set_attribute("input.mime_type", "application/json")
                result = func(query, limit)
                span.set_attribute("output.value", json.dumps(result))
                span.set_attribute("output.mime_type", "application/json")
                return result

        return call

    return make


@contextlib.contextmanager
def _no_provider(private: object) -> Iterator[None]:
    """A capture as it runs with no provider configured, on the given private provider.

    The global provider B's rounds need is set aside for the block (and the private
    provider swapped in), so both paths run in the same process as the rest.
    """
    from flow_xray.runtime import tracer as runtime_tracer

    saved, before = trace_api._TRACER_PROVIDER, runtime_tracer.private_provider()  # type: ignore[attr-defined]
    trace_api._TRACER_PROVIDER = None  # type: ignore[attr-defined]
    runtime_tracer.set_private_provider(private)
    try:
        with trace.capture():
            yield
    finally:
        runtime_tracer.set_private_provider(before)
        trace_api._TRACER_PROVIDER = saved  # type: ignore[attr-defined]


FLOOR = "floor: least a Python recorder does (no caps, no redaction)"


def _floor_encoder() -> Callable[[Any], str]:
    """Compact JSON text: orjson's where installed, else the standard library's."""
    try:
        import orjson
    except ImportError:
        return json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode
    dumps = orjson.dumps
    return lambda value: dumps(value).decode()  # type: ignore[no-any-return]


def floor_recorder() -> Contestant:
    """The least any recorder written in Python does per call, as a reference row: ids from
    ``random.getrandbits``, the call's span (the API's `NonRecordingSpan`) current in
    OpenTelemetry's context while it runs (so other instrumentations could nest under
    it), two clock reads, the arguments and the result as compact JSON (orjson's encoder
    where installed, as flow-xray encodes; else the standard library's C encoder, built
    once) and a tuple appended to a list. Nothing is capped, redacted, checked
    against limits or counted; no status, no source attributes. The local recorder's
    ratio to this row is what all of that costs."""
    import random

    from opentelemetry import context as context_api
    from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags

    encode = _floor_encoder()
    kept: list[tuple[Any, ...]] = []
    sampled = TraceFlags(TraceFlags.SAMPLED)

    def make(func: Callable[..., Any]) -> Callable[..., Any]:
        def call(query: str, limit: Any = 5) -> Any:
            parent = trace_api.get_current_span().get_span_context()
            trace_id = parent.trace_id if parent.is_valid else random.getrandbits(128)
            span_id = random.getrandbits(64)
            span = NonRecordingSpan(SpanContext(trace_id, span_id, False, sampled))
            token = context_api.attach(trace_api.set_span_in_context(span))
            start = time.time_ns()
            inputs = encode({"query": query, "limit": limit})
            try:
                result = func(query, limit)
            finally:
                context_api.detach(token)
            kept.append((trace_id, span_id, parent.span_id, start, time.time_ns(), inputs,
                         encode(result)))  # fmt: skip
            return result

        return call

    return Contestant(FLOOR, make, clear=kept.clear)


def private_providers() -> tuple[object, object]:
    """The two private providers a capture may use: the local recorder, and SDK spans."""
    from flow_xray.sdk.local import LocalProvider
    from flow_xray.sdk.processor import attach, get_processor

    sdk = TracerProvider()
    attach(sdk)
    return LocalProvider(get_processor()), sdk


def peers() -> tuple[list[Contestant], list[str]]:
    """The installed peers' decorators, each set up to keep spans in memory; and what is missing."""
    found: list[Contestant] = []
    missing: list[str] = []
    for label, setup in (
        ("OpenLLMetry @workflow", _openllmetry),
        ("OpenInference @tracer.chain", _openinference),
        ("Logfire @logfire.instrument", _logfire),
        ("Langfuse @observe", _langfuse),
        ("MLflow @mlflow.trace", _mlflow),
    ):
        try:
            found.append(setup(label))
        except ImportError as exc:
            missing.append(f"{label} (not installed: {exc.name})")
    return found, missing


def _openllmetry(label: str) -> Contestant:
    from traceloop.sdk import Traceloop
    from traceloop.sdk.decorators import workflow

    exporter = InMemorySpanExporter()
    Traceloop.init(app_name="bench", exporter=exporter, disable_batch=True, telemetry_enabled=False)
    return Contestant(label, workflow(name="business"), clear=exporter.clear)


def _openinference(label: str) -> Contestant:
    from openinference.instrumentation import OITracer, TraceConfig

    exporter = InMemorySpanExporter()
    tracer = OITracer(_memory_provider(exporter).get_tracer("bench"), config=TraceConfig())
    return Contestant(label, tracer.chain, clear=exporter.clear)


def _logfire(label: str) -> Contestant:
    import logfire

    exporter = InMemorySpanExporter()
    logfire.configure(
        send_to_logfire=False,
        console=False,
        service_name="bench",
        additional_span_processors=[SimpleSpanProcessor(exporter)],
    )
    return Contestant(label, logfire.instrument(), clear=exporter.clear)


def _langfuse(label: str) -> Contestant:
    from langfuse import Langfuse, observe

    exporter = InMemorySpanExporter()
    # Its own provider and batch processor, exporting into memory: no network.
    client = Langfuse(tracer_provider=TracerProvider(), span_exporter=exporter, flush_interval=3600)

    def clear() -> None:
        client.flush()
        exporter.clear()

    return Contestant(label, observe(), clear=clear)


def viztracers(calls: int) -> tuple[list[Contestant], list[str]]:
    """viztracer without and with arguments and results, or why it is missing."""
    try:
        from viztracer import VizTracer
    except ImportError as exc:
        return [], [f"viztracer (not installed: {exc.name})"]
    found = []
    for label, with_args in (("viztracer, no args", False), ("viztracer, with args", True)):
        tracer = VizTracer(
            tracer_entries=4 * calls + 10_000,  # a ring buffer: a round never wraps it
            ignore_c_function=True,
            log_func_args=with_args,
            log_func_retval=with_args,
            register_global=False,
            verbose=0,
        )
        found.append(
            Contestant(label, lambda func: func, functools.partial(_running, tracer), tracer.clear)
        )
    return found, []


@contextlib.contextmanager
def _running(tracer: Any) -> Iterator[None]:
    """viztracer recording every Python call made in the block."""
    tracer.start()
    try:
        yield
    finally:
        tracer.stop()


def _mlflow(label: str) -> Contestant:
    import mlflow

    logging.getLogger("mlflow").setLevel(logging.ERROR)
    return Contestant(label, mlflow.trace)


# --- the measurements -----------------------------------------------------------


def added_ns(traced: Callable[..., Any], rounds: int, calls: int) -> tuple[float, float, float]:
    """Per-call cost ``traced`` adds over the plain function: median, min, max in ns."""
    args, _ = PAYLOADS["small"]
    added = []
    for _ in range(rounds):
        plain = best_per_call_us(lambda: business(*args), calls)
        wrapped = best_per_call_us(lambda: traced(*args), calls)
        added.append((wrapped - plain) * 1000)
    return statistics.median(added), min(added), max(added)


def bench_untraced(rounds: int) -> list[tuple[str, str]]:
    """What ``@trace`` adds when nothing collects: no provider (before/after captures), disabled."""
    traced = trace(business)
    rows = []
    _reset_global_provider()
    rows.append(
        _ns_row("added, no provider, before any capture", added_ns(traced, rounds, 200_000))
    )
    for _ in range(5):
        with trace.capture():
            traced("warm", 1)
    rows.append(_ns_row("added, no provider, after 5 captures", added_ns(traced, rounds, 200_000)))
    os.environ["OTEL_SDK_DISABLED"] = "true"
    try:
        _reset_global_provider()
        trace_api.set_tracer_provider(TracerProvider())
        rows.append(_ns_row("added, OTEL_SDK_DISABLED=true", added_ns(traced, rounds, 200_000)))
    finally:
        del os.environ["OTEL_SDK_DISABLED"]
        _reset_global_provider()
    return rows


def _ns_row(label: str, figures: tuple[float, float, float]) -> tuple[str, str]:
    median, low, high = figures
    return f"{label} (target <= 1000 ns)", f"{median:.0f} ns  [{low:.0f}-{high:.0f}]"


def bench_ratios(
    rounds: int, calls: int, with_peers: bool = True, with_viztracer: bool = True
) -> tuple[list[tuple[str, str]], list[str]]:
    """Every contestant as a ratio to B, per payload, over interleaved rounds."""
    # First: some peers install a global provider of their own.
    contestants, missing = peers() if with_peers else ([], ["peers (--no-peers)"])
    if with_viztracer:
        tracers, absent = viztracers(calls)
        contestants += tracers
        missing += absent
    else:
        missing.append("viztracer (--no-viztracer)")

    export_b = InMemorySpanExporter()
    tracer_b = _memory_provider(export_b).get_tracer("bench")
    export_s, keep_s = InMemorySpanExporter(), InMemorySpanExporter()
    tracer_s = _memory_provider(export_s, keep_s).get_tracer("bench")
    export_user = InMemorySpanExporter()
    _reset_global_provider()
    trace_api.set_tracer_provider(_memory_provider(export_user))

    reference = Contestant("B: bare SDK span", bare_span(tracer_b), clear=export_b.clear)

    def clear_s() -> None:
        export_s.clear()
        keep_s.clear()

    export_a = InMemorySpanExporter()
    tracer_a = _memory_provider(export_a).get_tracer("bench")
    local_provider, sdk_private = private_providers()
    ours = [
        Contestant(
            "bare SDK, same attributes as @trace (A)",
            same_work_span(tracer_a),
            clear=export_a.clear,
        ),
        Contestant("bare SDK, same work as a capture (S)", same_work_span(tracer_s), clear=clear_s),
        Contestant(
            "flow-xray @trace, inside trace.capture()",
            trace,
            around=trace.capture,
            clear=export_user.clear,
        ),
        Contestant(
            "flow-xray @trace, outside, user's SDK provider", trace, clear=export_user.clear
        ),
        Contestant(LOCAL, trace, around=functools.partial(_no_provider, local_provider)),
        floor_recorder(),
        Contestant(
            "flow-xray @trace, capture, no provider, SDK spans",
            trace,
            around=functools.partial(_no_provider, sdk_private),
        ),
    ]
    field = [reference, *ours, *contestants]
    rows: list[tuple[str, str]] = []
    summary: dict[str, dict[str, float]] = {}
    for payload, (args, kwargs) in PAYLOADS.items():
        times: dict[str, list[float]] = {c.name: [] for c in field}
        for round_no in range(rounds):
            shift = round_no % len(field)
            for contestant in field[shift:] + field[:shift]:
                contestant.clear()
                gc.collect()
                with contestant.around():
                    call = functools.partial(contestant.fn, *args, **kwargs)
                    times[contestant.name].append(best_per_call_us(call, calls, batches=10))
        base = times[reference.name]
        summary[payload] = {}
        for contestant in field:
            mine = times[contestant.name]
            ratios = [t / b for t, b in zip(mine, base, strict=True)]
            best = min(mine) / min(base)
            summary[payload][contestant.name] = best
            rows.append(
                (
                    f"[{payload}] {contestant.name}",
                    f"{min(mine):7.2f} us  {best:5.2f}x B   rounds: "
                    f"{statistics.median(ratios):.2f}x"
                    f" [{min(ratios):.2f}-{max(ratios):.2f}]",
                )
            )
        for contestant in field:
            contestant.clear()
    rows += summary_rows(summary)
    return rows, missing


def summary_rows(summary: dict[str, dict[str, float]]) -> list[tuple[str, str]]:
    """The target ratios of each payload, from each contestant's best time as a ratio to B."""
    rows: list[tuple[str, str]] = []
    for payload, ratios in summary.items():
        inside = ratios["flow-xray @trace, inside trace.capture()"]
        same_work = ratios["bare SDK, same work as a capture (S)"]
        outside = ratios["flow-xray @trace, outside, user's SDK provider"]
        rows.append(
            (f"[{payload}] inside a capture / S (target <= 1.3)", f"{inside / same_work:.2f}x")
        )
        rows.append((f"[{payload}] outside / B (target <= 1.1)", f"{outside:.2f}x"))
        same_attributes = ratios["bare SDK, same attributes as @trace (A)"]
        rows.append(
            (f"[{payload}] outside / A (the same attributes)", f"{outside / same_attributes:.2f}x")
        )
        target = LOCAL_TARGETS.get(payload)
        rows.append(
            (
                f"[{payload}] local recorder / B (target <= {target or '-'})",
                f"{ratios[LOCAL]:.2f}x",
            )
        )
        rows.append(
            (
                f"[{payload}] floor / B; local recorder / floor",
                f"{ratios[FLOOR]:.2f}x; {ratios[LOCAL] / ratios[FLOOR]:.2f}x",
            )
        )
    return rows


def bench_close(rounds: int, sizes: tuple[int, ...] = (1000, 10_000)) -> list[tuple[str, str]]:
    """What closing a capture costs per call it holds: the work a capture defers.

    A capture keeps up to 4096 ended spans as they are (as an in-memory exporter
    does); past that it turns them into compact rows two per span end (see
    `flow_xray.sdk.processor`), and closing it compacts the rest and builds the
    tree. So the per-call figures above do not include that work for captures of
    up to 4096 calls (a bigger capture pays it a slice per call while it runs);
    this row does, measured as the time ``__exit__`` takes.
    """
    traced = trace(business)
    args, _ = PAYLOADS["small"]
    rows = []
    for size in sizes:
        times = []
        for _ in range(rounds):
            gc.collect()
            capture = trace.capture()
            capture.__enter__()
            for _ in range(size):
                traced(*args)
            started = time.process_time()
            capture.__exit__(None, None, None)
            times.append((time.process_time() - started) / size * 1e6)
        rows.append(
            (
                f"closing a capture of {size:,} calls, per call (compaction + tree)",
                f"{min(times):.2f} us  [median {statistics.median(times):.2f}]",
            )
        )
    return rows


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """Peers log set-up chatter and warnings; the table is what matters here."""
    logging.disable(logging.WARNING)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield
    logging.disable(logging.NOTSET)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15, help="interleaved rounds")
    parser.add_argument("--calls", type=int, default=2000, help="calls per contestant per round")
    parser.add_argument(
        "--no-peers", action="store_true", help="no peers' decorators (viztracer stays)"
    )
    parser.add_argument("--no-viztracer", action="store_true", help="no viztracer rows")
    options = parser.parse_args(argv)
    print(
        f"Python {sys.version.split()[0]}; median [min-max] over {options.rounds} rounds of "
        f"{options.calls} calls; load average at start: {load_average()}",
        flush=True,
    )
    with _quiet():
        rows = bench_untraced(min(options.rounds, 7))
        ratio_rows, missing = bench_ratios(
            options.rounds, options.calls, not options.no_peers, not options.no_viztracer
        )
        rows += bench_close(min(options.rounds, 5))
    print_table(rows + ratio_rows)
    for line in missing:
        print(f"skipped: {line}")
    print(f"load average at end: {load_average()}")


if __name__ == "__main__":
    main()
