"""The one "same LLM request" rule: what identifies a request, and when two figures are one.

Several spans often report one LLM request: a ``@trace(kind="llm")`` span
around the client call, an instrumentor's span inside it, the provider SDK's
own span. Two places ask whether two usage figures are one request, and both
ask `same_request`:

- while recording (`flow_xray.tracing.recording`): a figure a span inside
  already reported is written as that span's duplicate, so backends adding up
  token counts count the request once; the reports come from
  `report_from_attributes` on every finished span;
- when counting a finished tree (`flow_xray.analysis.accounting`): each request
  is counted once in the totals; flow-xray's export pipelines apply that same
  pass to the spans of each request before they leave
  (`flow_xray.sdk.usage_gate`), so what a backend adds up counts it once too,
  whichever span ends first.

Both read the provider's response id from the same keys (`response_id`:
``gen_ai.response.id``, which OpenLLMetry and the official instrumentations
write, then the older ``llm.response.id`` and ``flow_xray.response_id``).
No OpenTelemetry here.

Example:
    >>> a, b = Request("chatcmpl-1", "gpt-4o", 10, 5), Request("chatcmpl-2", "gpt-4o", 10, 5)
    >>> same_request(a, b)
    False
    >>> same_request(Request(None, "gpt-4o-mini", 10, 5), Request(None, "gpt-4o-mini-2024", 10, 5))
    True
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from flow_xray import attributes as A

__all__ = [
    "REPORT_KEYS",
    "Report",
    "Request",
    "models_match",
    "report_from_attributes",
    "response_id",
    "same_request",
    "wire_rank",
]

# Instrumentation scopes of the provider SDKs' own spans: what they report is read from
# the response, closest to the wire.
PROVIDER_SDK_SCOPES: Final = A.PROVIDER_SDK_SCOPES


@dataclass(frozen=True, slots=True)
class Request:
    """What tells one LLM request from another: response id, model and token counts."""

    response_id: str | None
    model: str | None
    input_tokens: int | None
    output_tokens: int | None


def same_request(a: Request, b: Request) -> bool:
    """Whether two usage figures are for one LLM request.

    Response ids decide when both have one (different ids are always two
    requests); otherwise equal input and output tokens with compatible models
    (`models_match`).
    """
    if a.response_id and b.response_id:
        return a.response_id == b.response_id
    return (
        a.input_tokens == b.input_tokens
        and a.output_tokens == b.output_tokens
        and models_match(a.model, b.model)
    )


def models_match(a: str | None, b: str | None) -> bool:
    """Whether two model names can name one request's model (unknown matches anything).

    A provider prefix is ignored and a dated name matches its alias
    (``openai/gpt-4o-mini`` and ``gpt-4o-mini-2024-07-18``).
    """
    if not a or not b:
        return True
    a, b = a.lower().rsplit("/", 1)[-1], b.lower().rsplit("/", 1)[-1]
    return a.startswith(b) or b.startswith(a)


def wire_rank(scope: str | None) -> int:
    """How far from the wire a span reporting a request is: 0 for the provider SDK's own
    span, 1 for another instrumentation's (an instrumentor, by its scope), 2 for
    flow-xray's (no scope). Of two figures for one request, the lower rank is kept.
    """
    if not scope:
        return 2
    return 0 if scope.lower().startswith(PROVIDER_SDK_SCOPES) else 1


def response_id(attributes: Mapping[str, Any]) -> str | None:
    """The provider's response id a span carries (the first non-empty text of
    `flow_xray.attributes.READ_RESPONSE_ID`), or None."""
    return next(
        (v for k in A.READ_RESPONSE_ID if isinstance(v := attributes.get(k), str) and v), None
    )


@dataclass(frozen=True, slots=True)
class Report:
    """One finished span's usage figure: the span's name and the request it reported."""

    span_name: str
    request: Request


# Keys a span reporting usage carries: one look at them tells most spans apart.
REPORT_KEYS: Final = frozenset((*A.READ_PROMPT_TOKENS, *A.READ_COMPLETION_TOKENS))


def report_from_attributes(name: str, attributes: Mapping[str, Any]) -> Report | None:
    """The usage figure a finished span carries under the standard keys, or None.

    A span whose figure was already marked as another span's
    (``flow_xray.usage.counted_in``) reports nothing.
    """
    # Every finished span comes here: one pass over its keys tells most of them apart
    # (the SDK's attribute mapping answers a missing key by raising KeyError).
    if REPORT_KEYS.isdisjoint(attributes) or A.USAGE_COUNTED_IN in attributes:
        return None
    prompt = next((v for k in A.READ_PROMPT_TOKENS if _is_count(v := attributes.get(k))), None)
    completion = next(
        (v for k in A.READ_COMPLETION_TOKENS if _is_count(v := attributes.get(k))), None
    )
    if prompt is None and completion is None:
        return None
    model = next((v for k in A.READ_MODEL if isinstance(v := attributes.get(k), str)), None)
    return Report(name, Request(response_id(attributes), model, prompt, completion))


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0
