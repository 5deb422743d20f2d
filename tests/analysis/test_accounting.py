"""The counting rules: each LLM request once, each failure once (`analysis/accounting.py`)."""

from __future__ import annotations

from typing import Any

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
