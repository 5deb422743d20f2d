"""LLM prices: a dated table shipped as package data, extendable by the user.

The table (``flow_xray/llm/data/prices.json``) is read on first use. Names are
matched exactly, then without a provider prefix (``openai/gpt-4o``,
``models/gemini-2.5-pro``, ``us.anthropic.claude-…``), then by the longest known
prefix followed by a date or version suffix (``gpt-4o-2024-08-06``,
``claude-3-5-sonnet-20241022``, ``mistral-large-latest``). A suffix naming a
different product tier (``-mini``, ``-pro``, ``-realtime``, a minor version such
as ``.1``) is not a version, so ``o3-deep-research`` is unknown rather than
priced as ``o3``. Unknown models have no cost, never a zero cost.

Example:
    >>> cost_usd("gpt-4o-mini-2024-07-18", 1_000_000, 0)
    (0.15, 0.0, 0.15)
"""

from __future__ import annotations

import json
import math
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from typing import Any, Final

from flow_xray.errors import ConfigurationError

_SEPARATORS: Final = "-_@:."
_VENDOR = re.compile(r"^(?:(?:us|eu|apac|global)\.)?(?:anthropic|meta|mistral|openai|google)\.")
_LLAMA = re.compile(r"^(?:meta-)?llama-?(\d)(?:[.-](\d)(?!\d))?")
_DOTTED = re.compile(r"(?<=\d)\.(?=\d)")
# Suffix words that name another product, not a snapshot of the same one.
_OTHER_PRODUCT: Final = frozenset(
    {
        *("mini", "nano", "pro", "lite", "flash", "max", "large", "medium", "small"),
        *("realtime", "audio", "search", "deep", "transcribe", "tts", "image", "codex"),
        *("haiku", "sonnet", "opus", "16k", "32k"),
    }
)
_MINOR_VERSION = re.compile(r"^[1-9]\d?$")
_CACHE_CAP: Final = 2048


@dataclass(frozen=True, slots=True)
class Price:
    """List price of one model in USD per million tokens."""

    input_per_mtok: float
    output_per_mtok: float


