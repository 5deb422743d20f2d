"""Machine and memory readings shared by the benchmark scripts (Linux figures).

Imported first, it also puts the checkout these scripts live in first on the
import path, of this process and of the processes it starts: a run measures
this code, not whichever copy of flow-xray is installed.
"""

from __future__ import annotations

import gc
import json
import os
import resource
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CHECKOUT = str(Path(__file__).resolve().parents[2])
if "flow_xray" not in sys.modules and sys.path[:1] != [CHECKOUT]:
    sys.path.insert(0, CHECKOUT)
    os.environ["PYTHONPATH"] = os.pathsep.join(
        part for part in (CHECKOUT, os.environ.get("PYTHONPATH")) if part
    )


def load_average() -> str:
    """The machine's 1/5/15-minute load averages, as printed beside a run's figures."""
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} {five:.2f} {fifteen:.2f} ({os.cpu_count()} CPUs)"


def full_collections() -> int:
    """How many generation-2 (full) garbage collections this process has run so far."""
    return int(gc.get_stats()[2]["collections"])


def peak_rss_mb() -> float:
    """Peak resident memory of this process so far, in MB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _status_mb(field: str) -> float | None:
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def reset_peak_rss() -> bool:
    """Start a new high-water mark of this process's RSS at its current RSS.

    Linux (>= 4.0) resets ``VmHWM`` when ``5`` is written to
    ``/proc/self/clear_refs``; `window_peak_rss_mb` then reads the peak of the
    work done since. False where that is not available.
    """
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as refs:
            refs.write("5")
    except OSError:
        return False
    return True


def window_peak_rss_mb() -> float | None:
    """Peak RSS in MB since the last `reset_peak_rss` (the whole process, not a delta)."""
    return _status_mb("VmHWM")


@dataclass(frozen=True)
class ChildRun:
    """A finished subprocess: exit code, wall and CPU seconds, peak RSS in MB."""

    code: int
    wall_s: float
    cpu_s: float
    peak_mb: float


def run_measured(command: Sequence[str]) -> ChildRun:
    """Run ``command`` (output discarded) and read its own rusage: CPU time and peak RSS."""
    started = time.perf_counter()
    process = subprocess.Popen(list(command), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert process.stderr is not None
    errors = process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    process.stderr.close()
    if process.returncode != 0:
        print(errors.decode(errors="replace")[-2000:], file=sys.stderr)
    return ChildRun(
        code=process.returncode,
        wall_s=wall,
        cpu_s=usage.ru_utime + usage.ru_stime,
        peak_mb=usage.ru_maxrss / 1024,
    )


def run_json_child(command: Sequence[str], label: str) -> dict[str, Any] | None:
    """Run a benchmark's child process; the JSON object on its last output line, or None
    (with its stderr's tail printed under ``label``) when it failed."""
    done = subprocess.run(list(command), capture_output=True, text=True, check=False)
    if done.returncode != 0:
        print(f"{label}: failed\n{done.stderr[-2000:]}", file=sys.stderr)
        return None
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]
