"""Every LLM request and every failure counted once, with the real clients and instrumentors.

The app (``scenarios/llm_app.py``) follows the README: ``@trace(kind="llm")``
around the real ``openai`` / ``anthropic`` calls, inside an ``@trace`` agent
that catches the failed calls. It runs in a fresh interpreter per combination
of instrumentors and capture mode (``trace.capture()``, ``flow-xray run``,
``flow-xray run --otlp-json``); the totals must equal what the fake server
billed and the error count the requests it failed, and the tree must not
depend on whether spans are also exported.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import pytest

from tests.llm.fake_llm import FakeLLM
from tests.llm.harness import MODES, ROOT, AppRun, run_app

# Instrumentor sets, by what a user would install. "all" is what
# `opentelemetry-instrument` loads when every one of them is installed.
COMBOS = {
    "none": "",
    "openinference": "openinference,openinference-anthropic",
    "otel-v2": "otel-v2",
    "openllmetry": "openllmetry",
    "all": "openinference,otel-v2,openllmetry,openinference-anthropic",
}
SHAPES = "chat,fail,claude,claude_fail"
ALL_SHAPES = (
    "chat,fail,chat_stream,chat_raw,responses,responses_stream,embeddings,"
    "claude,claude_fail,claude_stream,claude_events,plain,relay,async"
)

pytestmark = pytest.mark.slow

_runs: dict[tuple[str, str, str, str], tuple[AppRun, tuple[int, int], int]] = {}


@pytest.fixture
def app(
    fake_llm: FakeLLM, tmp_path_factory: pytest.TempPathFactory, need: Callable[[str], None]
) -> Callable[..., tuple[AppRun, tuple[int, int], int]]:
    """Run the app once per (instrumentors, mode, shapes, provider); later calls reuse the run."""
    need("openai", "anthropic")

    def run(
        instrument: str, mode: str, shapes: str = SHAPES, provider: str = ""
    ) -> tuple[AppRun, tuple[int, int], int]:
        if instrument:
            need(instrument)
        key = (instrument, mode, shapes, provider)
        if key not in _runs:
            fake_llm.reset()
            folder = tmp_path_factory.mktemp("app")
            done = run_app(
                fake_llm.url, folder, mode, instrument=instrument, shapes=shapes, provider=provider
            )
            _runs[key] = (done, fake_llm.billed(), fake_llm.failures())
        return _runs[key]

    return run


def shape(run: AppRun) -> list[tuple[int, str]]:
    """The tree as (depth, name) in pre-order."""
    out: list[tuple[int, str]] = []
    stack: list[tuple[int, dict[str, Any]]] = [(0, n) for n in reversed(run.trace["nodes"])]
    while stack:
        depth, node = stack.pop()
        out.append((depth, node["name"]))
        stack.extend((depth + 1, c) for c in reversed(node["children"]))
    return out


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("combo", list(COMBOS))
def test_totals_equal_what_the_server_billed(
    app: Callable[..., tuple[AppRun, tuple[int, int], int]], combo: str, mode: str
) -> None:
    """Tokens are the server's; errors are the failed requests, each handled by the agent."""
    run, (billed_in, billed_out), failed = app(COMBOS[combo], mode)
    totals = run.totals
    assert (totals["prompt_tokens"], totals["completion_tokens"]) == (billed_in, billed_out)
    assert totals["total_tokens"] == billed_in + billed_out
    assert totals["errors"] == failed == 3
    assert totals["handled_errors"] == failed


@pytest.mark.parametrize("combo", list(COMBOS))
def test_the_tree_does_not_depend_on_export(
    app: Callable[..., tuple[AppRun, tuple[int, int], int]], combo: str
) -> None:
    """``flow-xray run`` shows the same calls with and without --otlp-json, instrumentors' too."""
    plain, exported = app(COMBOS[combo], "run")[0], app(COMBOS[combo], "run-otlp-json")[0]
    assert shape(plain) == shape(exported)
    assert shape(app(COMBOS[combo], "capture")[0]) == shape(plain)
    if combo != "none":
        assert len(plain.nodes()) > 8  # agent + 7 traced calls + the instrumentors' spans


