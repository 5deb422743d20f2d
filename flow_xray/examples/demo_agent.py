"""A small research agent traced with flow-xray: the pipeline behind ``flow-xray demo``.

Everything is offline and deterministic. The "LLM" is a fake client that
answers like the OpenAI chat completions API, token usage included, so the
viewer shows tokens and an estimated cost (``gpt-4o-mini`` is in the price
table). The trace it produces has:

- ``research_agent`` (kind ``agent``) at the root, with user metadata;
- two ``chat.completions.create`` calls (kind ``llm``);
- tools: ``web_search`` over a small in-memory corpus and a ``calculator``;
  a retriever, ``retrieve_docs``;
- an asyncio fan-out: ``gather_sources`` runs three ``fetch_source`` calls at
  once with ``asyncio.gather``;
- a retry: ``weather_api`` times out once, ``get_weather`` catches the
  ``TimeoutError`` and the second attempt succeeds (one red node, handled);
- a generator, ``stream_answer``, whose span covers the whole iteration.

``run_demo(seed=N)`` varies the weather service (timeouts before it answers,
temperature, sky), so two seeds give two runs to compare with ``flow-xray diff``.

Run it with ``flow-xray demo`` or ``python -m flow_xray.examples.demo_agent [OUT.html]``.
"""

from __future__ import annotations

import ast
import asyncio
import contextvars
import json
import operator
import random
import re
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from flow_xray import TraceResult, trace

MODEL = "gpt-4o-mini"
QUESTION = "How crowded is Tokyo, and is it a good day for a walk?"
DEFAULT_OUTPUT = "flow_xray_demo.html"

SYSTEM_PROMPT = (
    "You are a careful research assistant. Plan before you act, use the tools you are "
    "given (web_search, retrieve_docs, calculator, weather), cite the numbers you used, "
    "and answer in one short paragraph. If a tool fails, retry once before giving up."
)


def _tool(name: str, description: str, **params: str) -> dict[str, Any]:
    """An OpenAI function-calling tool schema with string parameters."""
    properties = {key: {"type": "string", "description": text} for key, text in params.items()}
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {"type": "object", "properties": properties, "required": list(params)},
        },
    }


# Sent with every LLM call, as a function-calling agent would; they count as prompt tokens.
TOOLS: list[dict[str, Any]] = [
    _tool("web_search", "Search the web and return matching page ids.", query="search terms"),
    _tool("retrieve_docs", "Return the documents most relevant to a query.", query="question"),
    _tool("calculator", "Evaluate an arithmetic expression.", expression="e.g. 2 * (3 + 4)"),
    _tool("get_weather", "Current weather for a city.", city="city name, e.g. Tokyo"),
]

CORPUS: dict[str, str] = {
    "tokyo-population": "Tokyo population: about 14 million people live in the 23 wards "
    "and Tama area of Tokyo Metropolis.",
    "tokyo-area": "Tokyo Metropolis covers 2,194 square kilometres, from the bay to the "
    "Okutama mountains.",
    "tokyo-parks": "Tokyo parks such as Yoyogi and Shinjuku Gyoen are popular for walks "
    "on clear, mild days.",
    "osaka-population": "Osaka has about 2.7 million residents in the city proper.",
    "opentelemetry": "OpenTelemetry is a vendor-neutral standard for traces, metrics and logs.",
}


@dataclass(frozen=True)
class Weather:
    """What the simulated weather service does in one run."""

    timeouts: int = 1  # attempts that time out before one answers (at most 1: two attempts)
    temp_c: int = 21
    sky: str = "clear"

    @classmethod
    def from_seed(cls, seed: int) -> Weather:
        """A reproducible variation: the same seed always gives the same weather."""
        rng = random.Random(seed)
        return cls(rng.randint(0, 1), rng.randint(12, 27), rng.choice(["clear", "cloudy", "rainy"]))


# The current run's weather: `run_demo` sets it for the length of a run (a context
# variable, so two demos running at once in two threads each keep their own).
_WEATHER: contextvars.ContextVar[Weather | None] = contextvars.ContextVar("weather", default=None)

# Each source answers after a different delay, so the fan-out is visible on the timeline.
SOURCE_DELAYS: dict[str, float] = {"census": 0.12, "encyclopedia": 0.07, "news": 0.15}


