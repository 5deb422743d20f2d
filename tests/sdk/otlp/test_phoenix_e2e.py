"""End to end: ``flow-xray run`` exports a traced script to a real OTLP backend (Arize Phoenix).

Each test runs ``e2e_agent.py`` in a subprocess through the CLI, routes its
spans to its own Phoenix project with the ``openinference.project.name``
resource attribute, and reads them back through Phoenix's REST API.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.sdk.otlp.phoenix_server import Phoenix, free_port

pytestmark = pytest.mark.e2e

AGENT = Path(__file__).parent / "e2e_agent.py"
SPAN_NAMES = ["agent", "fetch", "plan", "rank", "search"]


def run_agent(
    tmp_path: Path, endpoint: str, protocol: str, project: str
) -> subprocess.CompletedProcess[str]:
    """Run the agent under ``flow-xray run`` exporting to ``endpoint`` (options before SCRIPT)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env["OTEL_RESOURCE_ATTRIBUTES"] = f"openinference.project.name={project}"
    command = [
        sys.executable,
        "-m",
        "flow_xray",
        "run",
        "--quiet",
        "--html",
        str(tmp_path / "trace.html"),
        "--otlp-endpoint",
        endpoint,
        "--otlp-protocol",
        protocol,
        "--service-name",
        "flow-xray-e2e",
        str(AGENT),
    ]
    return subprocess.run(
        command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60
    )


def by_name(spans: list[Any]) -> dict[str, Any]:
    """Phoenix spans keyed by name (each name occurs once in the agent's trace)."""
    return {span["name"]: span for span in spans}


@pytest.mark.parametrize(
    ("protocol", "project"),
    [("grpc", "flow-xray-e2e-grpc"), ("http/protobuf", "flow-xray-e2e-http")],
)
def test_traced_script_lands_in_phoenix(
    phoenix: Phoenix, tmp_path: Path, protocol: str, project: str
) -> None:
    """Names, parent links, inputs, token counts, the error and its exception event all arrive."""
    endpoint = phoenix.grpc_url if protocol == "grpc" else phoenix.http_url
    completed = run_agent(tmp_path, endpoint, protocol, project)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == "partial answer"

    spans = by_name(phoenix.wait_for_spans(project, len(SPAN_NAMES)))
    assert sorted(spans) == SPAN_NAMES

    agent_id = spans["agent"]["context"]["span_id"]
    assert spans["agent"]["parent_id"] is None
    parents = {name: spans[name]["parent_id"] for name in ("plan", "search", "fetch")}
    assert parents == {"plan": agent_id, "search": agent_id, "fetch": agent_id}
    assert spans["rank"]["parent_id"] == spans["search"]["context"]["span_id"]
    assert len({span["context"]["trace_id"] for span in spans.values()}) == 1

    search_attributes = spans["search"]["attributes"]
    assert json.loads(search_attributes["input.value"]) == {"query": "otlp", "limit": 2}
    assert spans["search"]["span_kind"] == "TOOL"

    plan_attributes = spans["plan"]["attributes"]
    tokens = {
        key: plan_attributes[key]
        for key in (
            "llm.token_count.prompt",
            "llm.token_count.completion",
            "llm.token_count.total",
            "gen_ai.usage.input_tokens",
            "gen_ai.usage.output_tokens",
        )
    }
    assert tokens == {
        "llm.token_count.prompt": 120,
        "llm.token_count.completion": 40,
        "llm.token_count.total": 160,
        "gen_ai.usage.input_tokens": 120,
        "gen_ai.usage.output_tokens": 40,
    }
    assert plan_attributes["llm.model_name"] == "gpt-4o-mini"

    fetch = spans["fetch"]
    assert fetch["status_code"] == "ERROR"
    assert fetch["status_message"] == "TimeoutError: upstream slow: https://example.invalid/otlp-a"
    (event,) = [e for e in fetch["events"] if e["name"] == "exception"]
    assert event["attributes"]["exception.type"] == "TimeoutError"
    assert (
        event["attributes"]["exception.message"] == "upstream slow: https://example.invalid/otlp-a"
    )
    assert "raise TimeoutError" in event["attributes"]["exception.stacktrace"]
    assert all(spans[name]["status_code"] != "ERROR" for name in SPAN_NAMES if name != "fetch")


@pytest.mark.parametrize("protocol", ["grpc", "http/protobuf"])
def test_backend_down_costs_bounded_time_and_one_warning(tmp_path: Path, protocol: str) -> None:
    """Nothing listening on the endpoint: exit 0 well within 20 s, one lost-spans warning."""
    endpoint = f"http://127.0.0.1:{free_port()}"
    started = time.monotonic()
    completed = run_agent(tmp_path, endpoint, protocol, "unused")
    elapsed = time.monotonic() - started
    assert completed.returncode == 0, completed.stderr
    assert elapsed < 20, f"exit took {elapsed:.1f} s"
    lost = [line for line in completed.stderr.splitlines() if "not exported" in line]
    assert len(lost) == 1, completed.stderr
    assert lost[0].startswith("flow-xray: 5 spans were not exported to http://127.0.0.1:")
    assert (tmp_path / "trace.html").is_file()
