"""LLM usage: read model and token counts from responses, turn them into span attributes.

`usage_from_response` recognises OpenAI Chat Completions (``usage.prompt_tokens``
/ ``completion_tokens``), OpenAI Responses and Anthropic Messages
(``usage.input_tokens`` / ``output_tokens``) and Gemini (``usage_metadata``),
as SDK objects or plain dicts. `make_usage` builds the same record from the
arguments of ``trace.usage(...)``; misuse there is logged, never raised.
`usage_attributes` writes both the GenAI and the OpenInference keys.

Example:
    >>> usage_attributes(make_usage(model="gpt-4o", input_tokens=10, output_tokens=5))[
    ...     "llm.token_count.total"
    ... ]
    15
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Final

from flow_xray import attributes as A
from flow_xray.interrupts import let_signals_through
from flow_xray.llm import pricing
from flow_xray.llm.requests import Request
from flow_xray.serialize.reprs import safe_repr
from flow_xray.serialize.shapes import module_root

_log = logging.getLogger("flow_xray")

_PLAIN: Final = frozenset({type(None), str, bytes, int, float, bool, list, tuple, set})
_NOT_RESPONSES: Final = (str, bytes, bytearray, int, float, list, tuple, set, frozenset, type)
# Anthropic counts cache reads and writes apart from `input_tokens`; all of it
# is input the model read, as GenAI's `gen_ai.usage.input_tokens` expects.
_CACHE_FIELDS: Final = ("cache_creation_input_tokens", "cache_read_input_tokens")
_OPERATIONS: Final = {
    "chat.completion": "chat",
    "response": "chat",
    "message": "chat",
    "text_completion": "text_completion",
    "list": "embeddings",
}
_MODEL_PROVIDERS: Final = (
    (("gpt-", "chatgpt-", "o1", "o3", "o4", "text-embedding-", "davinci", "babbage"), "openai"),
    (("claude",), "anthropic"),
    (("gemini",), "google"),
    (("mistral", "open-mistral", "codestral", "ministral", "pixtral", "magistral"), "mistral"),
)
_MODULE_PROVIDERS: Final = {
    "openai": "openai",
    "anthropic": "anthropic",
    "google": "google",
    "mistralai": "mistral",
}
# Provider spelling -> (GenAI `gen_ai.provider.name`, OpenInference `llm.provider`).
_PROVIDER_NAMES: Final = {
    "openai": ("openai", "openai"),
    "anthropic": ("anthropic", "anthropic"),
    "google": ("gcp.gemini", "google"),
    "gemini": ("gcp.gemini", "google"),
    "gcp.gemini": ("gcp.gemini", "google"),
    "vertex_ai": ("gcp.vertex_ai", "google"),
    "gcp.vertex_ai": ("gcp.vertex_ai", "google"),
    "mistral": ("mistral_ai", "mistralai"),
    "mistralai": ("mistral_ai", "mistralai"),
    "mistral_ai": ("mistral_ai", "mistralai"),
    "azure": ("azure.ai.openai", "azure"),
    "azure.ai.openai": ("azure.ai.openai", "azure"),
    "aws": ("aws.bedrock", "aws"),
    "bedrock": ("aws.bedrock", "aws"),
    "aws.bedrock": ("aws.bedrock", "aws"),
    "xai": ("x_ai", "xai"),
    "x_ai": ("x_ai", "xai"),
}


@dataclass(frozen=True, slots=True)
class Usage:
    """Model, provider, token counts and cost of one LLM call.

    `cost_usd`, when given, is the total cost and overrides the price table.
    `from_response` marks a model name read from a response, which is then also
    written as ``gen_ai.response.model``.
    """

    model: str | None = None
    provider: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: float | None = None
    operation: str | None = None
    from_response: bool = False
    response_id: str | None = None

    @property
    def request(self) -> Request:
        """What identifies this call's request (see `flow_xray.llm.requests.same_request`)."""
        return Request(self.response_id, self.model, self.input_tokens, self.output_tokens)


