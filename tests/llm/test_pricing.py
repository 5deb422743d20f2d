"""Specification of `flow_xray.llm.pricing`: the dated price table and cost arithmetic."""

from __future__ import annotations

import datetime
import json
import math
from importlib import resources
from typing import Any

import pytest

from flow_xray.errors import ConfigurationError
from flow_xray.llm import pricing
from flow_xray.llm.pricing import Price, cost_usd, price_for, register_prices


def shipped_table() -> dict[str, Any]:
    text = (resources.files("flow_xray.llm") / "data" / "prices.json").read_text("utf-8")
    return dict(json.loads(text))


REQUIRED_MODELS = [
    *("gpt-4o", "gpt-4o-mini", "gpt-4.1", "gpt-4.1-mini", "gpt-4.1-nano"),
    *("o1", "o3", "o3-mini", "o4-mini", "gpt-5", "gpt-5-mini", "gpt-5-nano"),
    *("claude-3-haiku", "claude-3-5-haiku", "claude-3-5-sonnet", "claude-3-7-sonnet"),
    *("claude-sonnet-4", "claude-opus-4", "claude-opus-4-1", "claude-haiku-4-5"),
    "claude-sonnet-4-5",
    *("gemini-1.5-pro", "gemini-1.5-flash", "gemini-2.0-flash"),
    *("gemini-2.5-pro", "gemini-2.5-flash", "gemini-2.5-flash-lite"),
    *("mistral-large", "mistral-medium", "mistral-small", "codestral"),
    *("llama-3.1-8b", "llama-3.1-70b", "llama-3.1-405b", "llama-3.3-70b"),
    *("llama-4-scout", "llama-4-maverick"),
]


# --- the table ---------------------------------------------------------------
def test_table_declares_its_unit_and_a_past_check_date() -> None:
    """The JSON says USD per 1M tokens and carries an as_of date that is not in the future."""
    table = shipped_table()
    assert table["unit"] == "USD per 1M tokens"
    as_of = datetime.date.fromisoformat(table["as_of"])
    assert as_of <= datetime.date.today()


def test_prices_as_of_exposes_the_table_date() -> None:
    """PRICES_AS_OF is the as_of date of the shipped table."""
    assert shipped_table()["as_of"] == pricing.PRICES_AS_OF


@pytest.mark.parametrize("model", REQUIRED_MODELS)
def test_table_covers_every_named_family(model: str) -> None:
    """Each model family the product promises is in the shipped table."""
    assert model in shipped_table()["models"]


def test_table_prices_are_non_negative_numbers() -> None:
    """Every entry has exactly finite input and output prices >= 0."""
    for name, entry in shipped_table()["models"].items():
        assert set(entry) == {"input", "output"}, name
        assert all(
            isinstance(v, (int, float)) and math.isfinite(v) and v >= 0 for v in entry.values()
        )


def test_every_table_entry_is_found_under_its_own_name() -> None:
    """price_for(name) gives exactly the table's numbers for every shipped name."""
    for name, entry in shipped_table()["models"].items():
        assert price_for(name) == Price(entry["input"], entry["output"]), name


@pytest.mark.parametrize(
    ("model", "price"),
    [
        ("gpt-4o", Price(2.5, 10.0)),
        ("gpt-4o-mini", Price(0.15, 0.6)),
        ("claude-3-5-sonnet", Price(3.0, 15.0)),
        ("gemini-2.5-pro", Price(1.25, 10.0)),
    ],
)
def test_well_known_list_prices(model: str, price: Price) -> None:
    """A few widely published list prices, as a sanity check of the data."""
    assert price_for(model) == price


