"""The counting rules: each LLM request once, each failure once (`analysis/accounting.py`)."""

from __future__ import annotations

import tracemalloc
from typing import Any

from flow_xray.analysis.accounting import analyze
from flow_xray.tree.model import TraceNode, TraceResult

_ids = iter(range(1, 10_000))


def call(
    name: str,
    *children: TraceNode,
    tokens: tuple[int, int] | None = None,
    model: str | None = "gpt-4o-mini",
    response_id: str | None = None,
    start: float = 0.0,
    latency: float = 10.0,
    scope: str | None = None,
    error: str | None = None,
    status: str | None = None,
    **attributes: Any,
) -> TraceNode:
    """A node as the tree builder makes it."""
    meta: dict[str, Any] = {}
    if tokens is not None:
        meta = {"prompt_tokens": tokens[0], "completion_tokens": tokens[1]}
        meta["total_tokens"] = sum(tokens)
        if model:
            meta["model"] = model
    attrs = dict(attributes)
    if response_id:
        attrs["gen_ai.response.id"] = response_id
    if scope:
        attrs["otel.scope.name"] = scope
    return TraceNode(
        id=f"n{next(_ids)}",
        name=name,
        meta=meta,
        attributes=attrs,
        start_ms=start,
        latency_ms=latency,
        error=error,
        status=status or ("error" if error else "ok"),
        children=list(children),
    )


def totals(*roots: TraceNode) -> Any:
    return TraceResult(roots=list(roots)).totals


def test_innermost_span_owns_the_request() -> None:
    """Our llm span around an instrumentor span: the instrumentor's figure is counted, once."""
    inner = call("ChatCompletion", tokens=(12, 7), scope="openinference")
    outer = call("ask", inner, tokens=(12, 7))
    assert totals(call("agent", outer)).total_tokens == 19
    assert (inner.usage_counted, outer.usage_counted) == (True, False)
    assert outer.usage_note == "same request as child span 'ChatCompletion' (counted there)"


def test_a_chain_of_instrumentors_counts_once() -> None:
    """Three nested spans reporting one request count once, at the innermost."""
    innermost = call("ChatCompletion", tokens=(12, 7), scope="openinference")
    middle = call("chat gpt-4o-mini", innermost, tokens=(12, 7), scope="openai_v2")
    top = call("openai.chat", middle, tokens=(12, 7), scope="openllmetry")
    result = totals(call("ask", top, tokens=(12, 7)))
    assert result.total_tokens == 19
    assert top.usage_note == "same request as span 'ChatCompletion' (counted there)"


def test_response_ids_decide_when_present() -> None:
    """Equal tokens but different response ids are two requests, even when nested."""
    inner = call("retry", tokens=(10, 5), response_id="chatcmpl-2")
    outer = call("ask", inner, tokens=(10, 5), response_id="chatcmpl-1")
    assert totals(outer).total_tokens == 30
    assert outer.usage_counted and inner.usage_counted


def test_a_model_alias_still_matches() -> None:
    """The request model and the dated response model name the same request."""
    inner = call("chat", tokens=(10, 5), model="gpt-4o-mini-2024-07-18")
    outer = call("ask", inner, tokens=(10, 5), model="gpt-4o-mini")
    assert totals(outer).total_tokens == 15


def test_an_ancestor_reporting_the_sum_is_not_counted() -> None:
    """An agent that records the total of its two calls does not double them."""
    first = call("ask", tokens=(10, 5), start=0, latency=5)
    second = call("ask", tokens=(20, 5), start=6, latency=5)
    agent = call("agent", first, second, tokens=(30, 10))
    assert totals(agent).total_tokens == 40
    assert agent.usage_note == "sum of the 2 requests counted inside this call"


def test_a_different_figure_on_an_ancestor_is_another_request() -> None:
    """A parent that returns the response of an untraced call of its own is counted too."""
    child = call("summarise", tokens=(10, 5))
    parent = call("plan", child, tokens=(40, 9))
    assert totals(parent).total_tokens == 64


def test_sibling_instrumentors_reporting_one_request_count_once() -> None:
    """Two instrumentors' spans side by side for the same HTTP request: one request."""
    a = call("ChatCompletion", tokens=(12, 7), scope="openinference", start=1, latency=8)
    b = call("openai.chat", tokens=(12, 7), scope="openllmetry", start=1.1, latency=7.9)
    parent = call("ask", a, b, tokens=(12, 7))
    assert totals(parent).total_tokens == 19
    assert (a.usage_counted, b.usage_counted, parent.usage_counted) == (True, False, False)
    assert b.usage_note == "same request as sibling span 'ChatCompletion' (counted there)"


