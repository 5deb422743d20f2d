"""Figures as a person writes them: counts, durations and costs in summary lines. No OpenTelemetry.

The one place the terminal's figures are worded (`Totals.summary`, the CLI's
lines, a diff's summary), so every command says them the same way:

- `count`: ``1 call``, ``101,001 calls`` (thousands separators, the word agreeing);
- `duration`: ``0.42 ms``, ``695.7 ms``, ``4.21 s``, ``19.4 s``, ``3 min 12 s``;
- `cost`: dollars with two significant digits below a dollar (``$0.000027``,
  ``$0.0042``, ``$0.42``), cents above (``$12.35``), ``$0`` for nothing; never
  a cost rounded to zero.

Example::

    >>> count(101001, "call"), duration(19409.1), cost(0.0000274)
    ('101,001 calls', '19.4 s', '$0.000027')
"""

from __future__ import annotations

import math
from typing import Any


def count(n: int, one: str, many: str | None = None) -> str:
    """``n`` with thousands separators and the word for one or for several (``one + "s"``)."""
    return f"{n:,} {one if n == 1 else many or one + 's'}"


def duration(ms: float) -> str:
    """A duration given in milliseconds: ms below a second, seconds below a minute, then
    minutes (and hours) with seconds. Not a number: ``unknown``."""
    if not math.isfinite(ms):
        return "unknown"
    if ms < 0:
        return "-" + duration(-ms)
    if ms < 10:
        return f"{ms:.2f} ms"
    if ms < 999.95:
        return f"{ms:.1f} ms"
    seconds = ms / 1000
    if seconds < 9.995:
        return f"{seconds:.2f} s"
    if seconds < 59.95:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {rest} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours:,} h {minutes} min"


def cost(usd: float, digits: int = 2) -> str:
    """Dollars: ``digits`` significant digits below $1 (at least two decimals, no trailing
    zeros beyond them), cents from $1 up, ``$0`` for zero. Not a number: ``unknown``.

    A diff asks for three, so two small costs that differ never read the same."""
    if not math.isfinite(usd):
        return "unknown"
    if usd < 0:
        return "-" + cost(-usd, digits)
    if usd == 0:
        return "$0"
    if usd >= 0.995:
        return f"${usd:,.2f}"
    decimals = min(max(2, digits - 1 - math.floor(math.log10(usd))), 15)
    text = f"{usd:.{decimals}f}"
    if float(text) >= 0.995:  # rounded up to a dollar
        return "$1.00"
    whole, _, fraction = text.partition(".")
    fraction = fraction.rstrip("0").ljust(2, "0")
    return f"${whole}.{fraction}"


def totals_line(totals: Any) -> str:
    """A trace's `Totals` in one line: ``12 calls, 1 error, 695.7 ms, 1,234 tokens, $0.0042``.

    Failures handled inside the trace are said so (``2 errors (1 handled)``);
    tokens and cost only when the trace has LLM usage (``cost unknown`` for
    tokens without a price); calls a capped capture left out, and cancelled or
    interrupted calls, when there are any.
    """
    dropped = totals.dropped_spans
    dropped_text = f" ({count(dropped, 'more call')} dropped)" if dropped else ""
    errors = count(totals.errors, "error")
    if totals.handled_errors:
        all_handled = totals.handled_errors == totals.errors
        errors += " (handled)" if all_handled else f" ({totals.handled_errors:,} handled)"
    stopped = "".join(
        f", {n:,} {what}"
        for n, what in ((totals.cancelled, "cancelled"), (totals.interrupted, "interrupted"))
        if n
    )
    usage = []
    if totals.total_tokens:
        usage.append(count(totals.total_tokens, "token"))
    if totals.cost_usd is not None:
        usage.append(cost(totals.cost_usd))
    elif totals.total_tokens:
        usage.append("cost unknown")
    llm = "".join(f", {part}" for part in usage)
    calls = count(totals.nodes, "call")
    return f"{calls}{dropped_text}, {errors}{stopped}, {duration(totals.wall_time_ms)}{llm}"
