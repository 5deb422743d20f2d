"""Specification of the caps: markers, byte budgets, per-value caps before the span budget."""

from __future__ import annotations

from typing import Any

import pytest

from flow_xray.serialize import (
    CYCLE,
    TRUNCATION_MARKER,
    Limits,
    encode_inputs,
    encode_output,
    to_jsonable,
)
from tests.serialize.serialize_support import DEFAULT, strict_loads, utf8_size


# --- caps and markers --------------------------------------------------------
def test_long_strings_are_cut_with_a_marker() -> None:
    """A string longer than max_string keeps its first max_string chars plus the marker."""
    out = to_jsonable(["x" * 10_000], Limits(max_string=100))
    assert out == ["x" * 100 + "…[truncated 9,900 chars]"]


def test_long_lists_end_with_a_count_marker() -> None:
    """Past max_items a list stops with a marker item saying how many were left out."""
    out = to_jsonable(list(range(50)), Limits(max_items=10))
    assert out == [*range(10), "…[truncated] +40 more items"]


def test_long_dicts_end_with_a_count_marker() -> None:
    """Past max_items a dict stops with a marker key saying how many keys were left out."""
    out = to_jsonable({f"k{i}": i for i in range(50)}, Limits(max_items=10))
    assert len(out) == 11
    assert out["…[truncated]"] == "+40 more keys"


def test_large_sets_keep_the_smallest_items() -> None:
    """A set over max_items keeps its max_items smallest elements, in order, then a marker."""
    out = to_jsonable(set(range(1000, 0, -1)), Limits(max_items=3))
    assert out == [1, 2, 3, "…[truncated] +997 more items"]


def test_deep_nesting_is_cut_with_a_marker() -> None:
    """Containers deeper than max_depth are replaced by a summary ending in the marker."""
    value: Any = "leaf"
    for _ in range(20):
        value = [value]
    out = to_jsonable(value, Limits(max_depth=3))
    assert out == [[["<list len=1>…[truncated]"]]]


def test_self_referencing_containers_become_cycle() -> None:
    """A list or dict that contains itself writes '<cycle>' where it recurs."""
    items: list[Any] = [1]
    items.append(items)
    table: dict[str, Any] = {}
    table["me"] = table
    assert to_jsonable(items, DEFAULT) == [1, CYCLE]
    assert to_jsonable(table, DEFAULT) == {"me": CYCLE}


def test_shared_references_are_not_cycles() -> None:
    """The same object reached twice without a loop is written twice."""
    shared = [1, 2]
    assert to_jsonable({"a": shared, "b": shared}, DEFAULT) == {"a": [1, 2], "b": [1, 2]}


def test_output_fits_max_bytes_and_shows_the_marker() -> None:
    """Big content is shrunk until the JSON text fits max_bytes, leaving the marker."""
    text = encode_inputs({"rows": [{"text": "y" * 3000} for _ in range(50)]}, DEFAULT, 2000)
    assert utf8_size(text) <= 2000
    assert TRUNCATION_MARKER in text
    assert strict_loads(text)["rows"][0]["text"].startswith("yyy")


def test_max_bytes_counts_utf8_bytes() -> None:
    """The byte cap counts UTF-8 bytes, so multi-byte text is cut earlier than ASCII."""
    text, _ = encode_output({"s": "é" * 5000}, DEFAULT, 300)
    assert utf8_size(text) <= 300
    assert strict_loads(text)["s"].endswith(f"{TRUNCATION_MARKER} {5000 - 128:,} chars]")


@pytest.mark.parametrize("max_bytes", [2, 5, 16, 17, 40])
def test_tiny_byte_budgets_still_give_valid_json(max_bytes: int) -> None:
    """Even a budget too small for the content returns valid JSON within the budget."""
    text = encode_inputs({"key": "v" * 500, "other": [1, 2, 3]}, DEFAULT, max_bytes)
    strict_loads(text)
    assert utf8_size(text) <= max_bytes