def test_two_identical_calls_one_after_the_other_are_two_requests() -> None:
    """Same prompt twice: equal figures, but sequential calls are separate requests."""
    first = call("ask", tokens=(12, 7), start=0, latency=5)
    second = call("ask", tokens=(12, 7), start=6, latency=5)
    assert totals(call("agent", first, second)).total_tokens == 38


def test_cost_sums_counted_spans_only() -> None:
    """The total cost is the counted spans' cost."""
    inner = call("ChatCompletion", tokens=(12, 7), scope="openinference")
    inner.meta["estimated_cost_usd"] = 0.5
    outer = call("ask", inner, tokens=(12, 7))
    outer.meta["estimated_cost_usd"] = 0.5
    assert totals(outer).cost_usd == 0.5


def test_one_exception_through_five_spans_is_one_error() -> None:
    """The innermost failing span is the origin; the others passed it through."""
    node = call("http", error="RateLimitError: 429")
    chain = [node]
    for name in ("ChatCompletion", "ask", "plan", "agent"):
        node = call(name, node, error="RateLimitError: 429")
        chain.append(node)
    result = totals(node)
    assert (result.errors, result.handled_errors) == (1, 0)
    assert [n.error_origin for n in chain] == [True, False, False, False, False]
    assert not any(n.error_handled for n in chain)


def test_an_exception_caught_by_a_parent_is_handled() -> None:
    """A failure that some ancestor survived is handled, at every span it passed through."""
    origin = call("ChatCompletion", error="RateLimitError: 429")
    ask = call("ask", origin, error="RateLimitError: 429")
    agent = call("agent", ask)
    result = totals(agent)
    assert (result.errors, result.handled_errors) == (1, 1)
    assert origin.error_handled and ask.error_handled


def test_a_new_exception_raised_after_catching_is_a_second_failure() -> None:
    """``except RateLimitError: raise GaveUp`` is two failures: the handled one and the new one."""
    origin = call("ask", error="RateLimitError: 429")
    agent = call("agent", origin, error="GaveUp: no answer")
    result = totals(agent)
    assert result.errors == 2
    assert agent.error_origin and origin.error_origin
    assert origin.error_handled and not agent.error_handled


def test_an_http_client_span_matches_the_sdk_exception() -> None:
    """A provider SDK span (``error.type`` from the body, a status code) is the same failure."""
    http = call("anthropic.messages.create", error="rate_limit_error: HTTP 429")
    http.attributes.update({"error.type": "rate_limit_error", "http.response.status_code": 429})
    ask = call("ask", http, error="RateLimitError: Error code: 429 - rate limited")
    assert totals(call("agent", ask)).errors == 1
    assert http.error_origin and not ask.error_origin


def test_sibling_instrumentors_failing_for_one_request_are_one_failure() -> None:
    """Two instrumentations' spans failing side by side for one request: one failure."""
    a = call("ChatCompletion", error="RateLimitError: 429", scope="openinference", start=1)
    b = call("openai.chat", error="RateLimitError: 429", scope="openllmetry", start=1.2)
    ask = call("ask", a, b, error="RateLimitError: 429")
    assert totals(call("agent", ask)).errors == 1


def test_cancelled_and_interrupted_calls_are_not_errors() -> None:
    """Cancelled and interrupted calls are counted apart, never as failures."""
    result = totals(call("agent", call("a", status="cancelled"), call("b", status="interrupted")))
    assert (result.errors, result.cancelled, result.interrupted) == (0, 1, 1)


def test_old_trace_files_get_the_accounting_fields() -> None:
    """A saved trace without the new fields is accounted for when it is loaded."""
    inner = {"name": "inner", "meta": {"prompt_tokens": 3, "completion_tokens": 4}}
    outer = {"name": "outer", "meta": {"prompt_tokens": 3, "completion_tokens": 4}}
    outer["children"] = [inner]
    result = TraceResult.from_dict({"version": 1, "nodes": [outer]})
    assert [n.usage_counted for n in result] == [False, True]
    assert result.totals.total_tokens == 7


