"""An LLM app written the way the README shows, talking to the fake server with the real clients.

Configured by environment variables so one file covers every combination:

- ``FAKE_LLM_URL``: the fake server's base URL (required).
- ``FX_INSTRUMENT``: comma-separated instrumentors to install first:
  ``openinference`` (OpenAI), ``openinference-anthropic``, ``otel-v2`` (the
  official OpenAI instrumentation), ``openllmetry`` (OpenLLMetry's OpenAI one).
- ``FX_SHAPES``: comma-separated calls the agent makes (see `SHAPES`); default ``chat,fail``.
- ``FX_PROVIDER``: ``before`` / ``after``: the app installs its own SDK provider
  (with a span-counting exporter) before the instrumentors / once the agent
  has started; empty: the app configures no OpenTelemetry at all.
- ``FX_CAPTURE``: write ``trace.capture()``'s result as flow-xray JSON to this
  path (in-process capture); empty: just run (for ``flow-xray run``).
- ``FX_RETRIES``: ``default`` lets the clients retry as they do by default (twice);
  otherwise they do not retry.
- ``FX_CLAUDE_MODEL``: the Anthropic model asked for (default ``claude-3-5-haiku-20241022``).
- ``FX_USER_EXPORT``: with ``FX_PROVIDER``, write the names of the spans the
  app's own exporter received (one per line) to this path at the end.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Iterator
from typing import Any

import anthropic
import openai

from flow_xray import trace

URL = os.environ["FAKE_LLM_URL"]
QUESTION = [{"role": "user", "content": "What is six times seven?"}]
GPT = "gpt-4o-mini"
CLAUDE = os.environ.get("FX_CLAUDE_MODEL") or "claude-3-5-haiku-20241022"

_user_spans: list[str] = []


def install_user_provider() -> None:
    """The app's own OpenTelemetry set-up: an SDK provider with an exporter of its own."""
    from opentelemetry import trace as trace_api
    from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult

    class Counting(SpanExporter):
        def export(self, spans: Any) -> SpanExportResult:
            _user_spans.extend(span.name for span in spans if isinstance(span, ReadableSpan))
            return SpanExportResult.SUCCESS

    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(Counting()))
    trace_api.set_tracer_provider(provider)


def instrument(names: list[str]) -> None:
    """Install the named instrumentors, each taking its tracer from the global API."""
    for name in names:
        if name == "openinference":
            from openinference.instrumentation.openai import OpenAIInstrumentor

            OpenAIInstrumentor().instrument()
        elif name == "openinference-anthropic":
            from openinference.instrumentation.anthropic import AnthropicInstrumentor

            AnthropicInstrumentor().instrument()
        elif name == "otel-v2":
            from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor as V2

            V2().instrument()
        elif name == "openllmetry":
            from opentelemetry.instrumentation.openai import OpenAIInstrumentor as Openllmetry

            Openllmetry().instrument()
        elif name:
            raise SystemExit(f"unknown instrumentor {name!r}")


# FX_RETRIES=default: the clients' own default retries (2); otherwise none.
RETRIES: dict[str, Any] = {} if os.environ.get("FX_RETRIES") == "default" else {"max_retries": 0}


def openai_client() -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{URL}/v1", api_key="sk-test", **RETRIES)


def anthropic_client() -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=URL, api_key="sk-ant-test", **RETRIES)


# --- the traced functions, as the README writes them -------------------------


@trace(kind="llm")
def ask_gpt(messages: list[dict[str, str]], model: str = GPT) -> Any:
    return openai_client().chat.completions.create(model=model, messages=messages)


@trace(kind="llm")
def ask_gpt_stream(messages: list[dict[str, str]]) -> Any:
    """Returns the Stream; the caller consumes it after this span ended."""
    return openai_client().chat.completions.create(
        model=GPT, messages=messages, stream=True, stream_options={"include_usage": True}
    )


@trace(kind="llm")
def ask_gpt_raw(messages: list[dict[str, str]]) -> Any:
    return openai_client().chat.completions.with_raw_response.create(model=GPT, messages=messages)


@trace(kind="llm")
def ask_responses(text: str) -> Any:
    return openai_client().responses.create(model=GPT, input=text)


@trace(kind="llm")
def ask_responses_stream(text: str) -> Iterator[Any]:
    yield from openai_client().responses.create(model=GPT, input=text, stream=True)


@trace(kind="embedding")
def embed(texts: list[str]) -> Any:
    return openai_client().embeddings.create(model="text-embedding-3-small", input=texts)


