"""LLM usage and prices: response shapes to token counts, and a dated price table. No OpenTelemetry.

`usage` recognises OpenAI / Anthropic / Gemini responses and builds the span
attributes; `streams` folds streamed responses into one usage; `messages`
reads and writes chat messages; `requests` holds the one rule for "are these
two usage figures the same LLM request" (recording and the tree's accounting
both ask it); `pricing` holds the price table (``data/prices.json``),
extendable with ``register_prices`` (also importable from ``flow_xray``).
"""

from __future__ import annotations

from flow_xray.llm.pricing import Price, cost_usd, price_for, register_prices
from flow_xray.llm.usage import Usage, make_usage, usage_attributes, usage_from_response

__all__ = [
    "Price",
    "Usage",
    "cost_usd",
    "make_usage",
    "price_for",
    "register_prices",
    "usage_attributes",
    "usage_from_response",
]
