"""End to end with an instrumented LLM app: what Phoenix stores counts each request once.

``flow-xray run --otlp-endpoint`` exports the README-style app (``@trace(kind="llm")``
around the real ``openai`` client, OpenInference's instrumentor installed) to a
real Phoenix. Phoenix adds up ``llm.token_count.*`` over a trace's spans, so
those must total what the fake server billed; our llm spans must carry
OpenInference messages (Phoenix's Messages view) and status OK; and Phoenix's
own span exports must read back through ``load_trace`` with the same totals.
"""

from __future__ import annotations

import json
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from flow_xray.formats.registry import load_trace
from tests.llm.fake_llm import FakeLLM, RunningServer
from tests.llm.harness import AppRun, run_app
from tests.sdk.otlp.phoenix_server import Phoenix

pytestmark = [pytest.mark.e2e, pytest.mark.slow]
PROJECT = "flow-xray-e2e-llm"


@pytest.fixture(scope="module")
def exported(
    phoenix: Phoenix, tmp_path_factory: pytest.TempPathFactory, e2e_missing: Callable[[str], Any]
) -> tuple[AppRun, list[dict[str, Any]], FakeLLM, Phoenix]:
    """Run the app once, exporting to Phoenix; return its trace, Phoenix's spans, the server."""
    try:
        import openai  # noqa: F401
        from openinference.instrumentation.openai import OpenAIInstrumentor  # noqa: F401
    except ImportError:
        e2e_missing("openai / openinference-instrumentation-openai not installed (.[e2e])")
    server = RunningServer()
    try:
        run = run_app(
            server.fake.url,
            tmp_path_factory.mktemp("phoenix-llm"),
            "run-otlp",
            instrument="openinference",
            shapes="chat,fail",
            # OTLP/HTTP: the server that answered /healthz (a /v1/traces path selects HTTP).
            endpoint=f"{phoenix.http_url}/v1/traces",
            extra_env={"OTEL_RESOURCE_ATTRIBUTES": f"openinference.project.name={PROJECT}"},
        )
        spans = phoenix.wait_for_spans(PROJECT, len(run.nodes()), timeout_s=30)
    finally:
        server.stop()
    return run, spans, server.fake, phoenix


def flat(attributes: Any, prefix: str = "") -> dict[str, Any]:
    """Phoenix may hand attributes back nested; flatten them to dotted keys."""
    if isinstance(attributes, dict):
        out: dict[str, Any] = {}
        for key, value in attributes.items():
            out.update(flat(value, f"{prefix}{key}."))
        return out
    if isinstance(attributes, list) and attributes and isinstance(attributes[0], dict):
        out = {}
        for i, value in enumerate(attributes):
            out.update(flat(value, f"{prefix}{i}."))
        return out
    return {prefix[:-1]: attributes}


def test_phoenix_token_totals_equal_the_servers(
    exported: tuple[AppRun, list[dict[str, Any]], FakeLLM, Phoenix],
) -> None:
    """Summing llm.token_count.total over the stored spans gives the billed tokens, not twice."""
    run, spans, fake, _ = exported
    assert len(spans) == len(run.nodes())
    billed_in, billed_out = fake.billed()
    summed = sum(flat(s["attributes"]).get("llm.token_count.total", 0) for s in spans)
    assert summed == billed_in + billed_out
    assert run.totals["total_tokens"] == billed_in + billed_out


def test_llm_spans_have_messages_and_status_ok(
    exported: tuple[AppRun, list[dict[str, Any]], FakeLLM, Phoenix],
) -> None:
    """Our llm spans carry OpenInference messages; successful ones are OK, failed ones ERROR."""
    _, spans, _, _ = exported
    ours = [s for s in spans if s["name"] == "ask_gpt"]
    assert sorted(s["status_code"] for s in ours) == ["ERROR", "ERROR", "OK", "OK"]
    for span in ours:
        attributes = flat(span["attributes"])
        assert attributes["llm.input_messages.0.message.role"] == "user"
        if span["status_code"] == "OK":
            assert attributes["llm.output_messages.0.message.role"] == "assistant"
    assert next(s for s in spans if s["name"] == "agent")["status_code"] == "OK"


@pytest.mark.parametrize("path", ["spans", "spans/otlpv1"])
def test_phoenix_exports_read_back(
    exported: tuple[AppRun, list[dict[str, Any]], FakeLLM, Phoenix], tmp_path: Path, path: str
) -> None:
    """Phoenix's span exports load as a trace with the same calls, tokens and failures."""
    run, _, fake, phoenix = exported
    url = f"{phoenix.http_url}/v1/projects/{PROJECT}/{path}?limit=1000"
    deadline = time.monotonic() + 10
    while True:
        with urllib.request.urlopen(url, timeout=5) as response:
            body = json.load(response)
        if len(body["data"]) >= len(run.nodes()) or time.monotonic() > deadline:
            break
        time.sleep(0.25)
    saved = tmp_path / "phoenix.json"
    saved.write_text(json.dumps(body), encoding="utf-8")
    loaded = load_trace(saved)
    assert sorted(n.name for n in loaded) == sorted(run.names())
    totals = loaded.totals
    assert totals.total_tokens == sum(fake.billed())
    assert totals.errors == fake.failures() == 2