class FakeChatClient:
    """Answers like ``openai.OpenAI().chat.completions.create``, offline and deterministic.

    The response is a plain dict with ``model`` and ``usage``, the shape flow-xray
    recognises on ``llm`` spans, so tokens and cost are recorded with no extra code.
    """

    @trace(name="chat.completions.create", kind="llm")
    def create(
        self,
        *,
        model: str,
        messages: list[dict[str, str]],
        tools: list[dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        """Return a chat completion for ``messages``."""
        time.sleep(0.1)  # network round trip
        prompt = messages[-1]["content"]
        if prompt.startswith("Plan"):
            reply = (
                "1. Retrieve background documents. 2. Search for the population. "
                "3. Check several sources at once. 4. Get the weather. "
                "5. Compute the density. 6. Write the answer."
            )
        else:
            facts = prompt.split("Facts:\n", 1)[-1].splitlines()
            reply = "Based on the sources I checked: " + "; ".join(facts) + "."
        prompt_tokens = sum(_count_tokens(m["content"]) + 4 for m in messages)
        prompt_tokens += _count_tokens(json.dumps(tools)) if tools else 0
        completion_tokens = _count_tokens(reply)
        return {
            "id": f"chatcmpl-demo-{prompt_tokens}",
            "object": "chat.completion",
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": reply},
                    "finish_reason": "stop",
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }


llm = FakeChatClient()


@trace(kind="retriever")
def retrieve_docs(query: str, k: int = 2) -> list[dict[str, Any]]:
    """Return the ``k`` corpus documents that share the most words with ``query``."""
    time.sleep(0.04)
    ranked = sorted(CORPUS.items(), key=lambda item: (-_overlap(query, item[1]), item[0]))
    return [
        {"id": doc_id, "text": text, "score": _overlap(query, text)} for doc_id, text in ranked[:k]
    ]


@trace(kind="tool")
def web_search(query: str) -> list[str]:
    """Return the ids of corpus documents that mention every word of ``query``."""
    time.sleep(0.06)
    words = query.lower().split()
    return [doc_id for doc_id, text in CORPUS.items() if all(w in text.lower() for w in words)]


@trace(kind="tool")
def calculator(expression: str) -> float:
    """Evaluate an arithmetic expression (numbers and + - * / ** only)."""
    time.sleep(0.01)
    return _evaluate(ast.parse(expression, mode="eval").body)


@trace(kind="retriever")
async def fetch_source(name: str) -> dict[str, Any]:
    """Ask one (simulated) remote source for Tokyo's population."""
    await asyncio.sleep(SOURCE_DELAYS[name])
    return {"source": name, "population_millions": 14.0}


@trace
async def gather_sources(names: list[str]) -> list[dict[str, Any]]:
    """Query every source concurrently; each call is its own span under this one."""
    return list(await asyncio.gather(*(fetch_source(name) for name in names)))


@trace(kind="tool")
def weather_api(city: str, attempt: int) -> dict[str, Any]:
    """A flaky weather service: the first attempt times out (by default)."""
    time.sleep(0.05)
    weather = _WEATHER.get() or Weather()
    if attempt <= weather.timeouts:
        raise TimeoutError(f"weather service did not answer for {city!r} within 50 ms")
    return {"city": city, "temp_c": weather.temp_c, "sky": weather.sky}


@trace
def get_weather(city: str, attempts: int = 2) -> dict[str, Any]:
    """Call ``weather_api``, retrying after a timeout; the failed attempt stays in the trace."""
    for attempt in range(1, attempts + 1):
        try:
            return weather_api(city, attempt=attempt)
        except TimeoutError:
            if attempt == attempts:
                raise
            time.sleep(0.02)  # back off before retrying
    raise ValueError("attempts must be at least 1")


@trace
def stream_answer(text: str) -> Iterator[str]:
    """Yield the answer a few words at a time, as a streaming UI would."""
    words = text.split()
    for start in range(0, len(words), 8):
        time.sleep(0.01)
        yield " ".join(words[start : start + 8]) + " "


@trace(kind="agent")
def research_agent(question: str) -> str:
    """Plan, gather facts with tools, and write an answer to ``question``."""
    trace.annotate(user="demo-user", session="demo-session")
    system = {"role": "system", "content": SYSTEM_PROMPT}
    plan = [system, {"role": "user", "content": f"Plan: {question}"}]
    llm.create(model=MODEL, messages=plan, tools=TOOLS)

    docs = retrieve_docs("tokyo population area", k=2)
    hits = web_search("tokyo parks")
    sources = asyncio.run(gather_sources(list(SOURCE_DELAYS)))
    weather = get_weather("Tokyo")
    population = sources[0]["population_millions"] * 1_000_000
    density = calculator(f"{population:.0f} / 2194")

    walk = "a good day" if weather["sky"] == "clear" else "not the best day"
    facts = [
        f"about {population / 1e6:.0f} million people ({len(sources)} sources agree)",
        f"{density:,.0f} people per square kilometre (from {', '.join(d['id'] for d in docs)})",
        f"{weather['temp_c']} °C and {weather['sky']} skies, {walk} for a walk ({hits[0]})",
    ]
    context = "\n".join(doc["text"] for doc in docs)
    prompt = f"Answer {question!r}.\nContext:\n{context}\nFacts:\n" + "\n".join(facts)
    answer = [system, {"role": "user", "content": prompt}]
    response = llm.create(model=MODEL, messages=answer, tools=TOOLS)
    return "".join(stream_answer(response["choices"][0]["message"]["content"])).strip()


def run_demo(seed: int | None = None) -> TraceResult:
    """Run the agent on the demo question and return its trace.

    Without ``seed`` every run is the same; with one, the weather service
    varies as `Weather.from_seed` says (a retry or none, another temperature).
    """
    token = _WEATHER.set(Weather() if seed is None else Weather.from_seed(seed))
    try:
        with trace.capture() as result:
            research_agent(QUESTION)
    finally:
        _WEATHER.reset(token)
    return result


def main(argv: list[str] | None = None) -> None:
    """Write the demo trace viewer to ``argv[0]`` (default ``flow_xray_demo.html``)."""
    args = sys.argv[1:] if argv is None else argv
    path = args[0] if args else DEFAULT_OUTPUT
    result = run_demo()
    result.to_html(path, title="flow-xray demo: research agent")
    print(f"wrote {path} — {result.totals.summary()}")


_OPERATORS: dict[type[ast.operator], Callable[[float, float], float]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.Pow: operator.pow,
}


def _evaluate(node: ast.expr) -> float:
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        return float(node.value)
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        return _OPERATORS[type(node.op)](_evaluate(node.left), _evaluate(node.right))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_evaluate(node.operand)
    raise ValueError(f"unsupported expression: {ast.unparse(node)}")


def _count_tokens(text: str) -> int:
    # Roughly what a BPE tokenizer gives for English: four tokens per three words.
    return len(text.split()) * 4 // 3 + 1


def _overlap(query: str, text: str) -> int:
    words = set(re.findall(r"[a-z0-9]+", text.lower()))
    return sum(word in words for word in query.lower().split())


if __name__ == "__main__":
    main()