_NO_FIELD: Final = object()


def _has_field(obj: Any, name: str) -> bool:
    """Whether ``name`` is really on ``obj``: in its ``__dict__`` or defined by its class.

    Never runs an instance ``__getattr__``, so a ``MagicMock`` (which would
    create the attribute) or a proxy answering any name reads as not having it.
    """
    try:
        own = object.__getattribute__(obj, "__dict__")
    except Exception:
        let_signals_through()
        own = None
    if isinstance(own, dict) and name in own:
        return True
    try:
        return getattr(type(obj), name, _NO_FIELD) is not _NO_FIELD
    except Exception:
        let_signals_through()
        return False


def field(obj: Any, name: str) -> Any:
    """``obj[name]`` of a mapping, else the attribute ``name`` if it really exists, else None.

    Provider SDK objects (``openai``, ``anthropic``, ...) may keep extra fields
    behind ``__getattr__`` (pydantic extras) and are read normally. Never raises.
    """
    try:
        if isinstance(obj, Mapping):
            return obj.get(name)
        if _has_field(obj, name) or module_root(obj) in _MODULE_PROVIDERS:
            return getattr(obj, name, None)
    except Exception:
        let_signals_through()
    return None


def _count(obj: Any, name: str) -> int | None:
    value = field(obj, name)
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return int(value)
    return None


def _guess_provider(obj: Any, model: str | None) -> str | None:
    root = module_root(obj)
    if root in _MODULE_PROVIDERS:
        return _MODULE_PROVIDERS[root]
    if model:
        lowered = model.lower().rsplit("/", 1)[-1]
        for prefixes, provider in _MODEL_PROVIDERS:
            if lowered.startswith(prefixes):
                return provider
    return None


def _guess_operation(obj: Any) -> str | None:
    for key in ("object", "type"):
        kind = field(obj, key)
        if isinstance(kind, str) and kind in _OPERATIONS:
            return _OPERATIONS[kind]
    return None


def _raw_body(obj: Any) -> Any:
    """The JSON body of a raw response (``with_raw_response``) the client has read in full
    (a streamed one is left for its reader), else None."""
    http = field(obj, "http_response")
    if http is None or not callable(field(obj, "parse")):
        return None
    if field(http, "is_closed") is not True:
        return None
    if "json" not in str(http.headers.get("content-type", "")):
        return None
    return json.loads(http.content)


def _from_response(obj: Any) -> Usage | None:
    if obj is None or isinstance(obj, _NOT_RESPONSES):
        return None
    usage = field(obj, "usage")
    if usage is None and not isinstance(obj, Mapping):
        body = _raw_body(obj)
        if body is not None:
            found = _from_response(body)
            if found is not None and found.provider is None:
                return replace(found, provider=_guess_provider(obj, found.model))
            return found
    if usage is not None:
        input_tokens = _count(usage, "input_tokens")
        if input_tokens is None:
            input_tokens = _count(usage, "prompt_tokens")
        elif any(_count(usage, f) for f in _CACHE_FIELDS):
            input_tokens += sum(_count(usage, f) or 0 for f in _CACHE_FIELDS)
        output_tokens = _count(usage, "output_tokens")
        if output_tokens is None:
            output_tokens = _count(usage, "completion_tokens")
        model = field(obj, "model")
        operation = _guess_operation(obj)
    else:
        usage = field(obj, "usage_metadata")  # Gemini (google-genai)
        if usage is None:
            return None
        input_tokens = _count(usage, "prompt_token_count")
        output_tokens = _count(usage, "candidates_token_count")
        model = field(obj, "model_version")
        operation = "generate_content"
    if input_tokens is None and output_tokens is None:
        return None
    model = model if isinstance(model, str) and model else None
    response_id = field(obj, "id")
    return Usage(
        model=model,
        provider=_guess_provider(obj, model),
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        operation=operation,
        from_response=model is not None,
        response_id=response_id if isinstance(response_id, str) and response_id else None,
    )