@pytest.mark.parametrize("combo", ["openinference", "all"])
def test_each_span_says_whether_its_figure_was_counted(
    app: Callable[..., tuple[AppRun, tuple[int, int], int]], combo: str
) -> None:
    """The innermost span reporting a request is counted; the others say where it was."""
    run = app(COMBOS[combo], "run")[0]
    reporting = [n for n in run.nodes() if n.get("usage_counted") is not None]
    counted = [n for n in reporting if n["usage_counted"]]
    assert len(counted) == 4  # two OpenAI and two Anthropic requests
    for node in reporting:
        if not node["usage_counted"]:
            assert "(counted there)" in node["usage_note"]
    for node in counted:
        assert not any(c.get("usage_counted") is not None for c in node["children"])


@pytest.mark.parametrize("combo", ["none", "all"])
def test_the_failure_is_marked_where_it_was_raised(
    app: Callable[..., tuple[AppRun, tuple[int, int], int]], combo: str
) -> None:
    """Each failed request has one origin span; the spans it passed through are not origins."""
    run = app(COMBOS[combo], "run")[0]
    failed = [n for n in run.nodes() if n["status"] == "error"]
    origins = [n for n in failed if n["error_origin"]]
    assert len(origins) == 3
    assert all(n["error_handled"] for n in failed)
    for node in origins:
        assert not any(c["status"] == "error" for c in node["children"])


@pytest.mark.parametrize("mode", ["capture", "run", "run-otlp-json"])
def test_every_response_shape_counts_once(
    app: Callable[..., tuple[AppRun, tuple[int, int], int]], mode: str
) -> None:
    """Streams read later, raw responses, Responses API, embeddings, Anthropic streams: all once."""
    run, (billed_in, billed_out), failed = app("", mode, ALL_SHAPES)
    totals = run.totals
    assert (totals["prompt_tokens"], totals["completion_tokens"]) == (billed_in, billed_out)
    assert totals["errors"] == failed


def test_every_response_shape_counts_once_with_every_instrumentor(
    app: Callable[..., tuple[AppRun, tuple[int, int], int]],
) -> None:
    """The same with all instrumentors wrapping the clients (streams behind their proxies)."""
    run, (billed_in, billed_out), failed = app(COMBOS["all"], "run", ALL_SHAPES)
    totals = run.totals
    assert (totals["prompt_tokens"], totals["completion_tokens"]) == (billed_in, billed_out)
    assert totals["errors"] == failed


@pytest.mark.parametrize("provider", ["before", "after"])
def test_a_provider_the_app_installs_keeps_every_span(
    app: Callable[..., tuple[AppRun, tuple[int, int], int]], provider: str
) -> None:
    """The app's own exporter receives every instrumentor span; flow-xray's tree has them too."""
    run = app(COMBOS["openinference"], "run", SHAPES, provider)[0]
    names = run.names()
    foreign = [n for n in run.nodes() if "otel.scope.name" in n["attributes"]]
    assert foreign, names
    exported = run.user_spans
    assert sorted(n["name"] for n in foreign) == sorted(
        name for name in exported if name in {n["name"] for n in foreign}
    )
    plain = app(COMBOS["openinference"], "run")[0]
    assert shape(run) == shape(plain)


