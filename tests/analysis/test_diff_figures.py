"""A diff's summary line words its figures as every summary does (`flow_xray.tree.figures`)."""

from __future__ import annotations

from typing import Any

from flow_xray import TraceResult
from flow_xray.analysis.diff import diff_traces


def run(latency_ms: float, cost: float | None = None) -> TraceResult:
    """One agent call; with ``cost``, an LLM call under it that cost that much."""
    children: list[dict[str, Any]] = []
    if cost is not None:
        meta = {"model": "gpt-4o-mini", "total_tokens": 30, "estimated_cost_usd": cost}
        children.append({"name": "llm", "kind": "llm", "latency_ms": 1.0, "meta": meta})
    node = {"name": "agent", "latency_ms": latency_ms, "children": children}
    return TraceResult.from_dict({"nodes": [node]})


def test_a_tiny_cost_change_keeps_its_significant_digits() -> None:
    """$0.0000274 more is written as such (a diff keeps three significant digits), never
    rounded to ``$0.0000``."""
    summary = diff_traces(run(5.0, 0.00001), run(5.0, 0.0000374)).summary()
    assert summary.endswith(", cost +$0.0000274")


def test_a_cost_that_appears_is_written_in_plain_decimals() -> None:
    """From no cost to a real one: ``unknown -> $0.00000064`` (no exponent form)."""
    summary = diff_traces(run(5.0), run(5.0, 6.4e-7)).summary()
    assert summary.endswith(", cost unknown -> $0.00000064")


def test_a_wall_time_many_times_longer_reads_as_a_multiple() -> None:
    """0.1 ms -> 642 ms is ``6,421 times as long``, not a seven-digit percentage."""
    summary = diff_traces(run(0.1), run(642.1)).summary()
    assert "wall time +642 ms (6,421 times as long)" in summary