def usage_from_response(obj: Any) -> Usage | None:
    """Return the usage carried by an LLM response object or dict, or None; never raises.

    Reads only ``usage`` (or Gemini's ``usage_metadata``), ``model``, ``id`` and
    the ``object``/``type`` tag — of the value itself, or of the JSON body of a
    raw response (``with_raw_response``) the client has read. A value that
    does not carry integer token counts is not a response: None. Plain values
    (numbers, strings, lists, dicts without ``usage``) cost one type check.
    """
    kind = type(obj)
    if kind in _PLAIN:
        return None
    if kind is dict and "usage" not in obj and "usage_metadata" not in obj:
        return None
    try:
        return _from_response(obj)
    except Exception:  # odd objects may raise from any attribute; not ours to surface
        let_signals_through()
        return None


# Token counts are 64-bit attribute ints; a bigger "count" is a bug in the caller.
_MAX_TOKENS: Final = A.MAX_TOKEN_COUNT


def _shown(value: object) -> str:
    """A bad argument as a warning shows it: a short repr that cannot fail (the value can)."""
    return safe_repr(value, 80)


def _tokens(name: str, value: object) -> int | None:
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < _MAX_TOKENS:
        return int(value)
    _log.warning("flow_xray: ignoring %s=%s (expected an int >= 0)", name, _shown(value))
    return None


def _text(name: str, value: object) -> str | None:
    if value is None or (isinstance(value, str) and value):
        return value
    _log.warning("flow_xray: ignoring %s=%s (expected a non-empty str)", name, _shown(value))
    return None


def _pick(name: str, value: int | None, alias_name: str, alias: int | None) -> int | None:
    if value is not None and alias is not None and value != alias:
        _log.warning("flow_xray: both %s and %s given; using %s", name, alias_name, name)
    return value if value is not None else alias


def make_usage(
    model: str | None = None,
    input_tokens: int | None = None,
    output_tokens: int | None = None,
    provider: str | None = None,
    cost_usd: float | None = None,
    prompt_tokens: int | None = None,
    completion_tokens: int | None = None,
    operation: str | None = None,
) -> Usage:
    """Build a `Usage` from ``trace.usage(...)`` arguments; bad fields are logged and dropped.

    This signature *is* ``trace.usage``'s: that one records the result on the
    current span (model, provider, tokens, and cost from the price table unless
    ``cost_usd`` is given). `prompt_tokens` / `completion_tokens` are aliases of
    `input_tokens` / `output_tokens`. Token counts must be ints >= 0, `cost_usd`
    a finite number >= 0, names non-empty strings; anything else is dropped with
    a warning on the ``flow_xray`` logger.

    Example::

        trace.usage(model="gpt-4o-mini", input_tokens=120, output_tokens=40)
    """
    cost: float | None = None
    if cost_usd is not None:
        number = isinstance(cost_usd, (int, float)) and not isinstance(cost_usd, bool)
        # An int beyond float range (10**400) is no cost either; float() would raise.
        value = float(cost_usd) if number and abs(cost_usd) < 1e300 else math.nan
        if math.isfinite(value) and value >= 0:
            cost = value
        else:
            shown = _shown(cost_usd)
            _log.warning("flow_xray: ignoring cost_usd=%s (expected a number >= 0)", shown)
    return Usage(
        model=_text("model", model),
        provider=_text("provider", provider),
        input_tokens=_pick(
            "input_tokens",
            _tokens("input_tokens", input_tokens),
            "prompt_tokens",
            _tokens("prompt_tokens", prompt_tokens),
        ),
        output_tokens=_pick(
            "output_tokens",
            _tokens("output_tokens", output_tokens),
            "completion_tokens",
            _tokens("completion_tokens", completion_tokens),
        ),
        cost_usd=cost,
        operation=_text("operation", operation),
    )


