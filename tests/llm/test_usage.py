"""Specification of `flow_xray.llm.usage`: usage from responses and `trace.usage`, as attributes."""

from __future__ import annotations

import dataclasses
import logging
from typing import Any

import pytest

from flow_xray import attributes as A
from flow_xray.llm.pricing import cost_usd
from flow_xray.llm.usage import Usage, make_usage, usage_attributes, usage_from_response


# --- response look-alikes ----------------------------------------------------
@dataclasses.dataclass
class CompletionUsage:
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int


@dataclasses.dataclass
class ChatCompletion:
    id: str
    model: str
    usage: CompletionUsage | None
    object: str = "chat.completion"


@dataclasses.dataclass
class ResponseUsage:
    input_tokens: int
    output_tokens: int
    total_tokens: int


@dataclasses.dataclass
class Response:
    id: str
    model: str
    usage: ResponseUsage
    object: str = "response"


@dataclasses.dataclass
class AnthropicUsage:
    input_tokens: int
    output_tokens: int
    cache_creation_input_tokens: int | None = None
    cache_read_input_tokens: int | None = None


@dataclasses.dataclass
class Message:
    id: str
    model: str
    usage: AnthropicUsage
    role: str = "assistant"
    type: str = "message"


# The SDKs' own module paths, which is what provider guessing reads.
ChatCompletion.__module__ = "openai.types.chat.chat_completion"
Response.__module__ = "openai.types.responses.response"
Message.__module__ = "anthropic.types.message"


def chat_completion(model: str = "gpt-4o-mini-2024-07-18") -> ChatCompletion:
    return ChatCompletion("chatcmpl-1", model, CompletionUsage(120, 40, 160))


# --- usage_from_response -----------------------------------------------------
def test_openai_chat_completion_object() -> None:
    """A ChatCompletion-like object gives model, prompt/completion tokens, openai and chat."""
    usage = usage_from_response(chat_completion())
    assert usage == Usage(
        model="gpt-4o-mini-2024-07-18",
        provider="openai",
        input_tokens=120,
        output_tokens=40,
        operation="chat",
        from_response=True,
        response_id="chatcmpl-1",
    )


def test_openai_responses_api_object() -> None:
    """A Responses-API-like object reads usage.input_tokens / output_tokens."""
    usage = usage_from_response(Response("resp_1", "gpt-4.1", ResponseUsage(10, 5, 15)))
    assert usage is not None
    assert (usage.model, usage.provider, usage.input_tokens, usage.output_tokens) == (
        "gpt-4.1",
        "openai",
        10,
        5,
    )


def test_anthropic_message_object() -> None:
    """An Anthropic Message-like object gives its tokens, anthropic and chat."""
    message = Message("msg_1", "claude-3-5-sonnet-20241022", AnthropicUsage(25, 7))
    usage = usage_from_response(message)
    assert usage is not None
    assert (usage.provider, usage.input_tokens, usage.output_tokens, usage.operation) == (
        "anthropic",
        25,
        7,
        "chat",
    )


def test_anthropic_cache_tokens_count_as_input() -> None:
    """Anthropic reports cache reads and writes apart; they are added to input tokens."""
    message = Message("msg_1", "claude-sonnet-4-5", AnthropicUsage(25, 7, 100, 1000))
    usage = usage_from_response(message)
    assert usage is not None and usage.input_tokens == 25 + 100 + 1000


