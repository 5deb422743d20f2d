"""Usage is read from every common response shape of the real ``openai`` / ``anthropic`` clients.

Each test calls the fake server through the real client inside a traced
function, under ``trace.capture()``, and compares the span's tokens with what
the server billed for that request.
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import signal
import sys
import threading
import time
import warnings
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from flow_xray import trace
from flow_xray.tree.model import TraceNode, TraceResult
from tests.llm.fake_llm import FakeLLM

QUESTION = [{"role": "user", "content": "What is six times seven?"}]
GPT = "gpt-4o-mini"
CLAUDE = "claude-3-5-haiku-20241022"


@pytest.fixture
def openai_client(fake_llm: FakeLLM, need: Callable[[str], None]) -> Iterator[Any]:
    need("openai")
    import openai

    with openai.OpenAI(base_url=fake_llm.openai_url, api_key="sk-test", max_retries=0) as client:
        yield client


@pytest.fixture
def async_openai(fake_llm: FakeLLM, need: Callable[[str], None]) -> Callable[[], Any]:
    """Makes an AsyncOpenAI client (inside the event loop that will close it)."""
    need("openai")
    import openai

    return lambda: openai.AsyncOpenAI(
        base_url=fake_llm.openai_url, api_key="sk-test", max_retries=0
    )


@pytest.fixture
def claude(fake_llm: FakeLLM, need: Callable[[str], None]) -> Iterator[Any]:
    need("anthropic")
    import anthropic

    with anthropic.Anthropic(base_url=fake_llm.anthropic_url, api_key="k", max_retries=0) as client:
        yield client


@pytest.fixture
def async_claude(fake_llm: FakeLLM, need: Callable[[str], None]) -> Callable[[], Any]:
    """Makes an AsyncAnthropic client (inside the event loop that will close it)."""
    need("anthropic")
    import anthropic

    return lambda: anthropic.AsyncAnthropic(
        base_url=fake_llm.anthropic_url, api_key="k", max_retries=0
    )


def node(result: TraceResult, name: str) -> TraceNode:
    found = result.find(name)
    assert found is not None, [n.name for n in result]
    return found


def tokens(found: TraceNode) -> tuple[Any, Any]:
    return found.meta.get("prompt_tokens"), found.meta.get("completion_tokens")


def billed(fake: FakeLLM) -> tuple[int, int]:
    (call,) = fake.calls
    return call.input_tokens, call.output_tokens


def test_chat_completion(openai_client: Any, fake_llm: FakeLLM) -> None:
    """A returned ChatCompletion gives its tokens, model and response id."""

    @trace(kind="llm")
    def ask() -> Any:
        return openai_client.chat.completions.create(model=GPT, messages=QUESTION)

    with trace.capture() as result:
        response = ask()
    found = node(result, "ask")
    assert tokens(found) == billed(fake_llm)
    assert found.attributes["gen_ai.response.id"] == response.id
    assert found.usage_counted is True and result.totals.total_tokens == sum(billed(fake_llm))


def test_stream_consumed_after_the_call_returned(openai_client: Any, fake_llm: FakeLLM) -> None:
    """A returned Stream is the same object; its span gets the usage chunk once it is read."""
    streams: list[Any] = []

    @trace(kind="llm")
    def ask() -> Any:
        stream = openai_client.chat.completions.create(
            model=GPT, messages=QUESTION, stream=True, stream_options={"include_usage": True}
        )
        streams.append(stream)
        return stream

    with trace.capture() as result:
        stream = ask()
        assert stream is streams[0]
        text = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
    assert text.startswith("The answer")
    found = node(result, "ask")
    assert tokens(found) == billed(fake_llm)
    assert not found.incomplete and found.status == "ok"


def test_stream_never_read_is_incomplete(openai_client: Any) -> None:
    """A returned stream dropped unread ends its span, marked incomplete, with no usage."""

    @trace(kind="llm")
    def ask() -> Any:
        return openai_client.chat.completions.create(model=GPT, messages=QUESTION, stream=True)

    # What earlier tests left for the collector (a third-party client's pooled socket it
    # warns about) is collected first: the collection below finds this test's garbage only.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        gc.collect()
    with trace.capture() as result:
        stream = ask()
        stream.close()
        del stream
        gc.collect()
    found = node(result, "ask")
    assert found.incomplete and found.latency_ms is not None
    assert found.usage_counted is None


def _interrupt_when_reading(fake_llm: FakeLLM) -> threading.Thread:
    """Sends this process SIGINT once the stream stalls and the main thread waits for the
    socket (its innermost Python frame is httpcore's read), then lets the stream go on."""
    main = threading.main_thread().ident
    assert main is not None

    def blocked() -> bool:
        frame = sys._current_frames().get(main)
        return (
            frame is not None
            and frame.f_code.co_name == "read"
            and ("httpcore" in frame.f_code.co_filename)
        )

    def run() -> None:
        if fake_llm.stalled.wait(10):
            deadline = time.monotonic() + 10
            while not blocked() and time.monotonic() < deadline:
                time.sleep(0.005)
            os.kill(os.getpid(), signal.SIGINT)
        fake_llm.release.set()

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def test_ctrl_c_while_a_returned_stream_is_read_ends_its_span_interrupted(
    openai_client: Any, fake_llm: FakeLLM
) -> None:
    """Ctrl-C while the caller waits for the next chunk of a stream a traced call returned:
    the ``KeyboardInterrupt`` reaches the caller, and the call's span ends as interrupted
    (before, the signal's exception skipped the span's end: it stayed open)."""

    @trace(kind="llm")
    def ask() -> Any:
        return openai_client.chat.completions.create(
            model="stall-stream", messages=QUESTION, stream=True
        )

    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with trace.capture() as result:
            stream = ask()
            interrupter = _interrupt_when_reading(fake_llm)
            with pytest.raises(KeyboardInterrupt):
                for _ in stream:
                    pass
            interrupter.join(20)
            stream.close()
    finally:
        signal.signal(signal.SIGINT, previous)
    found = node(result, "ask")
    assert found.status == "interrupted" and found.incomplete
    assert found.latency_ms is not None  # ended when the reading stopped


def test_async_stream_consumed_later(async_openai: Any, fake_llm: FakeLLM) -> None:
    """An AsyncStream returned from a coroutine gets its usage when the caller finishes it."""

    @trace(kind="llm")
    async def ask(client: Any) -> Any:
        return await client.chat.completions.create(
            model=GPT, messages=QUESTION, stream=True, stream_options={"include_usage": True}
        )

    async def main() -> None:
        async with async_openai() as client:
            stream = await ask(client)
            async for _chunk in stream:
                pass

    with trace.capture() as result:
        asyncio.run(main())
    assert tokens(node(result, "ask")) == billed(fake_llm)


def test_raw_response(openai_client: Any, fake_llm: FakeLLM) -> None:
    """``with_raw_response`` (a LegacyAPIResponse) gives the tokens of its JSON body."""

    @trace(kind="llm")
    def ask() -> Any:
        return openai_client.chat.completions.with_raw_response.create(model=GPT, messages=QUESTION)

    with trace.capture() as result:
        raw = ask()
    assert raw.parse().usage.prompt_tokens == billed(fake_llm)[0]  # still readable by the caller
    assert tokens(node(result, "ask")) == billed(fake_llm)


def test_responses_api(openai_client: Any, fake_llm: FakeLLM) -> None:
    """A Responses API result reads usage.input_tokens / output_tokens."""

    @trace(kind="llm")
    def ask() -> Any:
        return openai_client.responses.create(model=GPT, input="Say hello")

    with trace.capture() as result:
        ask()
    assert tokens(node(result, "ask")) == billed(fake_llm)


def test_responses_stream_yielded(openai_client: Any, fake_llm: FakeLLM) -> None:
    """A generator yielding Responses stream events takes usage from response.completed."""

    @trace(kind="llm")
    def ask() -> Iterator[Any]:
        yield from openai_client.responses.create(model=GPT, input="Say hello", stream=True)

    with trace.capture() as result:
        events = list(ask())
    assert events[-1].type == "response.completed"
    assert tokens(node(result, "ask")) == billed(fake_llm)


def test_embeddings(openai_client: Any, fake_llm: FakeLLM) -> None:
    """An embeddings result on an ``embedding`` span gives its input tokens."""

    @trace(kind="embedding")
    def embed() -> Any:
        return openai_client.embeddings.create(model="text-embedding-3-small", input=["a b", "c"])

    with trace.capture() as result:
        embed()
    found = node(result, "embed")
    assert found.meta["prompt_tokens"] == billed(fake_llm)[0]
    assert result.totals.total_tokens == billed(fake_llm)[0]


def test_anthropic_message(claude: Any, fake_llm: FakeLLM) -> None:
    """A returned Anthropic Message gives its tokens."""

    @trace(kind="llm")
    def ask() -> Any:
        return claude.messages.create(model=CLAUDE, max_tokens=64, messages=QUESTION)

    with trace.capture() as result:
        ask()
    assert tokens(node(result, "ask")) == billed(fake_llm)


def test_anthropic_message_stream_final_message(claude: Any, fake_llm: FakeLLM) -> None:
    """``messages.stream(...).get_final_message()`` returned from the call gives its tokens."""

    @trace(kind="llm")
    def ask() -> Any:
        with claude.messages.stream(model=CLAUDE, max_tokens=64, messages=QUESTION) as stream:
            return stream.get_final_message()

    with trace.capture() as result:
        ask()
    assert tokens(node(result, "ask")) == billed(fake_llm)


def test_anthropic_message_stream_returned(claude: Any, fake_llm: FakeLLM) -> None:
    """A MessageStream returned and read by the caller completes its span's usage."""
    managers: list[Any] = []

    @trace(kind="llm")
    def ask() -> Any:
        manager = claude.messages.stream(model=CLAUDE, max_tokens=64, messages=QUESTION)
        managers.append(manager)
        return manager.__enter__()

    with trace.capture() as result:
        stream = ask()
        for _event in stream:
            pass
        managers[0].__exit__(None, None, None)
    assert tokens(node(result, "ask")) == billed(fake_llm)


def test_anthropic_raw_events_sum_start_and_delta(claude: Any, fake_llm: FakeLLM) -> None:
    """Raw ``stream=True`` events: input tokens from message_start, output from message_delta."""

    @trace(kind="llm")
    def ask() -> Iterator[Any]:
        yield from claude.messages.create(
            model=CLAUDE, max_tokens=64, messages=QUESTION, stream=True
        )

    with trace.capture() as result:
        kinds = [event.type for event in ask()]
    assert kinds[0] == "message_start" and "message_delta" in kinds
    assert tokens(node(result, "ask")) == billed(fake_llm)


def test_anthropic_async_events(async_claude: Any, fake_llm: FakeLLM) -> None:
    """An async generator yielding Anthropic's raw events gets the same sum."""

    @trace(kind="llm")
    async def ask(client: Any) -> AsyncIterator[Any]:
        stream = await client.messages.create(
            model=CLAUDE, max_tokens=64, messages=QUESTION, stream=True
        )
        async for event in stream:
            yield event

    async def main() -> None:
        async with async_claude() as client:
            async for _event in ask(client):
                pass

    with trace.capture() as result:
        asyncio.run(main())
    assert tokens(node(result, "ask")) == billed(fake_llm)


def test_plain_trace_records_usage_too(openai_client: Any, fake_llm: FakeLLM) -> None:
    """A plain ``@trace`` (not ``kind="llm"``) returning a response records its usage, as 0.2.0."""

    @trace
    def ask() -> Any:
        return openai_client.chat.completions.create(model=GPT, messages=QUESTION)

    with trace.capture() as result:
        ask()
    assert tokens(node(result, "ask")) == billed(fake_llm)
    assert result.totals.total_tokens == sum(billed(fake_llm))


def test_parent_returning_the_childs_response_is_not_counted_twice(
    openai_client: Any, fake_llm: FakeLLM
) -> None:
    """An agent returning its child's response shows the figure but the total has it once."""

    @trace(name="ask", kind="llm")
    def ask() -> Any:
        return openai_client.chat.completions.create(model=GPT, messages=QUESTION)

    @trace(name="relay", kind="agent")
    def relay() -> Any:
        return ask()

    with trace.capture() as result:
        relay()
    parent, child = node(result, "relay"), node(result, "ask")
    assert tokens(parent) == tokens(child) == billed(fake_llm)
    assert (child.usage_counted, parent.usage_counted) == (True, False)
    assert parent.usage_note == "same request as child span 'ask' (counted there)"
    assert result.totals.total_tokens == sum(billed(fake_llm))


def test_openinference_messages_written_on_llm_spans(
    openai_client: Any, user_provider: tuple[Any, InMemorySpanExporter]
) -> None:
    """An llm span whose inputs are chat messages gets OpenInference message attributes."""

    @trace(kind="llm")
    def ask(messages: list[dict[str, str]], temperature: float = 0.2) -> Any:
        return openai_client.chat.completions.create(
            model=GPT, messages=messages, temperature=temperature
        )

    ask(QUESTION)
    (span,) = user_provider[1].get_finished_spans()
    attributes = dict(span.attributes or {})
    assert attributes["llm.input_messages.0.message.role"] == "user"
    assert attributes["llm.input_messages.0.message.content"] == QUESTION[0]["content"]
    assert attributes["llm.output_messages.0.message.role"] == "assistant"
    assert attributes["llm.output_messages.0.message.content"].startswith("The answer")
    assert json.loads(str(attributes["llm.invocation_parameters"])) == {"temperature": 0.2}


def test_generator_yielding_whole_responses_sums_them(
    openai_client: Any, fake_llm: FakeLLM
) -> None:
    """A generator yielding complete responses (one request each) records their sum."""

    @trace(kind="llm")
    def answers() -> Iterator[Any]:
        for question in ("one", "two words"):
            yield openai_client.chat.completions.create(
                model=GPT, messages=[{"role": "user", "content": question}]
            )

    with trace.capture() as result:
        list(answers())
    assert tokens(node(result, "answers")) == fake_llm.billed()
