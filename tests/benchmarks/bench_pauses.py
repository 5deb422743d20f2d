"""Pause benchmark: the slowest single call inside a 100k-call capture, next to the median.

Run: ``python tests/benchmarks/bench_pauses.py [--calls N] [--rounds N]``
(default 100,000 calls, 3 rounds).

Tracing's own work must not land in one user call: a capture that did its
bookkeeping in bursts would make whichever call was running pay for thousands
of others (the viewer would then show that call's caller as the one with the
most time of its own). Each call of a loop of ``--calls`` traced calls under
one root is timed on its own, in CPU time of the thread
(``time.thread_time_ns``: time the machine gives other processes does not
count, the garbage collector and everything tracing does on the thread do).
Each contestant runs in a fresh subprocess, the contestants in turn, rounds
interleaved:

- plain: the undecorated function (the timer's own cost);
- SDK: the bare OpenTelemetry SDK, ``start_as_current_span`` with the
  ``input.value`` / ``output.value`` attributes, ``SimpleSpanProcessor`` ->
  ``InMemorySpanExporter`` (every span kept, as a capture keeps every call);
- flow-xray: ``@trace`` inside ``trace.capture()``.

Each is run with the garbage collector on (as users run) and off (what is
left is the tracing's own work). Printed per contestant and round: the
median, 99.9th percentile and largest per-call time in microseconds, how far
the largest is above the median (target for flow-xray with the collector off:
no more than 1 ms, next to the SDK's figure in the same run), how many calls
are more than 1 ms above the median, and what closing the capture
took (flow-xray: ``__exit__``, building the tree).
"""

from __future__ import annotations

import argparse
import gc
import itertools
import json
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

from machine import run_json_child

TOOLS = ("plain", "SDK", "flow-xray")


def _loop(leaf: Callable[[int], int], calls: int) -> list[int]:
    """Call ``leaf`` ``calls`` times; each call's thread CPU time in ns."""
    clock = time.thread_time_ns
    times = [0] * calls
    for index in range(calls):
        started = clock()
        leaf(index)
        times[index] = clock() - started
    return times


def _plain(calls: int) -> tuple[list[int], float]:
    def leaf(item: int) -> int:
        return item * 2

    return _loop(leaf, calls), 0.0


def _sdk(calls: int) -> tuple[list[int], float]:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("bench")

    def leaf(item: int) -> int:
        with tracer.start_as_current_span("leaf") as span:
            span.set_attribute("input.value", json.dumps({"item": item}))
            result = item * 2
            span.set_attribute("output.value", json.dumps(result))
            return result

    with tracer.start_as_current_span("root"):
        times = _loop(leaf, calls)
    started = time.thread_time()
    spans = exporter.get_finished_spans()
    assert len(spans) == calls + 1, len(spans)
    return times, time.thread_time() - started


def _flow_xray(calls: int) -> tuple[list[int], float]:
    from flow_xray import trace

    @trace
    def leaf(item: int) -> int:
        return item * 2

    @trace
    def root() -> list[int]:
        return _loop(leaf, calls)

    with trace.capture():  # warm-up: loads the SDK side and the processor
        leaf(0)
    capture = trace.capture()
    result = capture.__enter__()
    times = root()
    started = time.thread_time()
    capture.__exit__(None, None, None)
    closed = time.thread_time() - started
    assert len(result) == calls + 1, len(result)
    return times, closed


def child(tool: str, calls: int, collector: bool) -> dict[str, Any]:
    run = {"plain": _plain, "SDK": _sdk, "flow-xray": _flow_xray}[tool]
    if not collector:
        gc.disable()
    times, closed = run(calls)
    ordered = sorted(times)
    median = statistics.median(ordered)
    return {
        "median_us": median / 1e3,
        "p999_us": ordered[int(len(ordered) * 0.999)] / 1e3,
        "max_us": ordered[-1] / 1e3,
        "over_1ms": sum(1 for t in times if t - median > 1e6),
        "close_s": closed,
    }


def run_child(tool: str, calls: int, collector: bool) -> dict[str, Any] | None:
    command = [sys.executable, __file__, "--child", tool, "--calls", str(calls)]
    if not collector:
        command.append("--gc-off")
    return run_json_child(command, tool)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--child", choices=TOOLS, help=argparse.SUPPRESS)
    parser.add_argument("--gc-off", action="store_true", help=argparse.SUPPRESS)
    options = parser.parse_args(argv)
    if options.child:
        print(json.dumps(child(options.child, options.calls, not options.gc_off)))
        return
    version = sys.version.split()[0]
    print(f"Python {version}; {options.calls:,} calls per capture, CPU time per call")
    print(
        f"{'round':>5} {'gc':<3} {'tool':<10} {'median us':>9} {'p99.9 us':>9} {'max us':>9} "
        f"{'max-median ms':>13} {'calls >1 ms':>11} {'close s':>8}",
        flush=True,
    )
    worst: dict[tuple[bool, str], list[float]] = {}
    for round_, collector, tool in itertools.product(
        range(1, options.rounds + 1), (True, False), TOOLS
    ):
        out = run_child(tool, options.calls, collector)
        if out is None:
            continue
        above = (out["max_us"] - out["median_us"]) / 1e3
        worst.setdefault((collector, tool), []).append(above)
        print(
            f"{round_:>5} {'on' if collector else 'off':<3} {tool:<10} "
            f"{out['median_us']:>9.2f} {out['p999_us']:>9.1f} "
            f"{out['max_us']:>9.1f} {above:>13.2f} {out['over_1ms']:>11} "
            f"{out['close_s']:>8.2f}",
            flush=True,
        )
    print("largest call above the median, median of rounds (flow-xray's own: target <= 1 ms):")
    for collector in (True, False):
        sdk, ours = worst.get((collector, "SDK")), worst.get((collector, "flow-xray"))
        if sdk and ours:
            mid_sdk, mid_ours = statistics.median(sdk), statistics.median(ours)
            print(
                f"  gc {'on ' if collector else 'off'}: SDK {mid_sdk:.2f} ms, flow-xray "
                f"{mid_ours:.2f} ms, flow-xray's own {mid_ours - mid_sdk:+.2f} ms"
            )


if __name__ == "__main__":
    main()
