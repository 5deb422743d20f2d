"""A small traced agent the end-to-end tests run under ``flow-xray run``.

One agent span holding: an LLM call that records token usage, a search tool
that calls a nested ranking step, and a fetch tool that fails with an
exception the agent handles (so the script exits 0 with one error span).
"""

from __future__ import annotations

from flow_xray import trace


@trace(kind="llm")
def plan(question: str) -> str:
    trace.usage(model="gpt-4o-mini", input_tokens=120, output_tokens=40, provider="openai")
    return f"search for {question}"


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
    plan(question)
    hits = search(question)
    try:
        fetch("https://example.invalid/" + hits[0])
    except TimeoutError:
        return "partial answer"
    return "full answer"


if __name__ == "__main__":
    print(agent("otlp"))
