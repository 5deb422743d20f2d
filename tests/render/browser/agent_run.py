"""A realistic agent run, traced for real, for the viewer's ten-second check and screenshot.

Real ``@trace`` functions inside ``trace.capture()``, LLM calls made with the
real ``openai`` client against the fake loopback server (tests/llm/fake_llm.py),
tools in a thread pool, a handled retry (a 429, then the same call succeeds),
5 KB prompts, and one exception raised deep in the stack that ends the run.
About 100 calls, 30 of them LLM requests. The slowest call by self time is
``rank_sources`` (it sleeps); the costliest LLM call is the ``gpt-4o`` draft
with the biggest prompt.
"""

from __future__ import annotations

import contextlib
import json
import re
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from flow_xray import trace
from tests.llm.fake_llm import RunningServer

# The real client is an optional dependency (the e2e extra): without it the tests skip.
openai = pytest.importorskip("openai", reason="openai is not installed (pip install -e '.[e2e]')")

BIG = ("The quarterly report covers revenue, churn, hiring and the roadmap. " * 80)[:5000]
SLOWEST = "rank_sources"
ROOT_CAUSE = "cell_value"
ROOT = str(Path(__file__).resolve().parents[3])
_CLIENT: list[Any] = []  # the openai client of the current run


def agent_run_trace() -> dict[str, Any]:
    """Run the agent and return its trace in JSON form (``TraceResult.to_dict()``)."""
    running = RunningServer()
    client = openai.OpenAI(base_url=running.fake.openai_url, api_key="sk-test", max_retries=0)
    try:
        with trace.capture() as result:
            _CLIENT[:] = [client]
            with contextlib.suppress(ValueError):  # the run fails: the cause is in write_report
                research_agent("Summarise the quarter for the board")
    finally:
        _CLIENT.clear()
        client.close()  # (its pooled connection is not left for the collector to find)
        running.stop()
    # Paths as a reader of the repository sees them (no machine's folders in a screenshot).
    text = json.dumps(result.to_dict()).replace(ROOT + "/", "")
    return dict(
        json.loads(
            re.sub(
                r'(?<=")/[^"]*?/site-packages/|(?<=\\")/[^"]*?/site-packages/',
                "site-packages/",
                text,
            )
        )
    )


@trace(kind="llm")
def chat(prompt: str, model: str = "gpt-4o-mini", temperature: float = 0.2) -> Any:
    return _CLIENT[0].chat.completions.create(
        model=model, temperature=temperature, messages=[{"role": "user", "content": prompt}]
    )


@trace(kind="tool")
def search_web(query: str) -> list[str]:
    time.sleep(0.01)
    return [f"{query} result {k}" for k in range(3)]


@trace(kind="tool")
def fetch_page(url: str) -> str:
    time.sleep(0.015)
    page = f"<html>{url}</html>"
    chat(f"Summarise this page:\n{page}\n{BIG[:1200]}")
    return page


@trace(kind="retriever")
def lookup_db(table: str) -> dict[str, int]:
    time.sleep(0.005)
    return {"rows": len(table)}


@trace(kind="chain")
def run_tools(step: int) -> list[Any]:
    calls = [
        trace.propagate(lambda: search_web(f"step {step}")),
        trace.propagate(lambda: fetch_page(f"https://example.com/{step}")),
        trace.propagate(lambda: lookup_db(f"metrics_{step}")),
    ]
    with ThreadPoolExecutor(max_workers=3) as pool:
        return [f.result() for f in [pool.submit(c) for c in calls]]


@trace(kind="chain")
def with_retry(prompt: str) -> Any:
    try:
        return chat(prompt, model="fail-429")
    except openai.RateLimitError:
        return chat(prompt, model="gpt-4o-mini")


@trace(kind="chain")
def rank_sources(sources: list[Any]) -> list[Any]:
    time.sleep(0.8)  # the call with the most time of its own
    return sources


@trace(kind="chain")
def step(k: int) -> str:
    chat(f"Step {k}: what next?\n{BIG}")
    found = run_tools(k)
    if k == 3:
        with_retry(f"Reflect on step {k}\n{BIG[:2000]}")
    if k == 4:
        rank_sources(found)
    return str(chat(f"Reflect on step {k}: {found}").choices[0].message.content)


@trace(kind="tool")
def cell_value(row: dict[str, Any]) -> str:
    return f"{float(row['revenue']):.2f}"  # 'n/a' does not parse: the root cause


@trace(kind="chain")
def render_table(rows: list[dict[str, Any]]) -> str:
    return "\n".join(cell_value(r) for r in rows)


@trace(kind="chain")
def format_section(title: str, rows: list[dict[str, Any]]) -> str:
    draft = chat(f"Draft the {title} section.\n{BIG}\n{BIG[:3000]}", model="gpt-4o")
    return f"{title}\n{draft.choices[0].message.content}\n{render_table(rows)}"


@trace(kind="chain")
def write_report(notes: list[str]) -> str:
    good = [{"revenue": 10.5}, {"revenue": 7}]
    parts = [format_section(t, good) for t in ("Revenue", "Churn", "Hiring")]
    parts.append(format_section("Roadmap", [{"revenue": 3}, {"revenue": "n/a"}]))
    return "\n\n".join(parts)


@trace(kind="agent")
def research_agent(question: str) -> str:
    chat(f"Plan how to answer: {question}\n{BIG}\n{BIG}", model="gpt-4o")
    notes = [step(k) for k in range(8)]
    return write_report(notes)
