"""A small traced agent the backend end-to-end tests run under ``flow-xray run``.

One agent span holding: an LLM call that records token usage and, like an
LLM instrumentation would, the chat messages as OpenInference and GenAI
attributes; a search tool that calls a nested ranking step; and a fetch tool
that fails with an exception the agent handles (the script exits 0 with one
error span). The agent carries user metadata (``trace.annotate``).
"""

from __future__ import annotations

import json

from opentelemetry import trace as otel_trace

from flow_xray import trace


@trace(kind="llm")
def plan(question: str) -> str:
    answer = f"search for {question}"
    trace.usage(model="gpt-4o-mini", input_tokens=120, output_tokens=40, provider="openai")
    # What OpenInference and GenAI instrumentations write on an LLM span.
    span = otel_trace.get_current_span()
    span.set_attribute("llm.input_messages.0.message.role", "user")
    span.set_attribute("llm.input_messages.0.message.content", question)
    span.set_attribute("llm.output_messages.0.message.role", "assistant")
    span.set_attribute("llm.output_messages.0.message.content", answer)
    span.set_attribute("gen_ai.input.messages", json.dumps([{"role": "user", "content": question}]))
    span.set_attribute("gen_ai.system_instructions", "answer in one line")
    return answer


@trace
def rank(results: list[str]) -> list[str]:
    return sorted(results)


@trace(kind="tool")
def search(query: str, limit: int = 2) -> list[str]:
    return rank([f"{query}-b", f"{query}-a"][:limit])


@trace(kind="tool")
def fetch(url: str) -> str:
    raise TimeoutError(f"upstream slow: {url}")


@trace(kind="agent")
def agent(question: str) -> str:
    trace.annotate(tenant="acme", attempt=1)
    plan(question)
    hits = search(question)
    try:
        fetch("https://example.invalid/" + hits[0])
    except TimeoutError:
        return "partial answer"
    return "full answer"


if __name__ == "__main__":
    print(agent("backends"))