def test_escape_heavy_strings_still_fit() -> None:
    """Control characters (6 bytes each once escaped) do not push the text over the cap."""
    text = encode_inputs({"x": "\x00" * 5000}, DEFAULT, 500)
    assert utf8_size(text) <= 500
    assert TRUNCATION_MARKER in text


def test_lone_surrogates_become_visible_escapes() -> None:
    """Lone surrogates (not UTF-8) in values and keys come out as their visible escapes."""
    text = encode_inputs({"x": "a\ud800b", "y": {"z\udc80": "\udfff"}}, DEFAULT, 1000)
    assert strict_loads(text) == {"x": "a\\ud800b", "y": {"z\\udc80": "\\udfff"}}
    assert utf8_size(text) <= 1000


def test_five_megabyte_string_is_capped() -> None:
    """A 5 MB string argument comes out within the caps, with the marker."""
    text = encode_inputs({"doc": "z" * 5_000_000}, DEFAULT, 8192)
    assert utf8_size(text) <= 8192
    doc = strict_loads(text)["doc"]
    assert doc.startswith("z" * 8000) and doc.endswith(" chars]")
    kept = doc.index(TRUNCATION_MARKER)
    assert doc[kept:] == f"…[truncated {5_000_000 - kept:,} chars]"


def test_million_element_list_is_capped() -> None:
    """A 1M-element list comes out as a short prefix and a marker counting the rest."""
    text = encode_inputs({"xs": list(range(1_000_000))}, DEFAULT, 8192)
    xs = strict_loads(text)["xs"]
    assert xs[:3] == [0, 1, 2]
    assert xs[-1] == f"…[truncated] +{1_000_000 - len(xs) + 1} more items"


# --- encode_output -----------------------------------------------------------
def test_string_output_is_plain_text() -> None:
    """A str return value is written as itself with text/plain."""
    assert encode_output("hello", DEFAULT, 100) == ("hello", "text/plain")


def test_long_string_output_is_cut_by_bytes() -> None:
    """A long str return value is cut to max_bytes UTF-8 bytes, marker included."""
    text, mime = encode_output("日本" * 1000, DEFAULT, 100)
    assert mime == "text/plain"
    assert utf8_size(text) <= 100
    assert text.endswith(f"{TRUNCATION_MARKER} {2000 - len(text.partition('…')[0]):,} chars]")


def test_other_output_is_json() -> None:
    """Non-str return values are JSON with application/json."""
    assert encode_output({"a": (1, 2)}, DEFAULT, 100) == ('{"a":[1,2]}', "application/json")
    assert encode_output(None, DEFAULT, 100) == ("null", "application/json")


# --- per-value caps before the span budget (issue 14) -------------------------
def test_a_5_kb_prompt_is_kept_whole_beside_its_settings() -> None:
    """The per-value cap is 8 KiB: a 5 KB prompt is not cut, and model/temperature stay."""
    prompt = "word " * 1000
    args = {"prompt": prompt, "model": "gpt-4o", "temperature": 0.2}
    assert strict_loads(encode_inputs(args, DEFAULT, 57344)) == args


def test_a_big_argument_never_drops_the_small_ones() -> None:
    """Each argument is capped alone; the biggest is the one cut, with a count of what went."""
    args = {"doc": "x" * 100_000, "notes": "y" * 20_000, "model": "gpt-4o", "top_k": 3}
    out = strict_loads(encode_inputs(args, DEFAULT, 57344))
    assert (out["model"], out["top_k"]) == ("gpt-4o", 3)
    assert out["doc"].startswith("x" * 8000) and out["doc"].endswith(" chars]")
    assert out["notes"].startswith("y" * 8000)
    tight = strict_loads(encode_inputs(args, DEFAULT, 4000))
    assert (tight["model"], tight["top_k"]) == ("gpt-4o", 3)
    assert len(tight["doc"]) == len(tight["notes"])  # the two big ones share what is left