@pytest.mark.parametrize("combo", list(COMBOS))
def test_the_otlp_sent_counts_each_request_once(
    app: Callable[..., tuple[AppRun, tuple[int, int], int]], combo: str
) -> None:
    """Adding up the exported spans' token and cost attributes, as backends do, gives the
    bill in either attribute family, for every response shape (a returned stream's
    instrumentor span ends after ours; OpenLLMetry creates its Responses span when the
    call returns; the anthropic SDK's own span writes only GenAI names)."""
    from flow_xray.formats.otlp_json import read_otlp_json

    run, (billed_in, billed_out), _ = app(COMBOS[combo], "run-otlp-json", ALL_SHAPES)
    assert run.otlp_json is not None
    records = read_otlp_json(run.otlp_json)

    def summed(key: str) -> float:
        return sum(float(r.attributes.get(key, 0)) for r in records)

    assert (summed("llm.token_count.prompt"), summed("llm.token_count.completion")) == (
        billed_in,
        billed_out,
    )
    assert summed("llm.token_count.total") == billed_in + billed_out
    assert (summed("gen_ai.usage.input_tokens"), summed("gen_ai.usage.output_tokens")) == (
        billed_in,
        billed_out,
    )
    assert summed("llm.cost.total") == pytest.approx(run.totals["cost_usd"])
    # The model stays on every span whose figure is counted elsewhere.
    twins = [r for r in records if "flow_xray.usage.counted_in" in r.attributes]
    assert twins
    assert all(
        any(k in r.attributes for k in ("gen_ai.request.model", "llm.model_name")) for r in twins
    )


_EXAMPLE = re.compile(r"^#\s+(?P<what>[^:]+):\s+(?P<query>\{.*)$")
_CONDITION = re.compile(
    r"^(span\.(?P<key>[\w.]+)|status)\s*(?P<op>=~|>=|<=|=|>|<)\s*(?P<value>.+)$"
)


def traceql_examples() -> dict[str, str]:
    """The TraceQL examples `exporters/tempo.yaml` gives, by what they find."""
    text = (ROOT / "exporters" / "tempo.yaml").read_text(encoding="utf-8")
    found = (_EXAMPLE.match(line) for line in text.splitlines())
    return {m["what"].strip(): m["query"].strip() for m in found if m}


def matches(query: str, record: Any) -> bool:
    """Whether a span matches the example's ``{ ... }`` selector (``&&``/``||`` of
    comparisons, no parentheses: the examples' subset of TraceQL)."""
    selector = query.split("|", 1)[0].strip().strip("{} ")
    return any(
        all(_holds(term.strip(), record) for term in alternative.split("&&"))
        for alternative in selector.split("||")
    )


def _holds(term: str, record: Any) -> bool:
    found = _CONDITION.match(term)
    assert found, term
    value = found["value"].strip()
    if found["key"] is None:  # status
        return (record.status == "ERROR") == (value == "error")
    actual = record.attributes.get(found["key"])
    if actual is None:
        return False
    op = found["op"]
    if op == "=~":
        return re.fullmatch(json.loads(value), str(actual)) is not None
    if value.startswith('"'):
        return op == "=" and str(actual) == json.loads(value)
    number = float(value)
    return {">": actual > number, "<": actual < number, ">=": actual >= number}.get(
        op, actual == number
    )


@pytest.mark.parametrize("combo", ["none", "all"])
def test_the_tempo_examples_find_every_llm_call(
    app: Callable[..., tuple[AppRun, tuple[int, int], int]], combo: str
) -> None:
    """The TraceQL examples of exporters/tempo.yaml, applied to the exported spans: one span
    per billed request matches "every LLM call", Claude requests included; the Anthropic
    example finds the Claude calls; the failed-call example finds the failures."""
    from flow_xray.formats.otlp_json import read_otlp_json

    run = app(COMBOS[combo], "run-otlp-json", ALL_SHAPES)[0]
    assert run.otlp_json is not None
    records = read_otlp_json(run.otlp_json)
    examples = traceql_examples()
    every = [r for r in records if matches(examples["every trace with an LLM call"], r)]
    billed = [n for n in run.nodes() if n.get("usage_counted")]
    assert len(every) == len(billed)
    claude = [r for r in records if matches(examples["Anthropic calls"], r)]
    assert {str(r.attributes.get("gen_ai.response.id")) for r in every if r in claude} >= {
        str(n["attributes"].get("gen_ai.response.id"))
        for n in billed
        if "claude" in str(n["meta"].get("model"))
    }
    failed = [r for r in records if matches(examples["failed LLM calls"], r)]
    assert len({r.trace_id for r in failed}) == 1 and len(failed) >= run.totals["errors"]
