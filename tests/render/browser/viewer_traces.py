"""Traces for the viewer tests and benchmark, built as plain data in the JSON schema."""

from __future__ import annotations

from typing import Any

HOSTILE = "</script><img src=x onerror=alert(1)>"
TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"


def node(
    index: int,
    name: str,
    kind: str,
    start_ms: float,
    latency_ms: float | None,
    parent: int | None,
    **fields: Any,
) -> dict[str, Any]:
    """One node dict with deterministic ids; ``fields`` override the defaults."""
    base: dict[str, Any] = {
        "id": f"n{index:04d}",
        "name": name,
        "kind": kind,
        "inputs": {},
        "output": None,
        "error": None,
        "traceback": None,
        "latency_ms": latency_ms,
        "start_ms": start_ms,
        "status": "ok",
        "incomplete": False,
        "trace_id": TRACE_ID,
        "span_id": f"{index:016x}",
        "parent_id": None if parent is None else f"{parent:016x}",
        "meta": {},
        "attributes": {"code.function.name": name},
        "events": [],
        "children": [],
    }
    base.update(fields)
    return base


TRACEBACK = """Traceback (most recent call last):
  File "agent.py", line 41, in run_tool
    return tool(**arguments)
  File "tools/weather.py", line 18, in get_weather
    raise TimeoutError("weather API did not answer within 2.0 s")
TimeoutError: weather API did not answer within 2.0 s"""


def agent_trace() -> dict[str, Any]:
    """A realistic agent run: planner LLM call, an async fan-out of three retrievers,
    a tool that works, a tool that fails with a traceback, and a final answer LLM call."""
    question = "Should I bike to the Louvre tomorrow morning, and what exhibits are on?"
    retrievers = [
        node(
            3 + k,
            "retrieve",
            "retriever",
            48.0 + k * 1.5,
            latency,
            2,
            inputs={"query": question, "index": index, "top_k": 4},
            output=[
                {"doc": f"{index}/{d}", "score": round(0.91 - d * 0.07 - k * 0.02, 2)}
                for d in range(3)
            ],
        )
        for k, (index, latency) in enumerate(
            [("museum-guides", 182.4), ("paris-events", 244.9), ("transit-notes", 131.2)]
        )
    ]
    search = node(
        2,
        "gather_context",
        "chain",
        47.1,
        247.8,
        0,
        inputs={"question": question, "sources": 3},
        output={"documents": 9},
        children=retrievers,
    )
    plan = node(
        1,
        "plan",
        "llm",
        1.2,
        44.6,
        0,
        inputs={"messages": [{"role": "user", "content": question}], "max_tokens": 256},
        output={"tool_calls": ["get_weather", "get_exhibits"]},
        meta={
            "model": "gpt-4o-mini",
            "prompt_tokens": 412,
            "completion_tokens": 58,
            "total_tokens": 470,
            "estimated_cost_usd": 0.0000966,
        },
    )
    exhibits = node(
        6,
        "get_exhibits",
        "tool",
        297.3,
        88.2,
        0,
        inputs={"museum": "Louvre", "date": "2025-06-14"},
        output=["Mona Lisa (Salle des États)", "Egyptian Antiquities", "Vermeer drawings"],
    )
    weather = node(
        7,
        "get_weather",
        "tool",
        298.0,
        2003.5,
        0,
        inputs={"city": "Paris", "when": "tomorrow 08:00", "units": "metric"},
        error="TimeoutError: weather API did not answer within 2.0 s",
        traceback=TRACEBACK,
        status="error",
        events=[
            {
                "name": "exception",
                "time_ms": 2301.5,
                "attributes": {"exception.type": "TimeoutError"},
            }
        ],
    )
    answer = node(
        8,
        "answer",
        "llm",
        2304.0,
        612.7,
        0,
        inputs={"question": question, "context_docs": 9, "weather": None},
        output="The Louvre opens at 9:00; exhibits on tomorrow include the Vermeer drawings. "
        "I could not get the weather forecast, so check the sky before you bike.",
        meta={
            "model": "gpt-4o",
            "prompt_tokens": 1830,
            "completion_tokens": 142,
            "total_tokens": 1972,
            "estimated_cost_usd": 0.006995,
            "temperature": 0.2,
        },
    )
    root = node(
        0,
        "travel_agent",
        "agent",
        0.0,
        2921.4,
        None,
        inputs={"question": question, "user_id": "u-1842"},
        output=answer["output"],
        children=[plan, search, exhibits, weather, answer],
    )
    return {
        "version": 1,
        "totals": {
            "nodes": 9,
            "errors": 1,
            "wall_time_ms": 2921.4,
            "prompt_tokens": 2242,
            "completion_tokens": 200,
            "total_tokens": 2442,
            "cost_usd": 0.0070916,
        },
        "nodes": [root],
    }


def hostile_trace() -> dict[str, Any]:
    """A trace whose name, input key, input value, output, error and attribute are markup."""
    child = node(
        1,
        HOSTILE,
        "tool",
        1.0,
        3.0,
        0,
        inputs={HOSTILE: HOSTILE, "note": "\u2028line\u2029sep & <b>bold</b>"},
        output=HOSTILE,
        error=HOSTILE,
        traceback=HOSTILE,
        status="error",
        attributes={"x.hostile": HOSTILE},
    )
    root = node(0, "root", "chain", 0.0, 5.0, None, children=[child])
    return {"version": 1, "nodes": [root]}


def _cover_children(root: dict[str, Any]) -> None:
    """Stretch each parent's latency to end no earlier than its last child (post-order)."""
    order: list[dict[str, Any]] = []
    stack = [root]
    while stack:
        item = stack.pop()
        order.append(item)
        stack.extend(item["children"])
    for item in reversed(order):
        for child in item["children"]:
            end = child["start_ms"] + child["latency_ms"] - item["start_ms"]
            item["latency_ms"] = max(item["latency_ms"], round(end, 3))


def wide_trace(count: int) -> dict[str, Any]:
    """A trace of exactly ``count`` nodes: one root, batches of 100 steps, each with 9 calls.

    Every 97th node fails. Built iteratively; the shape resembles a long agent loop.
    """
    made = 0

    def make(name: str, kind: str, parent: int | None) -> dict[str, Any]:
        nonlocal made
        index = made
        made += 1
        failed = index % 97 == 96
        return node(
            index,
            name,
            kind,
            index * 0.5,
            4.0 + index % 13,
            parent,
            inputs={"step": index, "query": f"question number {index}"},
            output=f"answer {index}",
            status="error" if failed else "ok",
            error="ValueError: bad step" if failed else None,
            meta={"model": "gpt-4o-mini", "total_tokens": 30 + index % 50} if kind == "llm" else {},
        )

    root = make("pipeline", "agent", None)
    while made < count:
        batch = make(f"batch_{made}", "chain", 0)
        root["children"].append(batch)
        while made < count and len(batch["children"]) < 100:
            step = make(f"step_{made}", "chain", int(batch["span_id"], 16))
            batch["children"].append(step)
            for kind in ("llm", "tool", "retriever", "tool", "llm", "tool", "chain", "llm", "tool"):
                if made >= count:
                    break
                step["children"].append(make(f"{kind}_{made}", kind, int(step["span_id"], 16)))
    _cover_children(root)
    return {"version": 1, "nodes": [root]}
