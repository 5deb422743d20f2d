"""Scale benchmark: one trace of 10k / 100k / 1M calls, next to viztracer on the same workload.

Run: ``python tests/benchmarks/bench_scale.py [SIZES...] [--no-viztracer] [--no-html]``
(default sizes 10000 100000 1000000).

Times are CPU seconds of the process (``time.process_time``), so the load of
other processes on a shared machine does not count. Each figure comes from a
fresh subprocess, so peak memory (``ru_maxrss``) is
that run's alone. The workload is a pipeline of traced calls: one root, a
stage per 100 calls, 99 leaf calls per stage, each with two int arguments and
an int result. For flow-xray it prints:

- capture: the calls inside ``trace.capture()``, per call and in all;
- build: closing the capture, which turns the collected spans into the
  ``TraceResult`` tree (SPEC section 7: 100k in <= 0.3 s, 1M in <= 3 s);
- peak: the process's peak RSS after building, above its RSS after imports
  (target for 1M: <= 600 MB), and the same after ``to_html``;
- ``to_html``: time and page size (SPEC section 7: 100k calls <= 1.5 s, <= 12 MB).

viztracer (when installed) records the same calls without and with their
arguments (``log_func_args``); its "build" is ``save()`` writing its JSON file,
and the size is that file's.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from typing import Any

DEFAULT_SIZES = (10_000, 100_000, 1_000_000)
LEAVES = 99


def _rss_mb() -> float:
    """Peak resident memory of this process so far, in MB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _workload(wrap: Any) -> Any:
    """The root of the pipeline; ``wrap`` decorates each function (identity for no tracing)."""

    @wrap
    def leaf(stage: int, item: int) -> int:
        return stage * item

    @wrap
    def stage(index: int, width: int) -> int:
        total = 0
        for item in range(width):
            total += leaf(index, item)
        return total

    @wrap
    def pipeline(calls: int, width: int) -> int:
        total = 0
        for index in range(max((calls - 1) // (width + 1), 1)):
            total += stage(index, width)
        return total

    return pipeline


def _calls(size: int) -> int:
    return 1 + max((size - 1) // (LEAVES + 1), 1) * (LEAVES + 1)


def child_flow_xray(size: int, html: bool) -> dict[str, Any]:
    from flow_xray import trace

    pipeline = _workload(trace)
    with trace.capture():  # warm-up: loads the SDK side and the processor
        _workload(trace)(201, LEAVES)
    base = _rss_mb()
    started = time.process_time()
    with trace.capture() as result:
        pipeline(size, LEAVES)
        captured = time.process_time()
    built = time.process_time()
    peak = _rss_mb()
    nodes = len(result)
    out: dict[str, Any] = {
        "calls": nodes,
        "capture_s": captured - started,
        "build_s": built - captured,
        "peak_mb": peak - base,
    }
    if html:
        started = time.process_time()
        page = result.to_html()
        out["html_s"] = time.process_time() - started
        out["html_mb"] = len(page.encode("utf-8")) / 1e6
        out["peak_html_mb"] = _rss_mb() - base
    return out


def child_viztracer(size: int, with_args: bool) -> dict[str, Any]:
    from viztracer import VizTracer

    pipeline = _workload(lambda f: f)
    tracer = VizTracer(
        tracer_entries=2 * size + 10_000,
        ignore_c_function=True,
        log_func_args=with_args,
        verbose=0,
    )
    base = _rss_mb()
    started = time.process_time()
    tracer.start()
    pipeline(size, LEAVES)
    tracer.stop()
    captured = time.process_time()
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "viz.json")
        tracer.save(path, verbose=0)
        saved = time.process_time()
        file_mb = os.path.getsize(path) / 1e6
    return {
        "calls": _calls(size),
        "capture_s": captured - started,
        "build_s": saved - captured,
        "peak_mb": _rss_mb() - base,
        "html_mb": file_mb,
    }


def child_plain(size: int) -> dict[str, Any]:
    pipeline = _workload(lambda f: f)
    started = time.process_time()
    pipeline(size, LEAVES)
    return {"calls": _calls(size), "capture_s": time.process_time() - started}


def run_child(tool: str, size: int, html: bool) -> dict[str, Any] | None:
    command = [sys.executable, __file__, "--child", tool, str(size)]
    if not html:
        command.append("--no-html")
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        print(f"{tool} {size}: failed\n{done.stderr[-2000:]}", file=sys.stderr)
        return None
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def _fmt(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sizes", nargs="*", type=int, default=list(DEFAULT_SIZES))
    parser.add_argument("--no-viztracer", action="store_true", help="skip viztracer")
    parser.add_argument("--no-html", action="store_true", help="skip to_html")
    parser.add_argument("--child", nargs=2, metavar=("TOOL", "SIZE"), help=argparse.SUPPRESS)
    options = parser.parse_args(argv)
    if options.child:
        tool, size = options.child[0], int(options.child[1])
        if tool == "flow-xray":
            out = child_flow_xray(size, not options.no_html)
        elif tool == "plain":
            out = child_plain(size)
        else:
            out = child_viztracer(size, with_args=tool == "viztracer+args")
        print(json.dumps(out))
        return

    tools = ["plain", "flow-xray"]
    if not options.no_viztracer:
        try:
            import viztracer  # noqa: F401  (only checking that it is installed)

            tools += ["viztracer", "viztracer+args"]
        except ImportError:
            print("skipped: viztracer (not installed)")
    header = (
        f"{'calls':>9} {'tool':<15} {'capture s':>9} {'us/call':>8} {'build s':>8} "
        f"{'peak MB':>8} {'html s':>7} {'MB out':>7} {'peak+html MB':>12}"
    )
    print(f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs")
    print(header, flush=True)
    for size in options.sizes:
        for tool in tools:
            out = run_child(tool, size, not options.no_html)
            if out is None:
                continue
            calls = out["calls"]
            print(
                f"{calls:>9,} {tool:<15} {out['capture_s']:>9.2f} "
                f"{out['capture_s'] / calls * 1e6:>8.2f} {_fmt(out.get('build_s'), '8.2f')} "
                f"{_fmt(out.get('peak_mb'), '8.0f')} {_fmt(out.get('html_s'), '7.2f')} "
                f"{_fmt(out.get('html_mb'), '7.1f')} {_fmt(out.get('peak_html_mb'), '12.0f')}",
                flush=True,
            )
    print("build s: closing the capture into a tree (viztracer: save() of its JSON file);")
    print("peak MB: peak RSS above the RSS after imports; MB out: viewer page / viztracer file")


if __name__ == "__main__":
    main()
