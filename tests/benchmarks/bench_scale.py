"""Scale benchmark: one trace of 10k / 100k / 1M calls, next to the bare SDK and viztracer.

Run: ``python tests/benchmarks/bench_scale.py [--sizes N ...] [--shape pipeline|flat]
[--no-viztracer] [--no-html]`` (default sizes 10000 100000 1000000; ``--sizes 10000 100000``
skips the million, which takes several minutes).

Times are CPU seconds of the process (``time.process_time``), so the load of
other processes on a shared machine does not count; the machine's load average
is printed at the start and the end of the run. Each contestant runs each size
in a fresh subprocess, so peak memory is that run's alone. The workload
(``--shape``) is one of:

- ``pipeline`` (the default): one root, a stage per 100 calls, 99 leaf calls
  per stage, each with two int arguments and an int result;
- ``flat``: a script's top-level loop, untraced, calling one traced function
  (two int arguments, an int result) once per call: a trace of that many
  roots, the shape whose accounting and page differ most from the pipeline's.

The first table is recording the calls:

- capture: the calls, per call and in all (flow-xray: inside ``trace.capture()``);
- build: closing the capture, which turns the collected spans into the
  ``TraceResult`` tree (SPEC section 7: 100k in <= 0.3 s, 1M in <= 3 s);
  viztracer: ``save()`` of its JSON file;
- peak: the process's peak RSS after building, above its RSS after imports
  (target for 1M: <= 600 MB), and the same after ``to_html``;
- full GCs: the generation-2 garbage collections the process ran while
  recording (and building), each a walk over every live object;
- ``to_html``: time and page size (SPEC section 7: 100k calls <= 1.5 s, <= 12 MB).

Contestants: the plain functions; flow-xray; the bare OpenTelemetry SDK keeping
the same spans (a ``TracerProvider`` with ``SimpleSpanProcessor`` ->
``InMemorySpanExporter``, every attribute ``@trace`` writes: kind, source,
inputs and outputs as JSON with their mime types); viztracer (when installed)
without and with the calls' arguments and return values.

The second table is files, in both forms ``save()`` writes: the JSON envelope
(``save("trace.json")``) and the compact file (``save("trace.fxr")``). For each:
``save()`` of the trace (time, size, bytes per call, peak RSS of the process while
saving: the high-water mark is reset just before), ``TraceResult.load`` of that file
in a fresh process (time and that process's peak RSS) and ``flow-xray view`` of it as
a real subprocess (CPU and wall time, peak RSS of that process, interpreter start
included). viztracer's rows show its ``save()`` the same way.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

from machine import (
    full_collections,
    load_average,
    peak_rss_mb,
    reset_peak_rss,
    run_json_child,
    run_measured,
    window_peak_rss_mb,
)

DEFAULT_SIZES = (10_000, 100_000, 1_000_000)
LEAVES = 99


SHAPES = ("pipeline", "flat")
_shape = SHAPES[0]  # the workload of this run (`--shape`), passed on to each child


def _workload(wrap: Any) -> Any:
    """The workload's entry, ``(calls, width) -> int``; ``wrap`` decorates each traced function
    (identity for no tracing)."""
    return _flat(wrap) if _shape == "flat" else _pipeline(wrap)


def _flat(wrap: Any) -> Any:
    """A top-level loop: every call of ``leaf`` is a root of its own."""

    @wrap
    def leaf(index: int, item: int) -> int:
        return index * item

    def loop(calls: int, width: int) -> int:  # (not traced, as a script's own loop)
        total = 0
        for index in range(calls):
            total += leaf(index, width)
        return total

    return loop


def _pipeline(wrap: Any) -> Any:
    """The root of the pipeline."""

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
    if _shape == "flat":
        return size
    return 1 + max((size - 1) // (LEAVES + 1), 1) * (LEAVES + 1)


def _saved(save: Callable[[], object], path: str, calls: int) -> dict[str, Any]:
    """Time, size and peak RSS (whole process) of ``save`` writing ``path``."""
    reset = reset_peak_rss()
    started = time.process_time()
    save()
    out: dict[str, Any] = {"save_s": time.process_time() - started}
    out["save_mb"] = os.path.getsize(path) / 1e6
    out["save_b_per_call"] = os.path.getsize(path) / calls
    out["save_peak_mb"] = window_peak_rss_mb() if reset else None
    return out


def child_flow_xray(size: int, html: bool, path: str) -> dict[str, Any]:
    from flow_xray import trace

    workload = _workload(trace)
    with trace.capture():  # warm-up: loads the SDK side and the processor
        _workload(trace)(201, LEAVES)
    base = peak_rss_mb()
    collections = full_collections()
    started = time.process_time()
    with trace.capture() as result:
        workload(size, LEAVES)
        captured = time.process_time()
    built = time.process_time()
    collections = full_collections() - collections
    peak = peak_rss_mb()
    nodes = len(result)
    out: dict[str, Any] = {
        "calls": nodes,
        "capture_s": captured - started,
        "build_s": built - captured,
        "peak_mb": peak - base,
        "full_gcs": collections,
    }
    if html:
        started = time.process_time()
        page = result.to_html()
        out["html_s"] = time.process_time() - started
        out["html_mb"] = len(page.encode("utf-8")) / 1e6
        out["peak_html_mb"] = peak_rss_mb() - base
        del page
    out.update(_saved(functools.partial(result.save, path), path, nodes))
    compact = _compact_path(path)
    out["compact"] = _saved(functools.partial(result.save, compact), compact, nodes)
    return out


def _compact_path(path: str) -> str:
    """The compact file saved beside the JSON one (``trace.fxr``)."""
    return os.path.splitext(path)[0] + ".fxr"


def child_load(path: str) -> dict[str, Any]:
    """``TraceResult.load`` of a saved file, in a process of its own."""
    from flow_xray import TraceResult

    started = time.process_time()
    result = TraceResult.load(path)
    return {
        "calls": len(result),
        "load_s": time.process_time() - started,
        "load_peak_mb": peak_rss_mb(),
    }


def _sdk_wrap(tracer: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """The bare SDK writing every attribute ``@trace`` writes, for a two-argument function."""

    def wrap(func: Callable[..., Any]) -> Callable[..., Any]:
        code = func.__code__
        names = code.co_varnames[: code.co_argcount]
        static = {
            "openinference.span.kind": "CHAIN",
            "code.function.name": func.__qualname__,
            "code.file.path": os.path.relpath(code.co_filename),
            "code.line.number": code.co_firstlineno,
        }

        def call(*args: Any) -> Any:
            with tracer.start_as_current_span(func.__name__, attributes=static) as span:
                span.set_attribute("input.value", json.dumps(dict(zip(names, args, strict=True))))
                span.set_attribute("input.mime_type", "application/json")
                result = func(*args)
                span.set_attribute("output.value", json.dumps(result))
                span.set_attribute("output.mime_type", "application/json")
                return result

        return call

    return wrap


def child_sdk(size: int) -> dict[str, Any]:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    wrap = _sdk_wrap(provider.get_tracer("bench"))
    _workload(wrap)(201, LEAVES)  # warm-up
    exporter.clear()
    workload = _workload(wrap)
    base = peak_rss_mb()
    collections = full_collections()
    started = time.process_time()
    workload(size, LEAVES)
    captured = time.process_time()
    return {
        "calls": len(exporter.get_finished_spans()),
        "capture_s": captured - started,
        "peak_mb": peak_rss_mb() - base,
        "full_gcs": full_collections() - collections,
    }


def child_viztracer(size: int, with_args: bool, path: str) -> dict[str, Any]:
    from viztracer import VizTracer

    workload = _workload(lambda f: f)
    tracer = VizTracer(
        tracer_entries=2 * size + 10_000,
        ignore_c_function=True,
        log_func_args=with_args,
        log_func_retval=with_args,
        verbose=0,
    )
    base = peak_rss_mb()
    collections = full_collections()
    started = time.process_time()
    tracer.start()
    workload(size, LEAVES)
    tracer.stop()
    captured = time.process_time()
    out: dict[str, Any] = {
        "calls": _calls(size),
        "capture_s": captured - started,
        "peak_mb": peak_rss_mb() - base,
        "full_gcs": full_collections() - collections,
    }
    out.update(_saved(lambda: tracer.save(path, verbose=0), path, _calls(size)))
    out["build_s"] = out["save_s"]
    out["html_mb"] = out["save_mb"]
    return out


def child_plain(size: int) -> dict[str, Any]:
    workload = _workload(lambda f: f)
    started = time.process_time()
    workload(size, LEAVES)
    return {"calls": _calls(size), "capture_s": time.process_time() - started}


def run_child(tool: str, size: int, html: bool, path: str) -> dict[str, Any] | None:
    command = [sys.executable, __file__, "--child", tool, str(size), "--path", path]
    command += ["--shape", _shape]
    if not html:
        command.append("--no-html")
    return run_json_child(command, f"{tool} {size}")


def child_main(tool: str, size: int, html: bool, path: str) -> dict[str, Any]:
    if tool == "flow-xray":
        return child_flow_xray(size, html, path)
    if tool == "load":
        return child_load(path)
    if tool == "sdk":
        return child_sdk(size)
    if tool == "plain":
        return child_plain(size)
    return child_viztracer(size, tool == "viztracer+args", path)


def _fmt(value: float | None, spec: str) -> str:
    """``value`` formatted by ``spec`` (such as ``8.2f``), or a dash as wide."""
    if value is None:
        return "-".rjust(int(spec.split(".")[0].rstrip("f")))
    return format(value, spec)


CAPTURE_HEADER = (
    f"{'calls':>9} {'tool':<15} {'capture s':>9} {'us/call':>8} {'build s':>8} "
    f"{'peak MB':>8} {'full GCs':>8} {'html s':>7} {'MB out':>7} {'peak+html MB':>12}"
)
FILES_HEADER = (
    f"{'calls':>9} {'tool':<15} {'save s':>7} {'file MB':>8} {'B/call':>7} "
    f"{'save peak MB':>12} {'load s':>7} {'load peak MB':>12} "
    f"{'view cpu s':>10} {'view wall s':>11} {'view peak MB':>12}"
)


def _capture_row(tool: str, out: dict[str, Any]) -> str:
    calls = out["calls"]
    return (
        f"{calls:>9,} {tool:<15} {out['capture_s']:>9.2f} "
        f"{out['capture_s'] / calls * 1e6:>8.2f} {_fmt(out.get('build_s'), '8.2f')} "
        f"{_fmt(out.get('peak_mb'), '8.0f')} {_fmt(out.get('full_gcs'), '8.0f')} "
        f"{_fmt(out.get('html_s'), '7.2f')} "
        f"{_fmt(out.get('html_mb'), '7.1f')} {_fmt(out.get('peak_html_mb'), '12.0f')}"
    )


def _files_row(tool: str, out: dict[str, Any]) -> str:
    return (
        f"{out['calls']:>9,} {tool:<15} {out['save_s']:>7.2f} {out['save_mb']:>8.1f} "
        f"{out['save_b_per_call']:>7.0f} {_fmt(out.get('save_peak_mb'), '12.0f')} "
        f"{_fmt(out.get('load_s'), '7.2f')} {_fmt(out.get('load_peak_mb'), '12.0f')} "
        f"{_fmt(out.get('view_cpu_s'), '10.2f')} {_fmt(out.get('view_wall_s'), '11.2f')} "
        f"{_fmt(out.get('view_peak_mb'), '12.0f')}"
    )


def _open_file(out: dict[str, Any], size: int, path: str, folder: str) -> None:
    """Add ``load`` (a fresh process) and ``flow-xray view`` (the CLI) of the saved file."""
    loaded = run_child("load", size, False, path)
    if loaded is not None and loaded["calls"] != out["calls"]:
        print(f"load {size}: read back {loaded['calls']:,} calls", file=sys.stderr)
    elif loaded is not None:
        out.update(loaded)
    view = run_measured(
        [sys.executable, "-m", "flow_xray", "view", path, "--html", os.path.join(folder, "v.html")]
    )
    if view.code == 0:
        out.update(view_cpu_s=view.cpu_s, view_wall_s=view.wall_s, view_peak_mb=view.peak_mb)
    else:
        print(f"flow-xray view {size}: exit code {view.code}", file=sys.stderr)


def run_size(size: int, tools: list[str], html: bool) -> list[str]:
    """Print the capture rows of one size as they come; return its files rows."""
    files: list[str] = []
    for tool in tools:
        with tempfile.TemporaryDirectory(prefix="bench-scale-") as folder:
            path = os.path.join(folder, "trace.json")
            out = run_child(tool, size, html, path)
            if out is None:
                continue
            print(_capture_row(tool, out), flush=True)
            compact = out.pop("compact", None)
            if tool == "flow-xray":
                _open_file(out, size, path, folder)
            if "save_s" in out:
                files.append(_files_row(f"{tool} json" if compact else tool, out))
            if compact is not None:
                compact["calls"] = out["calls"]
                _open_file(compact, size, _compact_path(path), folder)
                files.append(_files_row(f"{tool} fxr", compact))
    return files


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sizes", nargs="*", type=int, help="as --sizes")
    parser.add_argument("--sizes", nargs="+", type=int, dest="size_option", help="calls per run")
    parser.add_argument("--no-viztracer", action="store_true", help="skip viztracer")
    parser.add_argument("--no-html", action="store_true", help="skip to_html")
    parser.add_argument("--shape", choices=SHAPES, default=SHAPES[0], help="the workload")
    parser.add_argument("--child", nargs=2, metavar=("TOOL", "SIZE"), help=argparse.SUPPRESS)
    parser.add_argument("--path", help=argparse.SUPPRESS)
    options = parser.parse_args(argv)
    global _shape
    _shape = options.shape
    if options.child:
        out = child_main(options.child[0], int(options.child[1]), not options.no_html, options.path)
        print(json.dumps(out))
        return
    sizes = options.size_option or options.sizes or list(DEFAULT_SIZES)

    tools = ["plain", "flow-xray", "sdk"]
    if not options.no_viztracer:
        try:
            import viztracer  # noqa: F401  (only checking that it is installed)

            tools += ["viztracer", "viztracer+args"]
        except ImportError:
            print("skipped: viztracer (not installed)")
    python = sys.version.split()[0]
    print(f"Python {python}; workload: {_shape}; load average at start: {load_average()}")
    print(CAPTURE_HEADER, flush=True)
    files: list[str] = []
    for size in sizes:
        files += run_size(size, tools, not options.no_html)
    print("build s: closing the capture into a tree (viztracer: save() of its JSON file);")
    print("peak MB: peak RSS above the RSS after imports; MB out: viewer page / viztracer file;")
    print("sdk: bare SDK, SimpleSpanProcessor -> InMemorySpanExporter, @trace's attributes")
    print()
    print(FILES_HEADER)
    for row in files:
        print(row)
    print('json: save("trace.json"), the JSON envelope; fxr: save("trace.fxr"), the compact file;')
    print("save peak / load peak / view peak: the whole process's peak RSS during that step;")
    print("load: TraceResult.load in a fresh process; view: `python -m flow_xray view` (CPU of")
    print("that process, interpreter start and imports included)")
    print(f"load average at end: {load_average()}")


if __name__ == "__main__":
    main()