@trace(kind="llm")
def ask_claude(messages: list[dict[str, str]], model: str = CLAUDE) -> Any:
    return anthropic_client().messages.create(model=model, max_tokens=64, messages=messages)


@trace(kind="llm")
def ask_claude_stream(messages: list[dict[str, str]]) -> Any:
    with anthropic_client().messages.stream(model=CLAUDE, max_tokens=64, messages=messages) as s:
        return s.get_final_message()


@trace(kind="llm")
def ask_claude_events(messages: list[dict[str, str]]) -> Iterator[Any]:
    """Yields Anthropic's raw ``stream=True`` events (usage split over start and delta)."""
    yield from anthropic_client().messages.create(
        model=CLAUDE, max_tokens=64, messages=messages, stream=True
    )


@trace
def plain_gpt(messages: list[dict[str, str]]) -> Any:
    """A plain ``@trace`` (not ``kind="llm"``) on an OpenAI call, as 0.2.0 users wrote it."""
    return openai_client().chat.completions.create(model=GPT, messages=messages)


@trace(kind="agent")
def relay(messages: list[dict[str, str]]) -> Any:
    """Returns its child's response object unchanged."""
    return ask_gpt(messages)


@trace(kind="llm")
async def ask_gpt_async_stream(messages: list[dict[str, str]]) -> Any:
    client = openai.AsyncOpenAI(base_url=f"{URL}/v1", api_key="sk-test", max_retries=0)
    return await client.chat.completions.create(
        model=GPT, messages=messages, stream=True, stream_options={"include_usage": True}
    )


@trace(kind="llm")
async def ask_claude_async(messages: list[dict[str, str]]) -> Any:
    client = anthropic.AsyncAnthropic(base_url=URL, api_key="sk-ant-test", max_retries=0)
    async with client.messages.stream(model=CLAUDE, max_tokens=64, messages=messages) as s:
        return await s.get_final_message()


async def _async_calls() -> None:
    stream = await ask_gpt_async_stream(QUESTION)
    async for _chunk in stream:
        pass
    await ask_claude_async(QUESTION)


def _fail(call: Any, *args: Any, **kwargs: Any) -> None:
    with contextlib.suppress(openai.APIError, anthropic.APIError):  # handled: the agent goes on
        call(*args, **kwargs)


SHAPES: dict[str, Any] = {
    "chat": lambda: [ask_gpt(QUESTION), ask_gpt([{"role": "user", "content": "And 6 * 8?"}])],
    "fail": lambda: [
        _fail(ask_gpt, QUESTION, model="fail-429"),
        _fail(ask_gpt, QUESTION, "fail-500"),
    ],
    "chat_stream": lambda: [list(ask_gpt_stream(QUESTION))],
    "chat_raw": lambda: [ask_gpt_raw(QUESTION).parse()],
    "responses": lambda: [ask_responses("Say hello to the world")],
    "responses_stream": lambda: [list(ask_responses_stream("Say hello to the world"))],
    "embeddings": lambda: [embed(["first text here", "second"])],
    "claude": lambda: [
        ask_claude(QUESTION),
        ask_claude([{"role": "user", "content": "And 6 * 8?"}]),
    ],
    "claude_fail": lambda: [_fail(ask_claude, QUESTION, model="fail-429")],
    "flaky": lambda: [ask_gpt(QUESTION, model="flaky-429")],
    "claude_stream": lambda: [ask_claude_stream(QUESTION)],
    "claude_events": lambda: [list(ask_claude_events(QUESTION))],
    "plain": lambda: [plain_gpt(QUESTION)],
    "relay": lambda: [relay(QUESTION)],
    "async": lambda: asyncio.run(_async_calls()),
}


@trace(kind="agent")
def agent(shapes: list[str]) -> str:
    if os.environ.get("FX_PROVIDER") == "after":
        install_user_provider()
    for shape in shapes:
        SHAPES[shape]()
    return "done"


def main() -> None:
    if os.environ.get("FX_PROVIDER") == "before":
        install_user_provider()
    instrument([n for n in os.environ.get("FX_INSTRUMENT", "").split(",") if n])
    shapes = [s for s in os.environ.get("FX_SHAPES", "chat,fail").split(",") if s]
    out = os.environ.get("FX_CAPTURE")
    if out:
        with trace.capture() as result:
            agent(shapes)
        result.save(out)
    else:
        agent(shapes)
    if os.environ.get("FX_USER_EXPORT"):
        with open(os.environ["FX_USER_EXPORT"], "w", encoding="utf-8") as fh:
            fh.write("".join(f"{name}\n" for name in _user_spans))


if __name__ == "__main__":
    main()