def test_totals_in_the_json_envelope_follow_the_rules() -> None:
    """``to_dict()['totals']`` carries the once-per-request figures and the failure counts."""
    inner = call("ChatCompletion", tokens=(12, 7), error="X: y")
    data = TraceResult(roots=[call("ask", inner, tokens=(12, 7), error="X: y")]).to_dict()
    assert data["totals"]["total_tokens"] == 19
    assert (data["totals"]["errors"], data["totals"]["handled_errors"]) == (1, 0)
    node = data["nodes"][0]
    assert (node["usage_counted"], node["error_origin"], node["error_handled"]) == (
        False,
        False,
        False,
    )


def test_the_provider_sdks_own_span_is_kept_over_an_instrumentors() -> None:
    """One request, two sibling figures that disagree: the SDK's own (closest to the wire)
    is counted whichever started first, and both nodes say what the other reported."""
    openllmetry = call(
        "anthropic.chat",
        tokens=(21, 10),
        response_id="msg_1",
        scope="opentelemetry.instrumentation.anthropic",
        start=1,
        latency=8,
    )
    sdk = call(
        "messages.create",
        tokens=(21, 9),
        response_id="msg_1",
        scope="com.anthropic.sdk.python",
        start=1.2,
        latency=7,
    )
    parent = call("ask_claude", openllmetry, sdk, tokens=(21, 9), response_id="msg_1")
    assert totals(parent).total_tokens == 30
    assert (sdk.usage_counted, openllmetry.usage_counted, parent.usage_counted) == (
        True,
        False,
        False,
    )
    assert openllmetry.usage_note == (
        "same request as sibling span 'messages.create' (counted there, closer to the provider)"
        ", which reported 21/9 tokens; this span 21/10"
    )
    assert sdk.usage_note == (
        "span 'anthropic.chat' reported 21/10 tokens for this request; this span's 21/9 is counted"
    )


def test_top_level_siblings_reporting_one_request_count_once() -> None:
    """Two instrumentors' spans with no traced call around them are one request too."""
    a = call("ChatCompletion", tokens=(12, 7), scope="openinference", start=1, latency=8)
    b = call("openai.chat", tokens=(12, 7), scope="openllmetry", start=1.1, latency=7.9)
    assert totals(a, b).total_tokens == 19
    assert (a.usage_counted, b.usage_counted) == (True, False)


def _attempt(status: int, start: float) -> TraceNode:
    return call(
        "POST",
        scope="opentelemetry.instrumentation.httpx",
        error="error" if status >= 400 else None,
        start=start,
        latency=1,
        **{"http.method": "POST", "http.status_code": status},
    )


def test_the_http_attempts_of_a_failed_request_are_one_failure() -> None:
    """Three 429 attempts (two retries) under the SDK call that raised: one failure, and
    each attempt reads with its status and the provider's error kind."""
    attempts = [_attempt(429, float(i)) for i in range(3)]
    request = call(
        "ask",
        *attempts,
        error="RateLimitError: Error code: 429 - {'error': {'message': 'slow down', "
        "'type': 'rate_limit_error'}}",
        latency=5,
    )
    result = totals(call("agent", request, latency=6))
    assert (result.errors, result.handled_errors) == (1, 1)
    assert [a.error for a in attempts] == ["HTTP 429 rate_limit_error"] * 3
    assert [a.error_origin for a in attempts].count(True) == 1


def test_the_failed_attempts_of_a_request_that_succeeded_are_not_failures() -> None:
    """429, 429, then 200 inside a successful call: no failure, the attempts still shown."""
    attempts = [_attempt(429, 0.0), _attempt(429, 1.0), _attempt(200, 2.0)]
    request = call("ask", *attempts, tokens=(12, 7), latency=5)
    result = totals(call("agent", request, latency=6))
    assert result.errors == 0
    assert [a.status for a in attempts] == ["error", "error", "ok"]
    assert attempts[0].error == "HTTP 429" and attempts[0].error_origin is False


def test_counting_many_top_level_calls_holds_nothing_per_call() -> None:
    """A script's loop makes a root per call: the counting pass walks one root at a time
    instead of stacking an entry per root first (64 MB at a million roots)."""
    roots = [TraceNode(id=f"n{i}", name="step", latency_ms=1.0) for i in range(20_000)]
    failed = TraceNode(id="failed", name="step", error="ValueError: x", status="error")
    roots.append(failed)
    tracemalloc.start()
    try:
        counts = analyze(roots)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert (counts.nodes, counts.errors) == (20_001, 1)
    assert failed.error_origin is True
    assert peak < 100_000  # bytes: a few for the one failure, not 20,000 entries (~1.4 MB)