def test_openai_dict_response() -> None:
    """A ChatCompletion as a dict (e.g. from model_dump or raw HTTP) is recognised."""
    raw = {
        "object": "chat.completion",
        "model": "gpt-4o",
        "usage": {"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7},
    }
    assert usage_from_response(raw) == Usage("gpt-4o", "openai", 3, 4, None, "chat", True)


def test_anthropic_dict_response() -> None:
    """An Anthropic message dict is recognised, its provider guessed from the model name."""
    raw = {"type": "message", "model": "claude-3-haiku-20240307", "usage": {"input_tokens": 9}}
    usage = usage_from_response(raw)
    assert usage == Usage("claude-3-haiku-20240307", "anthropic", 9, None, None, "chat", True)


def test_gemini_usage_metadata() -> None:
    """A google-genai response (usage_metadata, model_version) is recognised too."""

    @dataclasses.dataclass
    class Meta:
        prompt_token_count: int
        candidates_token_count: int

    @dataclasses.dataclass
    class GenerateContentResponse:
        model_version: str
        usage_metadata: Meta

    usage = usage_from_response(GenerateContentResponse("gemini-2.5-flash", Meta(11, 22)))
    assert usage == Usage("gemini-2.5-flash", "google", 11, 22, None, "generate_content", True)


def test_usage_without_model_still_counts() -> None:
    """Token counts without a model name are kept; model and provider stay unknown."""
    usage = usage_from_response({"usage": {"prompt_tokens": 1, "completion_tokens": 2}})
    assert usage == Usage(None, None, 1, 2, None, None, False)


def test_raising_usage_property_is_contained() -> None:
    """A response whose usage property raises gives None instead of raising."""

    class Broken:
        model = "gpt-4o"

        @property
        def usage(self) -> Any:
            raise ConnectionError("lazy load failed")

    assert usage_from_response(Broken()) is None


def test_raising_token_attribute_is_contained() -> None:
    """A usage object whose token attributes raise gives None instead of raising."""

    class BadUsage:
        def __getattr__(self, name: str) -> Any:
            raise RuntimeError(name)

    assert usage_from_response({"model": "gpt-4o", "usage": BadUsage()}) is None


def test_attribute_magic_objects_are_not_responses() -> None:
    """An object answering every attribute (a mock) has no integer tokens: None."""

    class Anything:
        def __getattr__(self, name: str) -> Any:
            return Anything()

    assert usage_from_response(Anything()) is None


@pytest.mark.parametrize(
    "value",
    [
        None,
        "gpt-4o",
        42,
        [1, 2],
        {"model": "gpt-4o"},
        {"usage": None},
        {"usage": {"prompt_tokens": "12"}},
        {"usage": {"prompt_tokens": True, "completion_tokens": -3}},
        ChatCompletion("x", "gpt-4o", None),
        ChatCompletion,
    ],
)
def test_non_responses_give_none(value: Any) -> None:
    """Values without integer token counts under usage are not LLM responses."""
    assert usage_from_response(value) is None


# --- make_usage --------------------------------------------------------------
def test_make_usage_keeps_valid_fields() -> None:
    """Valid trace.usage(...) arguments are stored as given."""
    usage = make_usage("gpt-4o", 10, 5, provider="openai", cost_usd=0.5, operation="chat")
    assert usage == Usage("gpt-4o", "openai", 10, 5, 0.5, "chat", False)


def test_prompt_and_completion_are_aliases() -> None:
    """prompt_tokens / completion_tokens fill input_tokens / output_tokens."""
    usage = make_usage(model="gpt-4o", prompt_tokens=7, completion_tokens=3)
    assert (usage.input_tokens, usage.output_tokens) == (7, 3)


def test_conflicting_aliases_prefer_input_tokens(caplog: pytest.LogCaptureFixture) -> None:
    """Both input_tokens and a different prompt_tokens: input_tokens wins, with a warning."""
    with caplog.at_level(logging.WARNING, logger="flow_xray"):
        usage = make_usage(input_tokens=5, prompt_tokens=6)
    assert usage.input_tokens == 5
    assert "prompt_tokens" in caplog.text


@pytest.mark.parametrize("bad", [-1, 1.5, "10", True])
def test_bad_token_counts_are_logged_and_dropped(
    bad: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """A negative, fractional, string or bool token count is dropped with a warning, not raised."""
    with caplog.at_level(logging.WARNING, logger="flow_xray"):
        usage = make_usage(model="gpt-4o", input_tokens=bad, output_tokens=4)
    assert (usage.input_tokens, usage.output_tokens) == (None, 4)
    assert "input_tokens" in caplog.text


@pytest.mark.parametrize("bad", [-0.1, float("nan"), float("inf"), "1", False])
def test_bad_costs_are_logged_and_dropped(bad: Any, caplog: pytest.LogCaptureFixture) -> None:
    """A negative, non-finite, string or bool cost is dropped with a warning."""
    with caplog.at_level(logging.WARNING, logger="flow_xray"):
        usage = make_usage(model="gpt-4o", cost_usd=bad)
    assert usage.cost_usd is None
    assert "cost_usd" in caplog.text


def test_bad_names_are_logged_and_dropped(caplog: pytest.LogCaptureFixture) -> None:
    """A model, provider or operation that is not a non-empty str is dropped with a warning."""
    with caplog.at_level(logging.WARNING, logger="flow_xray"):
        usage = make_usage(model=123, provider="", operation=["chat"])  # type: ignore[arg-type]
    assert (usage.model, usage.provider, usage.operation) == (None, None, None)
    assert caplog.text.count("ignoring") == 3


# --- usage_attributes --------------------------------------------------------
def test_attributes_for_a_known_model_carry_every_key() -> None:
    """A priced model yields the GenAI and OpenInference keys for model, provider, tokens, cost."""
    usage = make_usage("gpt-4o", 1000, 200, provider="openai", operation="chat")
    attrs = usage_attributes(usage)
    prompt, completion, total = cost_usd("gpt-4o", 1000, 200) or (None, None, None)
    assert attrs == {
        A.GEN_AI_REQUEST_MODEL: "gpt-4o",
        A.LLM_MODEL_NAME: "gpt-4o",
        A.GEN_AI_PROVIDER_NAME: "openai",
        A.LLM_PROVIDER: "openai",
        A.GEN_AI_OPERATION_NAME: "chat",
        A.GEN_AI_INPUT_TOKENS: 1000,
        A.LLM_TOKENS_PROMPT: 1000,
        A.GEN_AI_OUTPUT_TOKENS: 200,
        A.LLM_TOKENS_COMPLETION: 200,
        A.LLM_TOKENS_TOTAL: 1200,
        A.LLM_COST_PROMPT: prompt,
        A.LLM_COST_COMPLETION: completion,
        A.LLM_COST_TOTAL: total,
    }


def test_response_usage_also_writes_the_response_model() -> None:
    """Usage read from a response writes gen_ai.response.model as well."""
    usage = usage_from_response(chat_completion())
    assert usage is not None
    attrs = usage_attributes(usage)
    assert attrs[A.GEN_AI_RESPONSE_MODEL] == attrs[A.GEN_AI_REQUEST_MODEL] == usage.model


def test_trace_usage_does_not_claim_a_response_model() -> None:
    """Usage given by hand has no gen_ai.response.model."""
    assert A.GEN_AI_RESPONSE_MODEL not in usage_attributes(make_usage("gpt-4o", 1, 1))


def test_unknown_model_has_no_cost_attributes() -> None:
    """An unpriced model keeps its tokens but writes no cost keys at all."""
    attrs = usage_attributes(make_usage("in-house-llm", 10, 5))
    assert attrs[A.LLM_TOKENS_TOTAL] == 15
    assert not {A.LLM_COST_PROMPT, A.LLM_COST_COMPLETION, A.LLM_COST_TOTAL} & set(attrs)


def test_explicit_cost_overrides_the_table() -> None:
    """An explicit cost_usd is written as the total, with no prompt/completion split."""
    attrs = usage_attributes(make_usage("gpt-4o", 1000, 200, cost_usd=0.25))
    assert attrs[A.LLM_COST_TOTAL] == 0.25
    assert A.LLM_COST_PROMPT not in attrs and A.LLM_COST_COMPLETION not in attrs


def test_provider_names_follow_each_convention() -> None:
    """Provider spellings map to GenAI and OpenInference names; unknown ones pass through."""
    google = usage_attributes(make_usage(provider="google"))
    assert (google[A.GEN_AI_PROVIDER_NAME], google[A.LLM_PROVIDER]) == ("gcp.gemini", "google")
    mistral = usage_attributes(make_usage(provider="mistral"))
    assert (mistral[A.GEN_AI_PROVIDER_NAME], mistral[A.LLM_PROVIDER]) == ("mistral_ai", "mistralai")
    other = usage_attributes(make_usage(provider="acme"))
    assert (other[A.GEN_AI_PROVIDER_NAME], other[A.LLM_PROVIDER]) == ("acme", "acme")


def test_no_tokens_means_no_token_attributes() -> None:
    """Without token counts there are no token or cost keys, only what is known."""
    assert usage_attributes(make_usage(model="gpt-4o")) == {
        A.GEN_AI_REQUEST_MODEL: "gpt-4o",
        A.LLM_MODEL_NAME: "gpt-4o",
    }


def test_every_written_key_is_a_declared_attribute() -> None:
    """usage_attributes only writes keys declared in flow_xray.attributes."""
    declared = {v for k, v in vars(A).items() if k.isupper() and isinstance(v, str)}
    usage = usage_from_response(chat_completion())
    assert usage is not None
    assert set(usage_attributes(dataclasses.replace(usage, cost_usd=None))) <= declared


def test_a_total_past_64_bits_is_left_out_and_the_trace_still_loads(tmp_path: Any) -> None:
    """Two counts each within 64 bits can add up past them: no total is written (an OTLP
    attribute cannot hold it, the trace file's reader refuses it), the counts are kept, and
    the saved trace loads back."""
    from flow_xray import TraceResult, trace

    half = 1 << 62
    assert A.LLM_TOKENS_TOTAL not in usage_attributes(
        make_usage(input_tokens=half, output_tokens=half)
    )
    assert (
        usage_attributes(make_usage(input_tokens=half, output_tokens=half - 1))[A.LLM_TOKENS_TOTAL]
        == (1 << 63) - 1
    )

    @trace(kind="llm")
    def ask() -> str:
        trace.usage(model="gpt-4o-mini", prompt_tokens=half, completion_tokens=half)
        return "ok"

    with trace.capture() as result:
        ask()
    meta = result.find("ask").meta  # type: ignore[union-attr]
    assert (meta["prompt_tokens"], meta["completion_tokens"]) == (half, half)
    assert "total_tokens" not in meta
    result.save(tmp_path / "t.json")
    loaded = TraceResult.load(tmp_path / "t.json")
    assert loaded.find("ask").meta == meta  # type: ignore[union-attr]
