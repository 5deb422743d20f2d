"""``flow_xray.shutdown()`` undoes every process-wide patch; a later capture works as before."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from opentelemetry import trace as trace_api
from opentelemetry.trace import ProxyTracer

import flow_xray
from flow_xray import trace
from flow_xray.runtime import patches

CHILD = "from flow_xray import trace\n@trace\ndef in_child():\n    return 1\nin_child()\n"


@trace
def step(i: int) -> int:
    return i + 1


@pytest.fixture
def no_otel(monkeypatch: pytest.MonkeyPatch, otel_globals: Callable[[], None]) -> Iterator[None]:
    """No OTEL_* variables and no global provider; every flow-xray exporter stopped after."""
    for name in list(os.environ):
        if name.startswith(("OTEL_", "TRACEPARENT", "TRACESTATE", "FLOW_XRAY_")):
            monkeypatch.delenv(name)
    yield
    flow_xray.shutdown(timeout_s=2.0)


def _run_child() -> None:
    subprocess.run([sys.executable, "-c", CHILD], check=True, timeout=120)


def test_shutdown_undoes_every_patch(no_otel: None, tmp_path: Path) -> None:
    """After captures (processes too) and an export set-up, shutdown leaves nothing patched."""
    flow_xray.configure(json_path=tmp_path / "spans.jsonl")
    with trace.capture(processes=True) as result:
        step(1)
        _run_child()
    assert sorted(n.name for n in result) == ["in_child", "step"]
    assert patches.installed() and patches.fork_hooks()

    flow_xray.shutdown()

    assert patches.installed() == () and patches.fork_hooks() == ()


def test_shutdown_puts_the_originals_back(no_otel: None) -> None:
    """The objects flow-xray replaced are the ones Python and OpenTelemetry had before."""
    flow_xray.shutdown()
    originals = (ProxyTracer.__dict__["_tracer"], subprocess.Popen.__dict__["__init__"])
    with trace.capture(processes=True):
        step(1)
    assert ProxyTracer.__dict__["_tracer"] is not originals[0]
    assert subprocess.Popen.__dict__["__init__"] is not originals[1]
    flow_xray.shutdown()
    assert (ProxyTracer.__dict__["_tracer"], subprocess.Popen.__dict__["__init__"]) == originals


def test_a_capture_after_shutdown_collects_ours_and_other_instrumentations(no_otel: None) -> None:
    """Ours, a proxy tracer's spans (no provider set) and a child process's: all collected again."""
    foreign = trace_api.get_tracer("tests.runtime.foreign")  # a ProxyTracer: no provider yet
    with trace.capture():
        step(0)
    flow_xray.shutdown()

    with trace.capture(processes=True) as result:
        step(1)
        with foreign.start_as_current_span("foreign"):
            pass
        _run_child()
    assert sorted(n.name for n in result) == ["foreign", "in_child", "step"]
