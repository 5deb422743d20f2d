"""Run-diff benchmark: ``flow-xray diff`` of two saved runs of 10k / 100k calls.

Run: ``python tests/benchmarks/bench_diff.py [--sizes N ...]`` (default 10000 100000).

For each size, two runs of a pipeline (stages of 99 leaf calls, two int arguments
and an int result each) are captured and saved as compact ``.fxr`` files in a
fresh process; the second run differs as a regression would: every 1,000th leaf
raises (caught by its stage), every 500th returns another value, and every tenth
stage makes one call more. Then ``flow-xray diff A B`` runs as a real subprocess
(``--exit-zero``), without and with ``--html``: its CPU and wall time and peak RSS
(interpreter start and imports included), and the page's size.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import machine
from timing import print_table

SCRIPT = """
import sys
from flow_xray import trace

CHANGED = sys.argv[2] == "b"

@trace
def leaf(i, k):
    if CHANGED and (i * 100 + k) % 1000 == 7:
        raise ValueError(f"bad item {{i}}/{{k}}")
    return i * k + (1 if CHANGED and (i * 100 + k) % 500 == 3 else 0)

@trace
def stage(i):
    total = 0
    for k in range(99 + (1 if CHANGED and i % 10 == 0 else 0)):
        try:
            total += leaf(i, k)
        except ValueError:
            pass
    return total

@trace
def pipeline(stages):
    return sum(stage(i) for i in range(stages))

with trace.capture() as result:
    pipeline({stages})
result.save(sys.argv[1])
"""


def make_runs(calls: int, folder: Path) -> tuple[Path, Path]:
    """The two runs of ``calls`` calls, saved in ``folder``."""
    script = folder / "pipeline.py"
    script.write_text(SCRIPT.format(stages=max(calls // 100, 1)))
    paths = (folder / "a.fxr", folder / "b.fxr")
    for path, variant in zip(paths, "ab", strict=True):
        subprocess.run([sys.executable, str(script), str(path), variant], check=True)
    return paths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="+", type=int, default=[10_000, 100_000])
    args = parser.parse_args()
    print(f"Python {sys.version.split()[0]}; load average at start: {machine.load_average()}")
    rows: list[tuple[str, str]] = []
    for calls in args.sizes:
        with tempfile.TemporaryDirectory() as name:
            folder = Path(name)
            a, b = make_runs(calls, folder)
            page = folder / "diff.html"
            diff = [sys.executable, "-m", "flow_xray", "diff", str(a), str(b), "--exit-zero"]
            for label, command in (("report", diff), ("--html", [*diff, "--html", str(page)])):
                run = machine.run_measured(command)
                figures = f"{run.cpu_s:.2f} s CPU, {run.wall_s:.2f} s wall, {run.peak_mb:,.0f} MB"
                if run.code != 0:
                    figures += f"; exit {run.code}"
                if label == "--html":
                    figures += f"; page {page.stat().st_size / 1e6:.1f} MB"
                rows.append((f"flow-xray diff, two runs of {calls:,} calls, {label}", figures))
    print_table(rows)
    print(f"load average at end: {machine.load_average()}")


if __name__ == "__main__":
    main()
