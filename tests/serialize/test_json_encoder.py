"""The JSON encoder every recorded value goes through: orjson where installed, writing what
the standard library's encoder writes; the standard library for what orjson refuses."""

from __future__ import annotations

import dataclasses
import datetime
import enum
import json
import math
import subprocess
import sys
import textwrap
from typing import Any

import orjson
import pytest
from hypothesis import given, strategies as st

from flow_xray.serialize import cut, encode_inputs, encode_output
from tests.serialize.serialize_support import DEFAULT

# Plain data as the fast paths and the walk hand it over: str keys, finite floats,
# ints within 64 bits, text without lone surrogates.
_TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=20)
_PLAIN = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63) + 1, 2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | _TEXT,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(_TEXT, inner, max_size=5),
    max_leaves=30,
)


def _has_float(value: Any) -> bool:
    if type(value) is float:
        return True
    items = value.values() if type(value) is dict else value if type(value) is list else ()
    return any(_has_float(item) for item in items)


def test_orjson_is_the_encoder_here() -> None:
    """Installed with flow-xray on CPython: the encoder is orjson's, not the fallback."""
    assert cut.encode_json is not cut._encode_json_std
    assert cut.encode_json({"a": [1, 2.5, "é"]}) == '{"a":[1,2.5,"é"]}'


@given(_PLAIN)
def test_orjson_writes_what_the_standard_library_writes(value: Any) -> None:
    """Same text for plain data (floats: the same number, an exponent may be written
    ``1e-7`` instead of ``1e-07``)."""
    ours, theirs = cut.encode_json(value), cut._encode_json_std(value)
    assert json.loads(ours) == json.loads(theirs)
    if not _has_float(value):
        assert ours == theirs


@given(_PLAIN, st.integers(0, 200))
def test_text_within_a_size_is_the_text_when_its_utf8_fits(value: Any, max_bytes: int) -> None:
    """``encode_json_within``: `encode_json`'s text when its UTF-8 size is at most the
    limit, else None; both encoders (orjson's, the standard library's) agree."""
    text = cut.encode_json(value)
    expected = text if len(text.encode("utf-8")) <= max_bytes else None
    assert cut.encode_json_within(value, max_bytes) == expected
    standard = cut._encode_json_std(value)
    expected_std = standard if len(standard.encode("utf-8")) <= max_bytes else None
    assert cut._encode_within_std(value, max_bytes) == expected_std


@given(st.dictionaries(_TEXT, _TEXT, max_size=8))
def test_a_dict_of_text_is_sized_as_its_json(mapping: dict[str, str]) -> None:
    """``text_dict_size`` (what the fast path budgets a dict of settings with): the UTF-8
    size of its JSON text with orjson; without it, its characters and 7 an entry."""
    assert cut.text_dict_size(mapping) == len(cut.encode_json(mapping).encode("utf-8"))
    chars = sum(len(k) + len(v) for k, v in mapping.items())
    assert cut._text_dict_size_std(mapping) == chars + 7 * len(mapping)


def test_a_dict_orjson_refuses_is_sized_by_its_characters() -> None:
    assert cut.text_dict_size({"k": "a\udc80b"}) == 1 + 3 + 7


@pytest.mark.parametrize("encode_within", [cut.encode_json_within, cut._encode_within_std])
def test_text_within_a_size_refuses_what_cannot_be_utf8(encode_within: Any) -> None:
    """Lone surrogates cannot be written as UTF-8: None, whatever the room; beside them,
    non-ASCII text is sized in bytes (two for é), not characters."""
    assert encode_within({"s": "a\udc80b"}, 10_000) is None
    assert encode_within("é" * 4, 10) == '"éééé"'
    assert encode_within("é" * 5, 11) is None


@pytest.mark.parametrize(
    "value",
    [
        {"big": 2**70},  # past 64 bits
        {"surrogate": "a\udc80b"},  # not valid UTF-8
        {1: "int key", None: "null key"},
        [True, 1.0, -0.0, 1e300],
    ],
)
def test_what_orjson_refuses_is_written_by_the_standard_library(value: Any) -> None:
    assert cut.encode_json(value) == cut._encode_json_std(value)


class _Kind(enum.IntEnum):
    ONE = 1


class _Text(str):
    pass


@dataclasses.dataclass
class _Point:
    x: int


@pytest.mark.parametrize(
    "value", [_Text("sub"), {"k": _Text("v")}, [_Kind.ONE], {"n": _Kind.ONE}], ids=repr
)
def test_subclasses_of_built_in_types_are_written_as_json_writes_them(value: Any) -> None:
    assert cut.encode_json(value) == cut._encode_json_std(value)


@pytest.mark.parametrize(
    "value", [_Point(1), datetime.date(2024, 1, 2), {"when": datetime.timezone.utc}]
)
def test_objects_json_cannot_write_are_refused_as_json_refuses_them(value: Any) -> None:
    """orjson could write a dataclass or a date; the encoder refuses them as `json` does
    (the walk converts such values before they reach it)."""
    with pytest.raises(TypeError):
        cut.encode_json(value)


def test_nan_and_infinity_never_reach_the_encoder_as_numbers() -> None:
    """orjson would write NaN as null: the fast paths leave such values to the walk, which
    writes them as text, as it did with the standard library's encoder."""
    arguments = {"loss": math.nan, "bound": [math.inf, -math.inf], "ok": 1.5}
    assert json.loads(encode_inputs(arguments, DEFAULT, 4096)) == {
        "loss": "NaN",
        "bound": ["Infinity", "-Infinity"],
        "ok": 1.5,
    }
    assert encode_output({"loss": math.nan}, DEFAULT, 4096)[0] == '{"loss":"NaN"}'
    assert orjson.dumps(math.nan) == b"null"  # (why they must not reach it)


def test_without_orjson_the_same_values_are_recorded() -> None:
    """Where orjson is not installed (PyPy), the standard library's encoder records the
    same text (numbers without exponents here)."""
    script = textwrap.dedent(
        """
        import json, sys
        sys.modules["orjson"] = None  # as if not installed
        from flow_xray.serialize import cut, encode_inputs, get_limits
        assert cut.encode_json is cut._encode_json_std
        assert cut.encode_json_within is cut._encode_within_std
        assert cut.text_dict_size is cut._text_dict_size_std
        value = {"q": "é\\u2028", "n": [1, 2.5, None, True], "d": {"k": -3}, "nan": float("nan")}
        print(encode_inputs(value, get_limits(), 4096))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60
    )
    value = {"q": "é\u2028", "n": [1, 2.5, None, True], "d": {"k": -3}, "nan": float("nan")}
    assert done.stdout.rstrip("\n") == encode_inputs(value, DEFAULT, 4096)