def duplicate_usage_attributes(usage: Usage, counted_in: str) -> dict[str, str | int]:
    """Attributes for a figure another span already reports for the same request.

    The tokens go under ``flow_xray.usage.*`` only, so backends that add up
    ``llm.token_count.*`` / ``gen_ai.usage.*`` / ``llm.cost.*`` across a trace
    (Phoenix, Langfuse) count the request once; flow-xray still shows the
    figure. The model stays under its standard names (a backend still shows
    which model the call used).
    """
    out: dict[str, str | int] = {A.USAGE_COUNTED_IN: counted_in}
    if usage.model:
        out[A.GEN_AI_REQUEST_MODEL] = out[A.LLM_MODEL_NAME] = usage.model
        if usage.from_response:
            out[A.GEN_AI_RESPONSE_MODEL] = usage.model
    for key, value in (
        (A.DUP_MODEL, usage.model),
        (A.DUP_INPUT_TOKENS, usage.input_tokens),
        (A.DUP_OUTPUT_TOKENS, usage.output_tokens),
        (A.GEN_AI_RESPONSE_ID, usage.response_id),
    ):
        if value is not None:
            out[key] = value
    return out


# The keys backends add up over a trace's spans: a figure counted elsewhere leaves them.
SUMMED_KEYS: Final = frozenset(
    {
        A.GEN_AI_INPUT_TOKENS,
        A.GEN_AI_OUTPUT_TOKENS,
        A.GEN_AI_PROMPT_TOKENS_DEPRECATED,
        A.GEN_AI_COMPLETION_TOKENS_DEPRECATED,
        A.LLM_TOKENS_PROMPT,
        A.LLM_TOKENS_COMPLETION,
        A.LLM_TOKENS_TOTAL,
        A.LLM_COST_PROMPT,
        A.LLM_COST_COMPLETION,
        A.LLM_COST_TOTAL,
    }
)


def _first_count(attributes: Mapping[str, Any], keys: tuple[str, ...]) -> int | None:
    for key in keys:
        value = attributes.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            return value
    return None


def _first_text(attributes: Mapping[str, Any], keys: tuple[str, ...]) -> str | None:
    return next((v for k in keys if isinstance(v := attributes.get(k), str) and v), None)


def as_duplicate(attributes: Mapping[str, Any], counted_in: str) -> dict[str, Any]:
    """A finished span's attributes with its figure written as another span's duplicate.

    What `duplicate_usage_attributes` writes while recording, applied on export
    to a span of any tracer once its request's owner is known: the summed keys
    (`SUMMED_KEYS`) leave, the tokens go under ``flow_xray.usage.*`` with
    ``flow_xray.usage.counted_in``; the model and everything else stay.
    """
    out = {k: v for k, v in attributes.items() if k not in SUMMED_KEYS}
    out[A.USAGE_COUNTED_IN] = counted_in
    for key, read in (
        (A.DUP_INPUT_TOKENS, A.READ_PROMPT_TOKENS),
        (A.DUP_OUTPUT_TOKENS, A.READ_COMPLETION_TOKENS),
    ):
        value = _first_count(attributes, read)
        if value is not None:
            out[key] = value
    model = _first_text(attributes, A.READ_MODEL)
    if model is not None:
        out[A.DUP_MODEL] = model
    return out


