"""Failures do not depend on what is installed: the clients' default retries, with and
without ``opentelemetry-instrument`` tracing every HTTP attempt.

The app's clients keep their default retries (two); the fake server fails three
requests every time (each tried three times) and one request only on its first
attempt. Under ``flow-xray run`` alone the run has three failures; under
``opentelemetry-instrument`` (the distro loads every installed instrumentation,
``httpx``'s included, so each attempt is a span) it has three too: the failed
attempts are part of their request, shown with their HTTP status.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

import pytest

from tests.llm.fake_llm import FakeLLM
from tests.llm.harness import AppRun, run_app

pytestmark = pytest.mark.slow

_LAUNCH = "\n".join(
    (
        "import sys",
        "from opentelemetry.instrumentation.auto_instrumentation import run",
        "sys.exit(run())",
    )
)
SHAPES = "chat,fail,claude_fail,flaky"
ENV = {
    "FX_RETRIES": "default",
    "OTEL_TRACES_EXPORTER": "console",
    "OTEL_METRICS_EXPORTER": "none",
    "OTEL_LOGS_EXPORTER": "none",
}


@pytest.fixture(scope="module")
def runs(
    fake_server: FakeLLM,
    tmp_path_factory: pytest.TempPathFactory,
    e2e_missing: Callable[[str], NoReturn],
) -> dict[str, tuple[AppRun, int, tuple[int, int]]]:
    """The app once under ``flow-xray run`` and once under ``opentelemetry-instrument``."""
    for module in (
        "openai",
        "anthropic",
        "opentelemetry.distro",
        "opentelemetry.instrumentation.httpx",
        "opentelemetry.instrumentation.auto_instrumentation",
    ):
        if importlib.util.find_spec(module) is None:
            e2e_missing(f"{module} is not installed (pip install -e '.[test,e2e]')")
    out: dict[str, tuple[AppRun, int, tuple[int, int]]] = {}
    for name, launcher in (("run", None), ("instrument", [sys.executable, "-c", _LAUNCH])):
        fake_server.reset()
        run = run_app(
            fake_server.url,
            tmp_path_factory.mktemp(name),
            "run",
            shapes=SHAPES,
            outer=launcher,
            extra_env=ENV,
        )
        out[name] = (run, fake_server.failures(), fake_server.billed())
    return out


@pytest.mark.parametrize("name", ["run", "instrument"])
def test_three_failed_requests_are_three_failures(
    runs: dict[str, tuple[AppRun, int, tuple[int, int]]], name: str
) -> None:
    """Nine failed attempts (three requests, two retries each) plus one retried success:
    three failures, all handled, tokens as billed."""
    run, failed_attempts, (billed_in, billed_out) = runs[name]
    assert failed_attempts == 3 * 3 + 1
    assert (run.totals["errors"], run.totals["handled_errors"]) == (3, 3)
    assert (run.totals["prompt_tokens"], run.totals["completion_tokens"]) == (billed_in, billed_out)


def test_each_http_attempt_is_shown_with_its_status(
    runs: dict[str, tuple[AppRun, int, tuple[int, int]]],
) -> None:
    """Under ``opentelemetry-instrument`` every attempt is a node reading ``HTTP 429 ...``
    (with the provider's error kind when its request failed); one attempt per failed
    request is where its failure is marked, the retried one's is no failure."""
    run = runs["instrument"][0]
    attempts = [n for n in run.nodes() if _is_attempt(n)]
    failed = [n for n in attempts if n["status"] == "error"]
    assert len(failed) == 3 * 3 + 1
    assert sum(bool(n["error_origin"]) for n in failed) == 3
    (retried,) = [n for n in failed if n["error"] == "HTTP 429"]
    assert retried["error_origin"] is False
    texts = sorted({n["error"] for n in failed})
    assert "HTTP 429" in texts  # the flaky request's first attempt: its request succeeded
    assert any(t.startswith("HTTP 429 rate_limit") for t in texts), texts
    assert any(t.startswith("HTTP 500") for t in texts), texts


def _is_attempt(node: dict[str, Any]) -> bool:
    attributes = node.get("attributes") or {}
    return "httpx" in str(attributes.get("otel.scope.name", "")) and (
        "http.method" in attributes or "http.request.method" in attributes
    )


def test_the_failure_count_is_the_same_either_way(
    runs: dict[str, tuple[AppRun, int, tuple[int, int]]], tmp_path: Path
) -> None:
    """Same errors, same handled errors, same tokens with and without the instrumentations."""
    plain, instrumented = runs["run"][0].totals, runs["instrument"][0].totals
    for key in ("errors", "handled_errors", "prompt_tokens", "completion_tokens"):
        assert plain[key] == instrumented[key], key
