"""A small traced pipeline whose runs differ in known ways, for the run-diff tests.

`run_pipeline(**changes)` runs it under a capture with `Knobs` changed from the
defaults: rename the answer, add failed attempts before the weather call
succeeds, drop the search call, slow the search down, or make the summary fail
(caught by the agent).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Any

from flow_xray import TraceResult, trace


@dataclass(frozen=True)
class Knobs:
    answer_prefix: str = "Paris"
    retries: int = 0
    use_search: bool = True
    search_ms: float = 0.0
    fail_summary: bool = False


KNOBS = Knobs()


@trace(kind="tool")
def search(query: str) -> list[str]:
    time.sleep(KNOBS.search_ms / 1000)
    return [f"{query}: doc 1", f"{query}: doc 2"]


@trace(kind="tool")
def weather_api(city: str, attempt: int) -> dict[str, Any]:
    if attempt <= KNOBS.retries:
        raise TimeoutError("weather API timed out")
    return {"city": city, "temp_c": 21}


@trace
def get_weather(city: str) -> dict[str, Any]:
    for attempt in range(1, KNOBS.retries + 2):
        try:
            return weather_api(city, attempt)
        except TimeoutError:
            continue
    raise TimeoutError("no attempt left")


@trace
def summarize(hits: list[str], weather: dict[str, Any]) -> str:
    if KNOBS.fail_summary:
        raise ValueError("nothing to summarize")
    return f"{len(hits)} documents, {weather['temp_c']} C"


@trace(kind="llm")
def answer(question: str, summary: str) -> str:
    return f"{KNOBS.answer_prefix} is the place: {summary}"


@trace(kind="agent")
def agent(question: str) -> str:
    hits = search(question) if KNOBS.use_search else []
    weather = get_weather("Paris")
    try:
        summary = summarize(hits, weather)
    except ValueError:
        summary = "no summary"
    return answer(question, summary)


def run_pipeline(**changes: Any) -> TraceResult:
    """Run the agent once with these knobs changed; return its trace."""
    global KNOBS
    saved = KNOBS
    KNOBS = replace(Knobs(), **changes)
    try:
        with trace.capture() as result:
            agent("where to go this weekend")
    finally:
        KNOBS = saved
    return result
