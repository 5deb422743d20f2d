"""End to end: exporters/file.yaml run by the real Collector writes a file `flow-xray view` opens.

The Collector's ``file`` exporter writes OTLP JSON lines; the trace read from
them must be the one `flow-xray run` saved locally: same tree, same totals.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from flow_xray import TraceResult
from flow_xray.render.payload import read_page
from tests.backends.agent_run import AgentRun, run_agent
from tests.backends.servers import Collector

pytestmark = pytest.mark.e2e


def _spans_in(path: Path, trace_id: str) -> int:
    if not path.exists():
        return 0
    count = 0
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        for resource in json.loads(line)["resourceSpans"]:
            for scope in resource.get("scopeSpans", []):
                count += sum(span["traceId"] == trace_id for span in scope.get("spans", []))
    return count


@pytest.fixture(scope="module")
def written(
    file_collector: tuple[Collector, Path], tmp_path_factory: pytest.TempPathFactory
) -> tuple[AgentRun, Path]:
    """The agent run once into exporters/file.yaml, and the file once it holds the whole trace."""
    collector, path = file_collector
    run = run_agent(tmp_path_factory.mktemp("run-file"), collector.grpc_url)
    deadline = time.monotonic() + 20
    while _spans_in(path, run.trace_id) < len(run.spans) and time.monotonic() < deadline:
        time.sleep(0.25)
    assert _spans_in(path, run.trace_id) == len(run.spans), collector.server.log()[-3000:]
    return run, path


def test_collector_file_has_the_local_tree_and_totals(written: tuple[AgentRun, Path]) -> None:
    """The file loads as the same nodes (ids, nesting, inputs, errors, usage) and totals."""
    run, path = written
    loaded = TraceResult.load(path)
    assert loaded.to_dict()["nodes"] == run.result.to_dict()["nodes"]
    assert loaded.totals == run.result.totals
    assert loaded.totals.errors == 1


def test_flow_xray_view_renders_the_collector_file(
    written: tuple[AgentRun, Path], tmp_path: Path
) -> None:
    """`flow-xray view FILE` renders the Collector's file into a viewer page naming every call."""
    _, path = written
    html = tmp_path / "collector.html"
    completed = subprocess.run(
        [sys.executable, "-m", "flow_xray", "view", str(path), "--html", str(html)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert completed.returncode == 0, completed.stderr
    page = json.dumps(read_page(html.read_text(encoding="utf-8")), ensure_ascii=False)
    for name in ("agent", "plan", "search", "rank", "fetch", "upstream slow"):
        assert name in page
