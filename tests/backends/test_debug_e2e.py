"""End to end: exporters/debug.yaml run by the real Collector logs every span flow-xray sends."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.backends.agent_run import run_agent
from tests.backends.servers import Collector

pytestmark = pytest.mark.e2e


def test_debug_collector_logs_every_span_with_its_attributes(
    debug_collector: Collector, tmp_path: Path
) -> None:
    """Each span's name, its trace id and its payload attributes appear in the Collector's log."""
    run = run_agent(tmp_path, debug_collector.grpc_url)
    expected = [f"Name           : {name}" for name in sorted(run.by_name())]
    expected += [run.trace_id, "input.value", "openinference.span.kind", "exception.stacktrace"]
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        log = debug_collector.server.log()
        if all(text in log for text in expected):
            break
        time.sleep(0.25)
    log = debug_collector.server.log()
    assert [text for text in expected if text not in log] == [], log[-3000:]
