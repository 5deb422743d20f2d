"""Figures as a person writes them: the summary lines of every command and of `Totals`."""

from __future__ import annotations

import pytest

from flow_xray.tree.figures import cost, count, duration
from flow_xray.tree.model import Totals


def totals(**changes: object) -> Totals:
    """Totals of a small trace without LLM calls, with ``changes`` applied."""
    fields: dict[str, object] = {
        "nodes": 3,
        "errors": 0,
        "wall_time_ms": 12.34,
        "prompt_tokens": 0,
        "completion_tokens": 0,
        "total_tokens": 0,
        "cost_usd": None,
    }
    fields.update(changes)
    return Totals(**fields)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("n", "text"), [(0, "0 calls"), (1, "1 call"), (2, "2 calls"), (101_001, "101,001 calls")]
)
def test_counts_agree_and_have_separators(n: int, text: str) -> None:
    """One call, several calls, thousands separated by commas."""
    assert count(n, "call") == text


@pytest.mark.parametrize(
    ("ms", "text"),
    [
        (0.052, "0.05 ms"),
        (4.2, "4.20 ms"),
        (695.74, "695.7 ms"),
        (999.97, "1.00 s"),
        (4_210.0, "4.21 s"),
        (19_409.1, "19.4 s"),
        (192_000.0, "3 min 12 s"),
        (9_000_000.0, "2 h 30 min"),
        (float("nan"), "unknown"),
    ],
)
def test_durations_switch_to_seconds_and_minutes(ms: float, text: str) -> None:
    """Milliseconds below a second, seconds below a minute, then minutes and hours."""
    assert duration(ms) == text


@pytest.mark.parametrize(
    ("usd", "text"),
    [
        (0.0, "$0"),
        (0.0000274, "$0.000027"),
        (6.4e-7, "$0.00000064"),
        (0.0042, "$0.0042"),
        (0.05, "$0.05"),
        (0.4249, "$0.42"),
        (0.999, "$1.00"),
        (1234.5, "$1,234.50"),
    ],
)
def test_costs_keep_two_significant_digits(usd: float, text: str) -> None:
    """A real cost is never rounded to zero, and never written in exponent form."""
    assert cost(usd) == text


def test_summary_of_a_one_call_trace() -> None:
    """``1 call``, not ``1 nodes``; no tokens or cost phrase without LLM usage."""
    assert totals(nodes=1, wall_time_ms=0.05).summary() == "1 call, 0 errors, 0.05 ms"


def test_summary_of_a_large_slow_trace() -> None:
    """Separators in the count and seconds past ten seconds."""
    line = totals(nodes=101_001, wall_time_ms=19_409.1).summary()
    assert line == "101,001 calls, 0 errors, 19.4 s"


def test_summary_with_llm_usage_has_tokens_and_a_real_cost() -> None:
    """Tokens with separators and the cost to two significant digits (never ``$0.0000``)."""
    line = totals(total_tokens=1_234, prompt_tokens=1_000, cost_usd=0.0000274).summary()
    assert line == "3 calls, 0 errors, 12.3 ms, 1,234 tokens, $0.000027"


def test_summary_with_tokens_but_no_price_says_cost_unknown() -> None:
    """Usage without a known price: the tokens, then ``cost unknown``."""
    assert totals(total_tokens=10).summary().endswith(", 10 tokens, cost unknown")


def test_summary_says_which_failures_were_handled() -> None:
    """A run that recovered says its failures were handled."""
    assert totals(errors=1, handled_errors=1).summary().startswith("3 calls, 1 error (handled),")
    assert totals(errors=3, handled_errors=1).summary().startswith("3 calls, 3 errors (1 handled),")


def test_summary_counts_dropped_and_stopped_calls() -> None:
    """Calls a capped capture left out, cancelled and interrupted calls are named."""
    line = totals(dropped_spans=1_500, cancelled=2, interrupted=1).summary()
    assert line == (
        "3 calls (1,500 more calls dropped), 0 errors, 2 cancelled, 1 interrupted, 12.3 ms"
    )