class _Table:
    """The shipped prices plus user overrides; replaced, never mutated, under a lock."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.as_of: str | None = None
        self.as_of_by_provider: dict[str, str] = {}
        self.prices: dict[str, Price] | None = None
        self.cache: dict[str, Price | None] = {}

    def load(self) -> dict[str, Price]:
        prices = self.prices
        if prices is None:
            with self.lock:
                if self.prices is None:
                    table = resources.files("flow_xray.llm") / "data" / "prices.json"
                    raw = json.loads(table.read_text("utf-8"))
                    self.as_of = str(raw["as_of"])
                    self.as_of_by_provider = {
                        str(k): str(v) for k, v in (raw.get("as_of_by_provider") or {}).items()
                    }
                    self.prices = {
                        name.lower(): Price(float(p["input"]), float(p["output"]))
                        for name, p in raw["models"].items()
                    }
                prices = self.prices
        return prices


_TABLE = _Table()


def _candidates(model: str) -> list[str]:
    """Spellings of `model` to try, most specific first."""
    name = model.strip().lower()
    names = [name]
    short = _VENDOR.sub("", name.rsplit("/", 1)[-1])
    llama = _LLAMA.match(short)
    if llama:
        version = llama.group(1) + (f".{llama.group(2)}" if llama.group(2) else "")
        short = f"llama-{version}" + short[llama.end() :]
    if short.startswith("claude"):
        short = _DOTTED.sub("-", short)
    if short != name:
        names.append(short)
    return names


def _by_prefix(name: str, prices: Mapping[str, Price]) -> Price | None:
    """Longest known prefix of `name` that is followed by a version-like suffix."""
    for cut in range(len(name) - 1, 0, -1):
        if name[cut] not in _SEPARATORS:
            continue
        price = prices.get(name[:cut])
        if price is None:
            continue
        segment = re.split(r"[-_@:.]", name[cut + 1 :], maxsplit=1)[0]
        if segment in _OTHER_PRODUCT or _MINOR_VERSION.match(segment):
            return None
        return price
    return None


def price_for(model: str) -> Price | None:
    """Return the price of `model`, or None when it is not in the table.

    Example: ``price_for("anthropic/claude-3-5-sonnet-20241022")`` gives
    ``Price(input_per_mtok=3.0, output_per_mtok=15.0)``.
    """
    if not isinstance(model, str) or not model:
        return None
    prices = _TABLE.load()
    cache = _TABLE.cache
    if model in cache:
        return cache[model]
    names = _candidates(model)
    found = next((prices[n] for n in names if n in prices), None)
    if found is None:
        found = next((p for n in names if (p := _by_prefix(n, prices)) is not None), None)
    if len(cache) >= _CACHE_CAP:
        cache.clear()
    cache[model] = found
    return found


def cost_usd(
    model: str | None, input_tokens: int | None, output_tokens: int | None
) -> tuple[float, float, float] | None:
    """Return ``(prompt, completion, total)`` cost in USD, or None when unknown.

    None when the model is missing or not in the table, or when both token
    counts are missing; a single missing count costs nothing.
    """
    if model is None or (input_tokens is None and output_tokens is None):
        return None
    price = price_for(model)
    if price is None:
        return None
    prompt = round((input_tokens or 0) * price.input_per_mtok / 1e6, 12)
    completion = round((output_tokens or 0) * price.output_per_mtok / 1e6, 12)
    return prompt, completion, round(prompt + completion, 12)


def _to_price(name: str, value: Any) -> Price:
    pair: Any
    if isinstance(value, Price):
        pair = (value.input_per_mtok, value.output_per_mtok)
    elif isinstance(value, Mapping):
        pair = (
            value.get("input", value.get("input_per_mtok")),
            value.get("output", value.get("output_per_mtok")),
        )
    elif isinstance(value, tuple) and len(value) == 2:
        pair = value
    else:
        raise ConfigurationError(f"price for {name!r} must be a Price, (input, output) or mapping")
    for number in pair:
        if (
            isinstance(number, bool)
            or not isinstance(number, (int, float))
            or not math.isfinite(number)
            or number < 0
        ):
            raise ConfigurationError(f"price for {name!r} must be finite USD >= 0, got {number!r}")
    return Price(float(pair[0]), float(pair[1]))


def register_prices(
    prices: Mapping[str, Price | tuple[float, float] | Mapping[str, float]],
) -> None:
    """Add or override model prices (USD per million tokens) for this process.

    Values may be a `Price`, an ``(input, output)`` tuple, or a mapping with
    ``input`` / ``output`` keys. Registered names take part in prefix matching.

    Example: ``register_prices({"my-finetune": (0.3, 1.2)})``.

    Raises:
        ConfigurationError: a name is empty or a price is negative, non-finite or malformed.
    """
    parsed: dict[str, Price] = {}
    for name, value in prices.items():
        if not isinstance(name, str) or not name.strip():
            raise ConfigurationError(f"model name must be a non-empty str, got {name!r}")
        parsed[name.strip().lower()] = _to_price(name, value)
    _TABLE.load()
    with _TABLE.lock:
        _TABLE.prices = {**(_TABLE.prices or {}), **parsed}
        _TABLE.cache = {}


def prices_as_of(provider: str | None = None) -> str:
    """The date the shipped prices were checked: the table's, or one provider's when its
    prices were checked later (``prices_as_of("anthropic")``)."""
    _TABLE.load()
    if provider is not None and provider.lower() in _TABLE.as_of_by_provider:
        return _TABLE.as_of_by_provider[provider.lower()]
    return _TABLE.as_of or ""


def __getattr__(name: str) -> str:
    if name == "PRICES_AS_OF":
        return prices_as_of()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [  # noqa: F822
    "PRICES_AS_OF",
    "Price",
    "cost_usd",
    "price_for",
    "prices_as_of",
    "register_prices",
]
