"""Properties of the value path: any nested data gives valid JSON within its byte budget."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st

from flow_xray.serialize import (
    Limits,
    encode_inputs,
    encode_output,
    to_jsonable,
)
from tests.serialize.serialize_support import DEFAULT, strict_loads, utf8_size

BIG = 1 << 20


# --- properties --------------------------------------------------------------
scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=-BIG, max_value=BIG).map(lambda i: i * 10**400)
    | st.floats()
    | st.text(alphabet=st.characters(codec=None, exclude_categories=()))
    | st.binary(max_size=40)
)
hashables = st.none() | st.integers() | st.text(max_size=5) | st.booleans()
nested = st.recursive(
    scalars,
    lambda children: (
        st.lists(children, max_size=6)
        | st.lists(children, max_size=4).map(tuple)
        | st.dictionaries(st.text(max_size=10), children, max_size=6)
        | st.dictionaries(hashables, children, max_size=3)
        | st.frozensets(hashables, max_size=5)
    ),
    max_leaves=40,
)


@settings(max_examples=200, deadline=None)
@given(
    args=st.dictionaries(st.text(max_size=12), nested, max_size=5), max_bytes=st.integers(2, 3000)
)
@pytest.mark.slow
def test_encode_inputs_is_always_valid_json_within_max_bytes(
    args: dict[str, Any], max_bytes: int
) -> None:
    """For arbitrary nested data the text parses as standard JSON and fits max_bytes."""
    text = encode_inputs(args, Limits(max_items=5, max_string=50, max_depth=4), max_bytes)
    strict_loads(text)
    assert utf8_size(text) <= max_bytes


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(value=nested, max_bytes=st.integers(2, 3000))
def test_encode_output_always_fits_max_bytes(value: Any, max_bytes: int) -> None:
    """encode_output text fits max_bytes and, when JSON, parses."""
    text, mime = encode_output(value, DEFAULT, max_bytes)
    assert utf8_size(text) <= max_bytes
    if mime == "application/json":
        strict_loads(text)


simple_values = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**60), max_value=2**60)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20)
)


plain_values = st.recursive(
    simple_values,
    lambda children: (
        st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=8), children, max_size=5)
    ),
    max_leaves=20,
)


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(args=st.dictionaries(st.text(max_size=10), plain_values, max_size=6))
def test_fast_path_agrees_with_the_full_walk(args: dict[str, Any]) -> None:
    """Plain JSON-like arguments encode to exactly what to_jsonable gives."""
    assert json.loads(encode_inputs(args, DEFAULT, 8192)) == to_jsonable(args, DEFAULT)


dict_results = st.dictionaries(st.text(max_size=10), plain_values, max_size=6)


def check_a_dict_result_encodes_as_the_full_walk_does(result: dict[str, Any]) -> None:
    text, mime = encode_output(result, DEFAULT, 8192)
    assert mime == "application/json"
    assert json.loads(text) == to_jsonable(result, DEFAULT)


@settings(max_examples=25, deadline=None)
@given(result=dict_results)
def test_a_dict_result_encodes_as_the_full_walk_does_in_the_inner_loop(
    result: dict[str, Any],
) -> None:
    """The property below over 25 random results (the inner loop's share)."""
    check_a_dict_result_encodes_as_the_full_walk_does(result)


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(result=dict_results)
def test_a_dict_result_encodes_as_the_full_walk_does(result: dict[str, Any]) -> None:
    """A dict returned by a call (its own fast path) encodes to what to_jsonable gives."""
    check_a_dict_result_encodes_as_the_full_walk_does(result)


@settings(max_examples=300, deadline=None)
@given(
    result=st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats()
)
def test_a_scalar_result_is_the_json_the_full_walk_writes(result: Any) -> None:
    """An int, float, bool or None returned (their own fast path): the same text as the
    walk's JSON of the value, big ints and NaN / infinities included; within a budget too
    small for it, a text that fits."""
    text, mime = encode_output(result, DEFAULT, 8192)
    assert mime == "application/json"
    assert text == json.dumps(to_jsonable(result, DEFAULT), separators=(",", ":"))
    tight = max(2, len(text) - 1)
    assert utf8_size(encode_output(result, DEFAULT, tight)[0]) <= tight
