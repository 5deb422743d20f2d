"""Specification of `flow_xray.llm.requests`: the one "same LLM request" rule, read both ways.

Recording (a figure written as a duplicate of a span inside) and the tree's
accounting (each request counted once) ask the same rule and read the
response id from the same keys.
"""

from __future__ import annotations

from typing import Any

import pytest
from opentelemetry import trace as trace_api
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from flow_xray import attributes as A, trace
from flow_xray.llm.requests import (
    Request,
    models_match,
    report_from_attributes,
    response_id,
    same_request,
)
from flow_xray.llm.usage import make_usage


def test_response_ids_decide_when_both_have_one() -> None:
    """Equal ids are one request whatever the tokens; different ids are two, equal tokens or not."""
    assert same_request(Request("r-1", "gpt-4o", 10, 5), Request("r-1", None, 12, 7))
    assert not same_request(Request("r-1", "gpt-4o", 10, 5), Request("r-2", "gpt-4o", 10, 5))


def test_without_both_ids_equal_tokens_and_compatible_models_decide() -> None:
    """One id missing: the token counts must agree and the models must be compatible."""
    assert same_request(Request("r-1", "gpt-4o-mini", 10, 5), Request(None, "gpt-4o-mini", 10, 5))
    assert not same_request(Request(None, "gpt-4o", 10, 5), Request(None, "gpt-4o", 10, 6))
    assert not same_request(Request(None, "gpt-4o", 10, 5), Request(None, "claude-3", 10, 5))


def test_an_empty_response_id_counts_as_missing() -> None:
    """An empty id does not decide: the tokens do."""
    assert same_request(Request("", "gpt-4o", 10, 5), Request("r-1", "gpt-4o", 10, 5))


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ("gpt-4o-mini", "gpt-4o-mini-2024-07-18", True),
        ("openai/gpt-4o-mini", "GPT-4o-mini", True),
        (None, "gpt-4o", True),
        ("", "gpt-4o", True),
        ("gpt-4o", "claude-3-5-haiku", False),
    ],
)
def test_models_match_dated_names_prefixes_and_unknowns(
    a: str | None, b: str | None, expected: bool
) -> None:
    """A dated name matches its alias, a provider prefix is ignored, an unknown model matches."""
    assert models_match(a, b) is expected


@pytest.mark.parametrize("key", A.READ_RESPONSE_ID)
def test_the_response_id_is_read_under_every_spelling(key: str) -> None:
    """``gen_ai.response.id`` and the older spellings all give the id, live and in the tree."""
    attributes: dict[str, Any] = {key: "r-1", A.GEN_AI_INPUT_TOKENS: 3}
    assert response_id(attributes) == "r-1"
    report = report_from_attributes("child", attributes)
    assert report is not None
    assert report.request == Request("r-1", None, 3, None)


def test_the_first_non_empty_text_id_wins() -> None:
    """Empty and non-text ids are skipped; the read order is `READ_RESPONSE_ID`'s."""
    attributes = {A.GEN_AI_RESPONSE_ID: "", A.LLM_RESPONSE_ID: 7, A.RESPONSE_ID_LEGACY: "r-3"}
    assert response_id(attributes) == "r-3"
    assert response_id({}) is None


def test_a_span_without_token_counts_reports_nothing() -> None:
    """A model or an id alone is no usage figure."""
    assert report_from_attributes("s", {A.GEN_AI_REQUEST_MODEL: "gpt-4o"}) is None
    assert report_from_attributes("s", {A.GEN_AI_INPUT_TOKENS: -1}) is None


def test_a_figure_marked_as_another_spans_reports_nothing() -> None:
    """A span already written as a duplicate (``flow_xray.usage.counted_in``) is not a report."""
    attributes = {A.GEN_AI_INPUT_TOKENS: 3, A.USAGE_COUNTED_IN: "child"}
    assert report_from_attributes("s", attributes) is None


def test_a_usage_record_names_its_request() -> None:
    """`Usage.request` is what the rule compares: id, model and both token counts."""
    usage = make_usage(model="gpt-4o", input_tokens=10, output_tokens=5)
    assert usage.request == Request(None, "gpt-4o", 10, 5)


@pytest.mark.parametrize("key", A.READ_RESPONSE_ID)
def test_recording_and_counting_agree_on_a_child_reporting_the_same_response_id(
    key: str, user_provider: tuple[TracerProvider, InMemorySpanExporter]
) -> None:
    """An instrumentor's span inside reports response ``r-1`` under any spelling; the traced call
    returns ``r-1`` with other token counts: the call's figure is written as the child's
    duplicate, and the tree counts the request once, in the child."""
    _, exporter = user_provider
    instrumentor = trace_api.get_tracer("some.instrumentor")

    @trace("ask", kind="llm")
    def ask() -> dict[str, Any]:
        with instrumentor.start_as_current_span("chat gpt-4o") as span:
            span.set_attributes({key: "r-1", A.GEN_AI_INPUT_TOKENS: 10, A.GEN_AI_OUTPUT_TOKENS: 5})
        usage = {"prompt_tokens": 12, "completion_tokens": 7}
        return {"id": "r-1", "model": "gpt-4o", "object": "chat.completion", "usage": usage}

    with trace.capture() as result:
        ask()
    ours = next(s for s in exporter.get_finished_spans() if s.name == "ask")
    assert ours.attributes is not None
    assert ours.attributes[A.USAGE_COUNTED_IN] == "chat gpt-4o"
    assert A.GEN_AI_INPUT_TOKENS not in ours.attributes
    (root,) = result.roots
    (child,) = root.children
    assert (root.usage_counted, child.usage_counted) == (False, True)
    assert result.totals.prompt_tokens == 10