# --- name matching -----------------------------------------------------------
@pytest.mark.parametrize(
    ("spelling", "canonical"),
    [
        ("GPT-4o", "gpt-4o"),
        ("openai/gpt-4o-mini", "gpt-4o-mini"),
        ("models/gemini-2.5-pro", "gemini-2.5-pro"),
        ("anthropic/claude-3.5-sonnet", "claude-3-5-sonnet"),
        ("us.anthropic.claude-3-7-sonnet-20250219-v1:0", "claude-3-7-sonnet"),
        ("claude-3-5-sonnet-v2@20241022", "claude-3-5-sonnet"),
        ("meta-llama/Llama-3.3-70B-Instruct-Turbo", "llama-3.3-70b"),
        ("meta.llama3-1-405b-instruct-v1:0", "llama-3.1-405b"),
        ("meta-llama/Llama-4-Scout-17B-16E-Instruct", "llama-4-scout"),
    ],
)
def test_provider_prefixes_and_spellings_resolve(spelling: str, canonical: str) -> None:
    """Provider prefixes, Bedrock/Vertex names and dotted versions resolve to the table entry."""
    assert price_for(spelling) == price_for(canonical) is not None


@pytest.mark.parametrize(
    ("dated", "base"),
    [
        ("gpt-4o-2024-08-06", "gpt-4o"),
        ("gpt-4o-mini-2024-07-18", "gpt-4o-mini"),
        ("gpt-4.1-mini-2025-04-14", "gpt-4.1-mini"),
        ("claude-3-5-sonnet-20241022", "claude-3-5-sonnet"),
        ("claude-3-5-sonnet-latest", "claude-3-5-sonnet"),
        ("claude-opus-4-1-20250805", "claude-opus-4-1"),
        ("claude-opus-4-20250514", "claude-opus-4"),
        ("gemini-1.5-pro-002", "gemini-1.5-pro"),
        ("mistral-large-latest", "mistral-large"),
        ("codestral-2501", "codestral"),
    ],
)
def test_dated_and_versioned_suffixes_use_the_longest_known_prefix(dated: str, base: str) -> None:
    """Snapshot and alias suffixes resolve to the base model's price."""
    assert price_for(dated) == price_for(base) is not None


def test_an_exact_snapshot_entry_beats_its_prefix() -> None:
    """A snapshot priced differently from its family (gpt-4o-2024-05-13) keeps its own price."""
    assert price_for("gpt-4o-2024-05-13") != price_for("gpt-4o")


@pytest.mark.parametrize("model", ["no-such-model", "", "ft:gpt-4o:acme::x1", "llama-3-70b"])
def test_unknown_models_have_no_price(model: str) -> None:
    """Names not in the table (or not derivable from it) give None."""
    assert price_for(model) is None


def test_suffixes_naming_another_product_are_not_versions() -> None:
    """A known prefix followed by a tier word or a minor version is a different model: None."""
    register_prices({"acme-7": (1.0, 2.0)})
    assert price_for("acme-7-20250101") == Price(1.0, 2.0)
    assert price_for("acme-7-latest") == Price(1.0, 2.0)
    for other in ("acme-7-mini", "acme-7-pro-2025", "acme-7.5", "acme-7-1", "acme-7-realtime"):
        assert price_for(other) is None, other


def test_non_string_models_have_no_price() -> None:
    """A model that is not a str is unknown rather than an error."""
    assert price_for(None) is None  # type: ignore[arg-type]


# --- cost --------------------------------------------------------------------
def test_cost_is_tokens_times_price_per_million() -> None:
    """prompt = in x input price / 1e6, completion = out x output price / 1e6, total = sum."""
    price = price_for("gpt-4o")
    assert price is not None
    prompt, completion, total = cost_usd("gpt-4o", 1200, 300) or (0, 0, 0)
    assert prompt == pytest.approx(1200 * price.input_per_mtok / 1e6)
    assert completion == pytest.approx(300 * price.output_per_mtok / 1e6)
    assert total == pytest.approx(prompt + completion)


def test_unknown_model_has_no_cost_rather_than_zero() -> None:
    """An unknown or missing model gives None, never (0, 0, 0)."""
    assert cost_usd("no-such-model", 100, 100) is None
    assert cost_usd(None, 100, 100) is None


