"""OTLP/JSON file benchmark: a hot loop under ``flow-xray run --otlp-json``, and the encoder.

Run: ``python tests/benchmarks/bench_json_file.py [--calls N]``. Prints:

- a script of N traced calls (stages of 99 leaf calls) run by ``flow-xray run
  --otlp-json`` in a fresh process: its CPU and wall time, the spans the file
  holds and what the run reported lost (the file should hold every span: once
  half its queue waits, the thread ending a span writes it), beside the same
  script run without export (the local recorder);
- the OTLP/JSON encoding per span of a batch of 2,048 real SDK spans: the direct
  encoder the file uses (`spans_to_otlp_json`) against the official path (the
  SDK's protobuf encoder and ``MessageToDict``, `official_otlp_json`), best of 5,
  and whether the two texts are equal.
"""

from __future__ import annotations

import argparse
import json
import re
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import machine
from opentelemetry import trace as trace_api
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from timing import print_table

from flow_xray import trace
from flow_xray.sdk.otlp_json_export import official_otlp_json, spans_to_otlp_json

SCRIPT = """
from flow_xray import trace

@trace
def leaf(i, k):
    return i * k

@trace
def stage(i):
    return sum(leaf(i, k) for k in range(99))

for s in range({stages}):
    stage(s)
"""


def run_script(calls: int, export: bool) -> dict[str, object]:
    """The script under ``flow-xray run`` in a fresh process (with ``--otlp-json`` or not)."""
    with tempfile.TemporaryDirectory() as folder:
        script = Path(folder) / "loop.py"
        script.write_text(SCRIPT.format(stages=max(calls // 100, 1)))
        out = Path(folder) / "spans.jsonl"
        command = [sys.executable, "-m", "flow_xray", "run", "--html", str(Path(folder) / "t.html")]
        if export:
            command += ["--otlp-json", str(out)]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        # (machine.py put this checkout on the children's PYTHONPATH)
        done = subprocess.run([*command, str(script)], capture_output=True, text=True, check=False)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        lost = re.search(r"(\d+) spans were not exported", done.stderr)
        spans = 0
        if export and out.exists():
            for line in out.read_text().splitlines():
                for resource_spans in json.loads(line)["resourceSpans"]:
                    spans += sum(len(s["spans"]) for s in resource_spans["scopeSpans"])
        return {
            "cpu": cpu,
            "wall": wall,
            "spans": spans,
            "lost": int(lost.group(1)) if lost else 0,
            "status": done.returncode,
        }


def encoder_rows() -> list[tuple[str, str]]:
    """Per-span cost of the two OTLP/JSON encoders on the same 2,048 SDK spans."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider(shutdown_on_exit=False)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace_api.set_tracer_provider(provider)

    @trace
    def leaf(i: int, k: int) -> int:
        return i * k

    for i in range(2048):
        leaf(i, 3)
    spans = exporter.get_finished_spans()
    rows = []
    texts = []
    for name, encode in (("direct", spans_to_otlp_json), ("official", official_otlp_json)):
        best = min(_timed(encode, spans) for _ in range(5))
        rows.append((f"OTLP/JSON document, {name}", f"{best / len(spans) * 1e6:.1f} us per span"))
        texts.append(json.dumps(encode(spans), separators=(",", ":")))
    rows.append(("the two texts are equal", str(texts[0] == texts[1])))
    return rows


def _timed(encode: Callable[[Sequence[ReadableSpan]], Any], spans: Sequence[ReadableSpan]) -> float:
    start = time.perf_counter()
    encode(spans)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200_000, help="traced calls in the script")
    args = parser.parse_args()
    print(f"Python {sys.version.split()[0]}; load average at start: {machine.load_average()}")
    rows: list[tuple[str, str]] = []
    for export in (False, True):
        got = run_script(args.calls, export)
        label = "--otlp-json" if export else "no export"
        figures = f"{got['cpu']:.1f} s CPU, {got['wall']:.1f} s wall, exit {got['status']}"
        if export:
            figures += f"; {got['spans']:,} spans in the file, {got['lost']:,} reported lost"
        rows.append((f"flow-xray run, {args.calls:,} calls, {label}", figures))
    rows += encoder_rows()
    print_table(rows)
    print(f"load average at end: {machine.load_average()}")


if __name__ == "__main__":
    main()