def with_both_families(attributes: Mapping[str, Any]) -> dict[str, Any] | None:
    """A counted span's attributes with its figure under every summed name, or None
    when nothing is missing.

    Backends add up one family each (Phoenix ``llm.token_count.*`` and
    ``llm.cost.*``, GenAI-based ones ``gen_ai.usage.*``), and the span that
    counts a request may be another tracer's writing only one family (the
    provider SDK's own span, an instrumentor's): the other family's tokens and
    model name are added, and ``llm.cost.*`` from the price table when it has a
    model and no cost.
    """
    prompt = _first_count(attributes, A.READ_PROMPT_TOKENS)
    completion = _first_count(attributes, A.READ_COMPLETION_TOKENS)
    if prompt is None and completion is None:
        return None
    added: dict[str, Any] = {}
    for keys, value in (
        ((A.GEN_AI_INPUT_TOKENS, A.LLM_TOKENS_PROMPT), prompt),
        ((A.GEN_AI_OUTPUT_TOKENS, A.LLM_TOKENS_COMPLETION), completion),
    ):
        if value is not None:
            added.update({key: value for key in keys if key not in attributes})
    total = (prompt or 0) + (completion or 0)  # (two counts may add up past 64 bits: none)
    if A.LLM_TOKENS_TOTAL not in attributes and total < _MAX_TOKENS:
        added[A.LLM_TOKENS_TOTAL] = total
    model = _first_text(attributes, A.READ_MODEL)
    if model is not None:  # Phoenix prices a span by llm.model_name
        added.update(
            {k: model for k in (A.LLM_MODEL_NAME, A.GEN_AI_REQUEST_MODEL) if k not in attributes}
        )
    if A.LLM_COST_TOTAL not in attributes and model is not None:
        cost = pricing.cost_usd(model, prompt, completion)
        if cost is not None:
            added[A.LLM_COST_PROMPT], added[A.LLM_COST_COMPLETION], added[A.LLM_COST_TOTAL] = cost
    return {**attributes, **added} if added else None


def usage_attributes(usage: Usage) -> dict[str, str | int | float]:
    """Return the GenAI and OpenInference span attributes for `usage`.

    Cost comes from `usage.cost_usd` (total only) or else from the price table
    (prompt, completion, total); it is omitted when unknown, never written as 0.
    """
    out: dict[str, str | int | float] = {}
    if usage.model:
        out[A.GEN_AI_REQUEST_MODEL] = usage.model
        out[A.LLM_MODEL_NAME] = usage.model
        if usage.from_response:
            out[A.GEN_AI_RESPONSE_MODEL] = usage.model
    if usage.provider:
        gen_ai, openinference = _PROVIDER_NAMES.get(
            usage.provider.lower(), (usage.provider, usage.provider)
        )
        out[A.GEN_AI_PROVIDER_NAME] = gen_ai
        out[A.LLM_PROVIDER] = openinference
    if usage.operation:
        out[A.GEN_AI_OPERATION_NAME] = usage.operation
    if usage.response_id:
        out[A.GEN_AI_RESPONSE_ID] = usage.response_id
    if usage.input_tokens is not None:
        out[A.GEN_AI_INPUT_TOKENS] = usage.input_tokens
        out[A.LLM_TOKENS_PROMPT] = usage.input_tokens
    if usage.output_tokens is not None:
        out[A.GEN_AI_OUTPUT_TOKENS] = usage.output_tokens
        out[A.LLM_TOKENS_COMPLETION] = usage.output_tokens
    total = (usage.input_tokens or 0) + (usage.output_tokens or 0)  # (as `with_both_families`)
    if (usage.input_tokens is not None or usage.output_tokens is not None) and total < _MAX_TOKENS:
        out[A.LLM_TOKENS_TOTAL] = total
    if usage.cost_usd is not None:
        out[A.LLM_COST_TOTAL] = usage.cost_usd
    else:
        cost = pricing.cost_usd(usage.model, usage.input_tokens, usage.output_tokens)
        if cost is not None:
            out[A.LLM_COST_PROMPT], out[A.LLM_COST_COMPLETION], out[A.LLM_COST_TOTAL] = cost
    return out


__all__ = [
    "SUMMED_KEYS",
    "Usage",
    "as_duplicate",
    "duplicate_usage_attributes",
    "field",
    "make_usage",
    "usage_attributes",
    "usage_from_response",
    "with_both_families",
]
