"""The counting rule on the wire, checked in a real Phoenix: its trace totals are the bill.

``flow-xray run --otlp-endpoint`` exports the README-style app to a real Phoenix
with the instrumentors people run: every response shape (a returned stream
whose instrumentor span ends after ours, raw responses, the Responses API,
Anthropic through its SDK's own spans). Phoenix adds up the token counts of a
trace's spans and prices them itself; what it reports for the trace through
its GraphQL API must be what the fake server billed, and flow-xray's own
totals must agree with it.
"""

from __future__ import annotations

import json
import time
import urllib.request
from collections.abc import Callable
from typing import Any

import pytest

from tests.llm.fake_llm import FakeLLM, RunningServer
from tests.llm.harness import AppRun, run_app
from tests.sdk.otlp.phoenix_server import Phoenix

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

SHAPES = (
    "chat,chat_stream,chat_raw,responses,responses_stream,claude,claude_stream,"
    "claude_events,relay,async"
)
CLAUDE = "claude-haiku-4-5-20251001"
COMBOS = {
    "openinference": "openinference,openinference-anthropic",
    "all": "openinference,otel-v2,openllmetry,openinference-anthropic",
}
_QUERY = """
query ($trace: ID!) {
  projects(first: 100) { edges { node { name trace(traceId: $trace) {
    costSummary { prompt { tokens cost } completion { tokens cost } total { tokens cost } }
    numSpans
  } } } }
}
"""


def graphql(phoenix: Phoenix, query: str, variables: dict[str, Any]) -> Any:
    """POST a GraphQL query to Phoenix; its ``data``."""
    body = json.dumps({"query": query, "variables": variables}).encode()
    request = urllib.request.Request(
        f"{phoenix.http_url}/graphql", body, {"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        answer = json.load(response)
    assert "errors" not in answer, answer
    return answer["data"]


def trace_summary(phoenix: Phoenix, project: str, trace_id: str, spans: int) -> dict[str, Any]:
    """Phoenix's cost summary of the trace once all its ``spans`` were stored (polled)."""
    deadline = time.monotonic() + 30
    while True:
        data = graphql(phoenix, _QUERY, {"trace": trace_id})
        found = [
            e["node"]["trace"]
            for e in data["projects"]["edges"]
            if e["node"]["name"] == project and e["node"]["trace"]
        ]
        if (found and found[0]["numSpans"] >= spans) or time.monotonic() > deadline:
            assert found, f"trace {trace_id} not in project {project}"
            return dict(found[0])
        time.sleep(0.5)


@pytest.fixture(scope="module", params=list(COMBOS))
def exported(
    request: pytest.FixtureRequest,
    phoenix: Phoenix,
    tmp_path_factory: pytest.TempPathFactory,
    need_clients: Callable[[str], None],
) -> tuple[AppRun, FakeLLM, Phoenix, str]:
    """Run the app once per instrumentor set, exporting to Phoenix over OTLP/HTTP."""
    combo = COMBOS[request.param]
    for name in combo.split(","):
        need_clients(name)
    project = f"flow-xray-wire-{request.param}"
    server = RunningServer()
    try:
        run = run_app(
            server.fake.url,
            tmp_path_factory.mktemp("phoenix-wire"),
            "run-otlp",
            instrument=combo,
            shapes=SHAPES,
            endpoint=f"{phoenix.http_url}/v1/traces",
            extra_env={
                "OTEL_RESOURCE_ATTRIBUTES": f"openinference.project.name={project}",
                # A current model both price tables know (Phoenix has no Claude 3.5 Haiku).
                "FX_CLAUDE_MODEL": CLAUDE,
            },
        )
    finally:
        server.stop()
    return run, server.fake, phoenix, project


@pytest.fixture(scope="module")
def need_clients(e2e_missing: Callable[[str], Any]) -> Callable[[str], None]:
    """Skip (or fail under FLOW_XRAY_E2E=1) unless the named client or instrumentor imports."""
    from tests.llm.conftest import LIBRARIES

    def check(name: str) -> None:
        import importlib.util

        for module in ("openai", "anthropic", LIBRARIES.get(name, name)):
            if importlib.util.find_spec(module) is None:
                e2e_missing(f"{module} is not installed (pip install -e '.[test,e2e]')")

    return check


def test_phoenix_trace_totals_are_the_bill(exported: tuple[AppRun, FakeLLM, Phoenix, str]) -> None:
    """Phoenix's prompt, completion and total tokens for the trace equal the billed ones,
    and its cost equals flow-xray's (Claude calls included, not $0)."""
    run, fake, phoenix, project = exported
    billed_in, billed_out = fake.billed()
    (trace_id,) = {n["trace_id"] for n in run.nodes()}
    summary = trace_summary(phoenix, project, trace_id, len(run.nodes()))
    cost = summary["costSummary"]
    assert (cost["prompt"]["tokens"], cost["completion"]["tokens"]) == (billed_in, billed_out)
    assert cost["total"]["tokens"] == billed_in + billed_out
    assert (run.totals["prompt_tokens"], run.totals["completion_tokens"]) == (billed_in, billed_out)
    assert cost["total"]["cost"] == pytest.approx(run.totals["cost_usd"], rel=1e-6)
    assert summary["numSpans"] == len(run.nodes())


def test_every_claude_call_is_priced_in_phoenix(
    exported: tuple[AppRun, FakeLLM, Phoenix, str],
) -> None:
    """The Anthropic requests' counted spans carry a model Phoenix prices (no $0 Claude call)."""
    _, fake, phoenix, project = exported
    claude_calls = [c for c in fake.calls if c.path.endswith("/messages") and c.ok]
    assert claude_calls
    body = phoenix.get_json(f"/v1/projects/{project}/spans?limit=1000")
    counted = [
        s
        for s in body["data"]
        if "claude" in str(s["attributes"].get("llm.model_name", ""))
        and s["attributes"].get("llm.token_count.total")
    ]
    assert len(counted) == len(claude_calls)
