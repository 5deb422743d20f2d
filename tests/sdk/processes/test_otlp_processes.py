"""The trace of a multi-process script, exported over OTLP: one trace id across processes.

``flow-xray run`` exports the spans child processes sent it with its own
exporters; the receivers are a loopback OTLP/HTTP server (the real SDK
exporter on the sending side), the OTLP JSON file exporter, and Phoenix.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from processes_support import SCRIPTS, Cli

from flow_xray.formats.otlp_json import read_otlp_json
from tests.sdk.otlp.conftest import OtlpHttpReceiver
from tests.sdk.otlp.phoenix_server import Phoenix

PIPELINE = SCRIPTS / "pipeline.py"


def _pids(proc: subprocess.CompletedProcess[str]) -> dict[str, int]:
    data: dict[str, int] = json.loads(proc.stdout.strip().splitlines()[-1])
    return data


@pytest.mark.slow
def test_otlp_json_file_holds_one_trace_across_processes(flow_xray: Cli) -> None:
    """Pool workers' and a subprocess's spans land in the file, once each, in the parent's trace."""
    proc = flow_xray("run", "-q", "--otlp-json", "spans.jsonl", str(PIPELINE))
    assert proc.returncode == 0, proc.stderr
    pids = _pids(proc)
    records = read_otlp_json("spans.jsonl")
    assert Counter(r.name for r in records) == {
        "pipeline": 1,
        "fan_out": 1,
        "score": 6,
        "shell_out": 1,
        "job": 1,
        "parse": 1,
    }
    assert len({r.trace_id for r in records}) == 1
    assert len({r.span_id for r in records}) == len(records)
    by_name = {r.name: r for r in records}
    assert by_name["job"].parent_id == by_name["shell_out"].span_id
    assert by_name["job"].attributes["process.pid"] == pids["worker"]
    assert all(r.parent_id == by_name["fan_out"].span_id for r in records if r.name == "score")


@pytest.mark.slow
def test_otlp_http_export_holds_one_trace_across_processes(
    flow_xray: Cli,
    otlp_receiver: OtlpHttpReceiver,
) -> None:
    """Over OTLP/HTTP: every span has the same trace id; child spans name their process."""
    proc = flow_xray(
        "run", "-q", "--otlp-endpoint", f"{otlp_receiver.url}/v1/traces", str(PIPELINE)
    )
    assert proc.returncode == 0, proc.stderr
    pids = _pids(proc)
    spans = [
        (span, {kv.key: kv.value.int_value for kv in resource.resource.attributes})
        for request in otlp_receiver.requests
        for resource in request.resource_spans
        for scope in resource.scope_spans
        for span in scope.spans
    ]
    assert sorted(span.name for span, _ in spans) == sorted(
        ["pipeline", "fan_out", *["score"] * 6, "shell_out", "job", "parse"]
    )
    assert len({span.trace_id for span, _ in spans}) == 1
    job_resource = next(resource for span, resource in spans if span.name == "job")
    assert job_resource["process.pid"] == pids["worker"]


@pytest.mark.e2e
def test_phoenix_shows_one_trace_with_cross_process_parents(
    phoenix: Phoenix, tmp_path: Path
) -> None:
    """A real backend links the worker's and the subprocess's spans to the dispatching calls."""
    project = f"flow-xray-processes-{os.getpid()}-{time.monotonic_ns()}"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "FLOW_XRAY_"))}
    env["OTEL_RESOURCE_ATTRIBUTES"] = f"openinference.project.name={project}"
    command = [sys.executable, "-m", "flow_xray", "run", "-q", "--otlp-endpoint"]
    command += [phoenix.grpc_url, "--otlp-protocol", "grpc", str(PIPELINE)]
    proc = subprocess.run(
        command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert proc.returncode == 0, proc.stderr
    spans: list[Any] = phoenix.wait_for_spans(project, 11)
    assert len({span["context"]["trace_id"] for span in spans}) == 1
    ids = {span["name"]: span["context"]["span_id"] for span in spans}
    parents = {span["name"]: span["parent_id"] for span in spans}
    assert parents["job"] == ids["shell_out"]
    assert parents["parse"] == ids["job"]
    assert {s["parent_id"] for s in spans if s["name"] == "score"} == {ids["fan_out"]}
