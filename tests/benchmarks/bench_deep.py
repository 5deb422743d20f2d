"""Deep traces: a chain of N calls (each the parent of the next) and a ring (a corrupt cycle).

Run: ``python tests/benchmarks/bench_deep.py [SIZES...]`` (default 20000 100000).

For each shape and size it prints the CPU seconds (``time.process_time``, so
other processes on a shared machine do not count) of: building the tree from
span records, ``to_html``, ``to_dot``, ``to_json`` and reading that JSON back
with ``TraceResult.load``. Every step is iterative, so none of them depends on
the recursion limit; the ring is cut into a chain at its earliest span in one
O(n) pass. The row ``json.dumps(depth N)`` shows what the standard library does
with the same nesting: it raises `RecursionError`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

import machine  # noqa: F401  (imported first: this checkout's flow_xray, not an installed one)

from flow_xray.analysis.accounting import build_result
from flow_xray.tree.model import TraceResult
from flow_xray.tree.spans import SpanRecord

DEFAULT_SIZES = (20_000, 100_000)
TRACE_ID = "0" * 31 + "1"


def records(size: int, ring: bool) -> list[SpanRecord]:
    """``size`` spans, each the parent of the next; with ``ring`` the first's parent is the last."""
    out = []
    for i in range(size):
        parent = f"{i:016x}" if i else (f"{size:016x}" if ring else None)  # ids from 1
        out.append(
            SpanRecord(
                trace_id=TRACE_ID,
                span_id=f"{i + 1:016x}",
                parent_id=parent,
                name=f"step{i}",
                start_ns=1_000 + i,
                end_ns=2_000_000_000 + i,
                attributes={"input.value": f'{{"i": {i}}}', "input.mime_type": "application/json"},
            )
        )
    return out


def cpu(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.process_time()
    value = fn()
    return time.process_time() - start, value


def measure(size: int, ring: bool, folder: str) -> list[tuple[str, str]]:
    shape = "ring" if ring else "chain"
    spans = records(size, ring)
    build_s, result = cpu(lambda: build_result(spans))
    depth = max(_depths(result))
    html_s, page = cpu(result.to_html)
    dot_s, dot = cpu(result.to_dot)
    json_s, text = cpu(result.to_json)
    path = os.path.join(folder, f"{shape}{size}.json")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)
    load_s, loaded = cpu(lambda: TraceResult.load(path))
    assert len(loaded) == size and len(result.roots) == 1
    label = f"{shape} {size:,}"
    return [
        (f"{label}: build (depth {depth:,})", f"{build_s:.2f} s"),
        (f"{label}: to_html", f"{html_s:.2f} s ({len(page) / 1e6:.1f} MB)"),
        (f"{label}: to_dot", f"{dot_s:.2f} s ({len(dot) / 1e6:.1f} MB)"),
        (f"{label}: to_json", f"{json_s:.2f} s ({len(text) / 1e6:.1f} MB)"),
        (f"{label}: TraceResult.load", f"{load_s:.2f} s"),
    ]


def _depths(result: TraceResult) -> list[int]:
    stack = [(root, 1) for root in result.roots]
    depths = []
    while stack:
        node, depth = stack.pop()
        depths.append(depth)
        stack.extend((child, depth + 1) for child in node.children)
    return depths


def stdlib_row(size: int) -> tuple[str, str]:
    nested: list[Any] = []
    current = nested
    for _ in range(size):
        current.append([])
        current = current[0]
    try:
        json.dumps(nested)
        outcome = "ok"
    except RecursionError:
        outcome = "RecursionError"
    return (f"json.dumps(depth {size:,}), stdlib", outcome)


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("sizes", nargs="*", type=int, default=list(DEFAULT_SIZES))
    sizes = parser.parse_args(argv).sizes
    rows: list[tuple[str, str]] = []
    with tempfile.TemporaryDirectory() as folder:
        for size in sizes:
            rows.append(stdlib_row(size))
            for ring in (False, True):
                rows.extend(measure(size, ring, folder))
    width = max(len(name) for name, _ in rows)
    print(f"recursion limit {sys.getrecursionlimit()}; CPU seconds")
    for name, value in rows:
        print(f"{name.ljust(width)}  {value}")


if __name__ == "__main__":
    main(sys.argv[1:])
