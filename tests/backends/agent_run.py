"""Run the backend agent under ``flow-xray run`` and read what it wrote locally.

Each run exports over OTLP/gRPC to a Collector and also keeps, next to the
viewer, the flow-xray JSON and the OTLP JSON lines of exactly the spans that
were sent: the reference every backend's copy is compared with.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flow_xray import TraceResult

AGENT = Path(__file__).resolve().parent / "backend_agent.py"
SPAN_NAMES = ["agent", "fetch", "plan", "rank", "search"]
SERVICE_NAME = "flow-xray-backends-e2e"


@dataclass(frozen=True)
class Span:
    """One span as plain data, whatever the source: ids, status, attributes, events."""

    name: str
    span_id: str
    parent_id: str | None
    status: str
    status_message: str | None
    attributes: dict[str, Any]
    events: list[tuple[str, dict[str, Any]]]


@dataclass(frozen=True)
class AgentRun:
    """A finished run: its output, the local trace and the spans it sent."""

    completed: subprocess.CompletedProcess[str]
    json_path: Path
    otlp_json_path: Path
    result: TraceResult
    spans: dict[str, Span]
    resource: dict[str, Any]

    @property
    def trace_id(self) -> str:
        """The one trace id of the run (32 hex digits)."""
        (trace_id,) = {node.trace_id for node in self.result.roots}
        return trace_id

    def by_name(self) -> dict[str, Span]:
        """The sent spans keyed by name (each name occurs once in the agent's trace)."""
        return {span.name: span for span in self.spans.values()}


def run_agent(tmp_path: Path, endpoint: str, service_name: str = SERVICE_NAME) -> AgentRun:
    """Run the agent exporting to ``endpoint`` (OTLP/gRPC); fail unless it exits 0."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    json_path, otlp_path = tmp_path / "trace.json", tmp_path / "sent.jsonl"
    command = [
        sys.executable,
        "-m",
        "flow_xray",
        "run",
        "--quiet",
        "--html",
        str(tmp_path / "trace.html"),
        "--json",
        str(json_path),
        "--otlp-json",
        str(otlp_path),
        "--otlp-endpoint",
        endpoint,
        "--otlp-protocol",
        "grpc",
        "--service-name",
        service_name,
        str(AGENT),
    ]
    completed = subprocess.run(
        command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == "partial answer"
    spans, resource = read_otlp_lines(otlp_path)
    return AgentRun(
        completed=completed,
        json_path=json_path,
        otlp_json_path=otlp_path,
        result=TraceResult.load(json_path),
        spans=spans,
        resource=resource,
    )


# --- reading OTLP JSON lines (kept independent of flow-xray's own reader) -----------


def _any_value(value: dict[str, Any]) -> Any:
    if "stringValue" in value:
        return value["stringValue"]
    if "boolValue" in value:
        return value["boolValue"]
    if "intValue" in value:
        return int(value["intValue"])
    if "doubleValue" in value:
        return float(value["doubleValue"])
    if "arrayValue" in value:
        return [_any_value(item) for item in value["arrayValue"].get("values", [])]
    raise AssertionError(f"unexpected OTLP value {value!r}")


def _attributes(items: list[dict[str, Any]] | None) -> dict[str, Any]:
    return {item["key"]: _any_value(item["value"]) for item in items or []}


_STATUS = {0: "UNSET", 1: "OK", 2: "ERROR"}


def read_otlp_lines(path: Path) -> tuple[dict[str, Span], dict[str, Any]]:
    """Spans by span id, and the (single) resource's attributes, of an OTLP JSON lines file."""
    spans: dict[str, Span] = {}
    resources: list[dict[str, Any]] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        for resource_spans in json.loads(line)["resourceSpans"]:
            resources.append(_attributes(resource_spans.get("resource", {}).get("attributes")))
            for scope_spans in resource_spans.get("scopeSpans", []):
                for span in scope_spans.get("spans", []):
                    status = span.get("status") or {}
                    spans[span["spanId"]] = Span(
                        name=span["name"],
                        span_id=span["spanId"],
                        parent_id=span.get("parentSpanId") or None,
                        status=_STATUS[int(status.get("code", 0))],
                        status_message=status.get("message") or None,
                        attributes=_attributes(span.get("attributes")),
                        events=[
                            (event["name"], _attributes(event.get("attributes")))
                            for event in span.get("events") or []
                        ],
                    )
    assert resources and all(r == resources[0] for r in resources), resources
    return spans, resources[0]