def test_missing_token_counts() -> None:
    """Both counts missing gives None; one missing counts as zero tokens."""
    assert cost_usd("gpt-4o", None, None) is None
    single = cost_usd("gpt-4o", None, 1_000_000)
    assert single is not None
    assert single[0] == 0.0 and single[1] == single[2] > 0


# --- user prices -------------------------------------------------------------
def test_register_prices_accepts_three_shapes() -> None:
    """A Price, an (input, output) tuple and a mapping all register."""
    register_prices(
        {
            "shape-a": Price(1.0, 2.0),
            "shape-b": (3.0, 4.0),
            "Shape-C": {"input": 5, "output": 6},
        }
    )
    assert price_for("shape-a") == Price(1.0, 2.0)
    assert price_for("shape-b") == Price(3.0, 4.0)
    assert price_for("shape-c") == Price(5.0, 6.0)


def test_register_prices_overrides_the_shipped_table() -> None:
    """A registered price replaces the shipped one, for dated names too."""
    original = price_for("gpt-4o-mini")
    assert original is not None
    try:
        register_prices({"gpt-4o-mini": (9.0, 9.0)})
        assert cost_usd("gpt-4o-mini-2024-07-18", 1_000_000, 0) == (9.0, 0.0, 9.0)
    finally:
        register_prices({"gpt-4o-mini": original})
    assert price_for("gpt-4o-mini") == original


@pytest.mark.parametrize(
    "bad",
    [(-1.0, 1.0), (math.nan, 1.0), (1.0, math.inf), (True, 1.0), ("1", 1.0), (1.0,), 5.0, {"x": 1}],
)
def test_register_prices_rejects_bad_prices_and_changes_nothing(bad: Any) -> None:
    """Negative, non-finite, boolean or malformed prices raise and register nothing."""
    with pytest.raises(ConfigurationError):
        register_prices({"fine-model": (1.0, 1.0), "bad-model": bad})
    assert price_for("fine-model") is None
    assert price_for("bad-model") is None


def test_register_prices_rejects_empty_names() -> None:
    """A blank model name is a ConfigurationError."""
    with pytest.raises(ConfigurationError):
        register_prices({" ": (1.0, 1.0)})


@pytest.mark.parametrize(
    ("model", "price"),
    [
        ("claude-opus-5-5", (4.0, 20.0)),
        ("claude-sonnet-5-5", (2.0, 10.0)),
        ("claude-opus-5", (5.0, 25.0)),
        ("claude-sonnet-5", (2.0, 10.0)),
        ("claude-fable-5-1", (10.0, 50.0)),
        ("claude-opus-4-6", (5.0, 25.0)),
        ("claude-sonnet-4-6", (3.0, 15.0)),
        ("anthropic/claude-opus-5-5", (4.0, 20.0)),
    ],
)
def test_current_anthropic_models_are_priced(model: str, price: tuple[float, float]) -> None:
    """Anthropic's current lineup has its list price (so a Claude call never shows $0)."""
    found = pricing.price_for(model)
    assert found is not None
    assert (found.input_per_mtok, found.output_per_mtok) == price


def test_a_minor_version_is_not_priced_as_its_major() -> None:
    """``claude-opus-5-5`` is not ``claude-opus-5``; an unlisted tiered model has no price."""
    five, five_five = pricing.price_for("claude-opus-5"), pricing.price_for("claude-opus-5-5")
    assert five != five_five
    assert pricing.price_for("claude-haiku-5-5") is None


def test_anthropic_prices_carry_the_date_they_were_checked() -> None:
    """The table says when Anthropic's prices were checked, apart from the rest."""
    checked = datetime.date.fromisoformat(pricing.prices_as_of("anthropic"))
    assert checked >= datetime.date.fromisoformat(pricing.prices_as_of())
    assert checked <= datetime.date.today()
    assert pricing.prices_as_of("nobody") == pricing.PRICES_AS_OF
