"""End to end: an instrumented LLM app -> the real Collector (jaeger.yaml, tempo.yaml) ->
Jaeger v2: what the backend holds adds up to the bill.

The README-style app (``tests/llm/scenarios/llm_app.py``: the real ``openai``
and ``anthropic`` clients against the fake server, every response shape)
runs under ``flow-xray run --otlp-endpoint`` with every instrumentor
installed. Jaeger's copy of the trace is read back through both of its APIs:
adding up the token and cost tags over the spans, as a backend's query or
dashboard does, gives what the server billed in each attribute family; and
the ``/api/v3`` answer opens in flow-xray with the same tree and totals.
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

import pytest

from flow_xray.formats.registry import load_trace
from tests.backends.landing import tags
from tests.backends.servers import Collector, Jaeger
from tests.llm.conftest import LIBRARIES
from tests.llm.fake_llm import RunningServer
from tests.llm.harness import AppRun, run_app

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

INSTRUMENT = "openinference,otel-v2,openllmetry,openinference-anthropic"
SHAPES = (
    "chat,fail,chat_stream,chat_raw,responses,responses_stream,embeddings,"
    "claude,claude_fail,claude_stream,claude_events,plain,relay,async"
)


def _shape(result: Any) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    stack = [(0, n) for n in reversed(result.roots)]
    while stack:
        depth, node = stack.pop()
        out.append((depth, node.name))
        stack.extend((depth + 1, c) for c in reversed(node.children))
    return out


def _plain_shape(nodes: list[dict[str, Any]]) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    stack = [(0, n) for n in reversed(nodes)]
    while stack:
        depth, node = stack.pop()
        out.append((depth, node["name"]))
        stack.extend((depth + 1, c) for c in reversed(node.get("children") or []))
    return out


@pytest.fixture(scope="module", params=["jaeger", "tempo"])
def landed(
    request: pytest.FixtureRequest,
    jaeger: Jaeger,
    tmp_path_factory: pytest.TempPathFactory,
    e2e_missing: Callable[[str], NoReturn],
) -> tuple[AppRun, tuple[int, int], dict[str, Any], Jaeger, str]:
    """The app's trace through exporters/<param>.yaml into Jaeger, and Jaeger's answer."""
    for name in ("openai", "anthropic", *INSTRUMENT.split(",")):
        if importlib.util.find_spec(LIBRARIES.get(name, name)) is None:
            e2e_missing(f"{name} is not installed (pip install -e '.[test,e2e]')")
    collector: Collector = request.getfixturevalue(f"{request.param}_collector")
    server = RunningServer()
    try:
        run = run_app(
            server.fake.url,
            tmp_path_factory.mktemp(f"llm-{request.param}"),
            "run-otlp",
            instrument=INSTRUMENT,
            shapes=SHAPES,
            endpoint=collector.grpc_url,
        )
        billed = server.fake.billed()
    finally:
        server.stop()
    (trace_id,) = {node["trace_id"] for node in run.nodes()}
    body = jaeger.wait_for_trace(trace_id, len(run.nodes()))
    assert body and body.get("data"), f"trace {trace_id} not in Jaeger"
    return run, billed, body, jaeger, trace_id


def test_the_spans_jaeger_holds_add_up_to_the_bill(
    landed: tuple[AppRun, tuple[int, int], dict[str, Any], Jaeger, str],
) -> None:
    """Summing each family's token tags over the stored spans gives the billed tokens once;
    the cost tags give flow-xray's cost."""
    run, (billed_in, billed_out), body, _, _ = landed
    (trace,) = body["data"]
    assert len(trace["spans"]) == len(run.nodes())
    spans = [tags(span.get("tags")) for span in trace["spans"]]

    def summed(key: str) -> float:
        return sum(float(span.get(key, 0)) for span in spans)

    assert (summed("llm.token_count.prompt"), summed("llm.token_count.completion")) == (
        billed_in,
        billed_out,
    )
    assert (summed("gen_ai.usage.input_tokens"), summed("gen_ai.usage.output_tokens")) == (
        billed_in,
        billed_out,
    )
    assert summed("llm.cost.total") == pytest.approx(run.totals["cost_usd"])
    assert (run.totals["prompt_tokens"], run.totals["completion_tokens"]) == (billed_in, billed_out)


def test_jaegers_v3_answer_opens_with_the_same_tree_and_totals(
    landed: tuple[AppRun, tuple[int, int], dict[str, Any], Jaeger, str], tmp_path: Path
) -> None:
    """``GET /api/v3/traces/ID`` and ``/api/traces/ID`` saved as files load as the run's trace."""
    run, (billed_in, billed_out), body, jaeger, trace_id = landed
    v3 = jaeger.get_json(f"/api/v3/traces/{trace_id}")
    files = {"v3.json": v3, "ui.json": body}
    local = _plain_shape(run.trace["nodes"])
    for name, answer in files.items():
        path = tmp_path / name
        path.write_text(json.dumps(answer), encoding="utf-8")
        loaded = load_trace(path)
        totals = loaded.totals
        assert (totals.prompt_tokens, totals.completion_tokens) == (billed_in, billed_out), name
        assert totals.errors == run.totals["errors"], name
        assert sorted(n.name for n in loaded) == sorted(run.names()), name
        assert _shape(loaded) == local, name
