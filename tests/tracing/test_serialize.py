"""Specification of `flow_xray.serialize`: safe, capped, redacted value capture."""

from __future__ import annotations

import collections
import dataclasses
import datetime
import decimal
import enum
import itertools
import json
import math
import os
import pathlib
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st

from flow_xray.errors import ConfigurationError
from flow_xray.serialize import (
    CYCLE,
    REDACTED,
    TRUNCATION_MARKER,
    Limits,
    encode_inputs,
    encode_output,
    get_limits,
    is_secret_name,
    safe_repr,
    set_limits,
    to_jsonable,
)

DEFAULT = Limits()
BIG = 1 << 20


def strict_loads(text: str) -> Any:
    """Parse JSON as a standard parser would: NaN and Infinity are errors."""

    def refuse(name: str) -> Any:
        raise ValueError(f"non-standard JSON constant {name}")

    return json.loads(text, parse_constant=refuse)


def utf8_size(text: str) -> int:
    return len(text.encode("utf-8"))


@pytest.fixture
def restore_limits() -> Iterator[None]:
    saved = get_limits()
    yield
    set_limits(**{f.name: getattr(saved, f.name) for f in dataclasses.fields(Limits)})


# --- limits ------------------------------------------------------------------
def test_default_limits_are_the_documented_caps() -> None:
    """Defaults: 8 KiB per value, 64 KiB per span, depth 8, 200 items, 8192 chars, redaction on."""
    assert dataclasses.astuple(Limits()) == (8192, 65536, 8, 200, 8192, True, (), (), ())


def test_set_limits_replaces_fields_and_get_limits_returns_them(restore_limits: None) -> None:
    """set_limits returns the new process-wide Limits, which get_limits then returns."""
    new = set_limits(max_items=5, redact_patterns=["ssn"])
    assert new == get_limits()
    assert (new.max_items, new.redact_patterns, new.max_depth) == (5, ("ssn",), 8)


def test_set_limits_rejects_unknown_fields(restore_limits: None) -> None:
    """An unknown field name is a ConfigurationError and changes nothing."""
    before = get_limits()
    with pytest.raises(ConfigurationError, match="max_itemz"):
        set_limits(max_itemz=3)
    assert get_limits() == before


@pytest.mark.parametrize("value", [0, -1, 1.5, True, "10", None])
def test_set_limits_rejects_caps_that_are_not_positive_ints(
    value: object, restore_limits: None
) -> None:
    """Caps must be positive ints; anything else is a ConfigurationError."""
    with pytest.raises(ConfigurationError):
        set_limits(max_value_bytes=value)


def test_set_limits_rejects_invalid_regex(restore_limits: None) -> None:
    """A redact pattern that does not compile is a ConfigurationError."""
    with pytest.raises(ConfigurationError, match="bad redact pattern"):
        set_limits(redact_patterns=("([unclosed",))


# --- JSON conversion ---------------------------------------------------------
def test_primitives_pass_through_unchanged() -> None:
    """str, int, float, bool and None are already JSON and come back as they are."""
    value = {"s": "x", "i": -3, "f": 1.5, "t": True, "n": None}
    assert to_jsonable(value, DEFAULT) == value


def test_non_string_keys_are_converted_like_json_dumps() -> None:
    """int, float, bool and None keys become the strings json.dumps would write."""
    keys = {2: "a", 2.5: "b", True: "c", None: "d"}
    assert to_jsonable(keys, DEFAULT) == json.loads(json.dumps(keys))


def test_other_keys_use_their_repr() -> None:
    """A tuple key is written as its repr."""
    assert to_jsonable({(1, 2): "x"}, DEFAULT) == {"(1, 2)": "x"}


def test_tuples_and_deques_become_lists() -> None:
    """Sequences other than list are written as JSON arrays."""
    assert to_jsonable(((1, 2), collections.deque([3])), DEFAULT) == [[1, 2], [3]]


def test_sets_are_sorted() -> None:
    """Sets and frozensets come out sorted, whatever their insertion order."""
    assert to_jsonable({3, 1, 2}, DEFAULT) == [1, 2, 3]
    assert to_jsonable(frozenset({"b", "a"}), DEFAULT) == ["a", "b"]


def test_unorderable_sets_are_sorted_by_repr() -> None:
    """A set mixing types that cannot be compared is ordered by each element's repr."""
    assert to_jsonable({1, "a", None}, DEFAULT) == ["a", 1, None]


def test_set_order_does_not_depend_on_hash_seed() -> None:
    """Two interpreters with different hash seeds write the same text for the same set."""
    code = (
        "from flow_xray.serialize import encode_inputs, Limits;"
        "print(encode_inputs({'s': {'pear', 'fig', 1, 'kiwi', (2, 'x')}}, Limits(), 1000))"
    )
    outputs = {
        subprocess.run(
            [sys.executable, "-c", code],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in ("1", "2", "3")
    }
    assert len(outputs) == 1


def test_dataclasses_become_objects_without_copying() -> None:
    """A dataclass becomes a dict of its fields, even when a field cannot be copied."""

    @dataclasses.dataclass
    class Job:
        name: str
        lock: Any

    out = to_jsonable(Job("x", threading.Lock()), DEFAULT)
    assert out["name"] == "x"
    assert out["lock"].startswith("<unlocked _thread.lock object")


def test_model_dump_objects_become_objects() -> None:
    """An object with model_dump() (pydantic style) is written as what it dumps."""

    class Model:
        def model_dump(self) -> dict[str, Any]:
            return {"a": 1, "when": datetime.date(2024, 1, 2)}

    assert to_jsonable(Model(), DEFAULT) == {"a": 1, "when": "2024-01-02"}


def test_failing_model_dump_falls_back_to_repr() -> None:
    """A model_dump() that raises does not break capture: the repr is used."""

    class Model:
        def model_dump(self) -> dict[str, Any]:
            raise RuntimeError("boom")

        def __repr__(self) -> str:
            return "Model(?)"

    assert to_jsonable(Model(), DEFAULT) == "Model(?)"


def test_namedtuples_become_objects() -> None:
    """Objects with _asdict() (namedtuples) are written with their field names."""
    point = collections.namedtuple("Point", "x y")(1, 2)
    assert to_jsonable(point, DEFAULT) == {"x": 1, "y": 2}


def test_enums_become_their_value() -> None:
    """An enum member is written as its value."""

    class Color(enum.Enum):
        RED = "red"

    assert to_jsonable([Color.RED], DEFAULT) == ["red"]


def test_standard_scalars_become_strings() -> None:
    """datetime, date, time, timedelta, UUID, Decimal and paths have readable string forms."""
    values = [
        datetime.datetime(2024, 5, 6, 7, 8, 9),
        datetime.date(2024, 5, 6),
        datetime.time(7, 8),
        datetime.timedelta(seconds=90),
        uuid.UUID(int=1),
        decimal.Decimal("1.10"),
        pathlib.PurePosixPath("/a/b"),
    ]
    assert to_jsonable(values, DEFAULT) == [
        "2024-05-06T07:08:09",
        "2024-05-06",
        "07:08:00",
        "0:01:30",
        "00000000-0000-0000-0000-000000000001",
        "1.10",
        "/a/b",
    ]


def test_bytes_are_summarised_with_length_and_prefix() -> None:
    """bytes become '<bytes len=N b'...'…>' with a short prefix, never the whole payload."""
    out = to_jsonable(b"\x89PNG" + b"\x00" * 10_000, DEFAULT)
    assert out.startswith("<bytes len=10004 b'\\x89PNG")
    assert len(out) < 200


def test_non_finite_floats_become_strings() -> None:
    """NaN and infinities are written as strings so the JSON stays standard."""
    text = encode_inputs({"v": [math.nan, math.inf, -math.inf]}, DEFAULT, 100)
    assert strict_loads(text) == {"v": ["NaN", "Infinity", "-Infinity"]}


def test_huge_ints_are_summarised() -> None:
    """An int too long to print as a JSON number becomes a summary string."""
    assert to_jsonable(10**5000, DEFAULT) == "<int bits=16610>"


def test_other_objects_use_repr_without_memory_addresses() -> None:
    """Unknown objects fall back to repr, with ' at 0x…' removed so output is deterministic."""

    class Thing:
        pass

    out = to_jsonable(Thing(), DEFAULT)
    assert out.startswith("<") and out.endswith(".Thing object>")
    assert "0x" not in out


def test_generators_are_not_consumed() -> None:
    """A generator is shown by repr and still yields every item afterwards."""
    gen = (i for i in range(3))
    assert "generator object" in to_jsonable(gen, DEFAULT)
    assert list(gen) == [0, 1, 2]


def test_attribute_magic_does_not_fake_known_shapes() -> None:
    """An object answering every attribute (a mock) is not taken for a namedtuple or model."""

    class Anything:
        def __getattr__(self, name: str) -> Any:
            return lambda *a, **k: {"fake": True}

        def __repr__(self) -> str:
            return "Anything()"

    assert to_jsonable(Anything(), DEFAULT) == "Anything()"


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


# --- hostile objects ---------------------------------------------------------
class BadRepr:
    def __repr__(self) -> str:
        raise RuntimeError("no repr")

    def __str__(self) -> str:
        raise RuntimeError("no str")


class BadEquality:
    """Raises from ``==`` and ``<``; hashes are distinct per instance (from a counter, never
    ``id()``), so a set of two is built without comparing them: the test's own set
    literal must not raise, only the serialiser's sorting may."""

    _instances = itertools.count()

    def __init__(self) -> None:
        self._hash = next(BadEquality._instances)

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("no eq")

    def __lt__(self, other: object) -> bool:
        raise RuntimeError("no lt")

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        return "BadEquality()"


class BadItems(dict):  # type: ignore[type-arg]
    def items(self) -> Any:
        raise RuntimeError("no items")


class BadHash:
    def __hash__(self) -> int:
        raise RuntimeError("no hash")

    def __repr__(self) -> str:
        return "BadHash()"


def test_safe_repr_reports_a_failing_repr() -> None:
    """safe_repr of an object whose __repr__ raises names the type and the exception."""
    assert safe_repr(BadRepr(), 100) == "<BadRepr object (repr failed: RuntimeError)>"


def test_safe_repr_caps_length() -> None:
    """safe_repr cuts to max_chars and appends the marker."""
    assert safe_repr("a" * 50, 10) == "'aaaaaaaaa…[truncated]"


def test_bad_repr_and_str_are_contained() -> None:
    """A value whose __repr__ and __str__ both raise is captured as a description."""
    text = encode_inputs({"x": BadRepr()}, DEFAULT, 500)
    assert strict_loads(text) == {"x": "<BadRepr object (repr failed: RuntimeError)>"}


def test_repr_returning_a_non_string_is_contained() -> None:
    """A __repr__ returning a non-str (a TypeError in repr()) is contained."""

    class Weird:
        def __repr__(self) -> Any:
            return 42

    assert safe_repr(Weird(), 100) == "<Weird object (repr failed: TypeError)>"


def test_raising_eq_lt_and_hash_are_contained() -> None:
    """Objects whose __eq__/__lt__/__hash__ raise serialise, in lists and in sets."""
    value = {"list": [BadEquality(), BadHash()], "set": {BadEquality(), BadEquality()}}
    out = strict_loads(encode_inputs(value, DEFAULT, 1000))
    assert out == {
        "list": ["BadEquality()", "BadHash()"],
        "set": ["BadEquality()", "BadEquality()"],
    }


def test_dict_subclass_with_raising_items_is_read_directly() -> None:
    """A dict subclass whose items() raises is still written from its stored entries."""
    bad = BadItems(a=1)
    assert to_jsonable({"d": bad}, DEFAULT) == {"d": {"a": 1}}


def test_raising_dataclass_field_is_contained() -> None:
    """A dataclass field whose getter raises is written as unavailable; the rest stays."""

    @dataclasses.dataclass
    class Pair:
        ok: int
        gone: int

    pair = Pair(1, 2)
    del pair.gone  # reading the field now raises AttributeError
    assert to_jsonable(pair, DEFAULT) == {"ok": 1, "gone": "<unavailable: AttributeError>"}


def test_list_subclass_with_raising_iteration_is_contained() -> None:
    """A sequence whose iteration raises becomes an error description string."""

    class Exploding(list):  # type: ignore[type-arg]
        def __iter__(self) -> Any:
            raise RuntimeError("nope")

    out = to_jsonable([Exploding([1])], DEFAULT)
    assert out == ["<Exploding object (serialization failed: RuntimeError)>"]


def test_encode_functions_never_raise_on_hostile_values() -> None:
    """encode_inputs and encode_output return valid JSON for a zoo of hostile values."""
    cyclic: list[Any] = []
    cyclic.append(cyclic)
    zoo = [BadRepr(), BadEquality(), BadItems(a=1), BadHash(), (i for i in range(2)), cyclic]
    zoo += [threading.Lock(), type, object(), 10**5000, b"\xff" * 10, memoryview(b"abc")]
    for value in zoo:
        strict_loads(encode_inputs({"v": value}, DEFAULT, 300))
        text, mime = encode_output(value, DEFAULT, 300)
        assert mime == "application/json"
        strict_loads(text)


# --- redaction ---------------------------------------------------------------
SECRET_NAMES = [
    *("password", "passwd", "secret", "api_key", "apikey", "api-key", "authorization"),
    *("access_token", "refresh_token", "cookie", "private_key", "credential", "credentials"),
    *("OPENAI_API_KEY", "db_password", "X-Api-Key", "Authorization", "client_secret"),
    *("apiKey", "dbPassword", "Set-Cookie", "AWS_SECRET_ACCESS_KEY"),
    # issue 12: the shapes 0.2.0's ten names missed
    *("token", "auth_token", "session_id", "sessionid", "sessionId", "jwt", "X-Auth-Token"),
    *("x-api-key", "csrf", "xsrf", "csrftoken", "XSRF-TOKEN", "pwd", "db_pwd", "id_token"),
    *("secret_key", "signing_key", "basic_auth", "session", "bearer", "passphrase"),
]
PLAIN_NAMES = [
    *("max_tokens", "prompt_tokens", "completion_tokens", "tokens", "token_count"),
    *("total_tokens", "token_type", "secretary", "author", "keys", "key", "cookbook", "access"),
    *("tokenizer", "input_tokens", "auth_method", "session_count", "monkey", "passenger"),
]


@pytest.mark.parametrize("name", SECRET_NAMES)
def test_secret_names_are_recognised(name: str) -> None:
    """Secret-looking names match as fragments, whatever the case or separator."""
    assert is_secret_name(name, DEFAULT)


@pytest.mark.parametrize("name", PLAIN_NAMES)
def test_token_counts_and_lookalikes_are_not_secret(name: str) -> None:
    """Token counts and words merely containing a secret fragment are not redacted."""
    assert not is_secret_name(name, DEFAULT)


def test_secret_arguments_are_redacted() -> None:
    """A secret argument name replaces the value with [REDACTED]; others are kept."""
    text = encode_inputs({"prompt": "hi", "api_key": "sk-live-123"}, DEFAULT, 1000)
    assert strict_loads(text) == {"prompt": "hi", "api_key": REDACTED}
    assert "sk-live-123" not in text


def test_secret_arguments_are_redacted_on_the_slow_path_too() -> None:
    """Redaction applies when other arguments need the full walk."""
    text = encode_inputs({"password": "hunter2", "rows": [{"a": {1, 2}}]}, DEFAULT, 1000)
    assert strict_loads(text) == {"password": REDACTED, "rows": [{"a": [1, 2]}]}


def test_secret_keys_are_redacted_at_any_depth() -> None:
    """Secret dict keys are redacted deep inside lists and dicts, and in dataclass fields."""

    @dataclasses.dataclass
    class Conn:
        host: str
        db_password: str

    value = {"cfg": [{"http": {"headers": {"Authorization": "Bearer t"}}}], "c": Conn("h", "pw")}
    out = to_jsonable(value, DEFAULT)
    assert out["cfg"][0]["http"]["headers"] == {"Authorization": REDACTED}
    assert out["c"] == {"host": "h", "db_password": REDACTED}


def test_token_counts_are_kept() -> None:
    """Token-count arguments are never redacted."""
    args = {"max_tokens": 256, "usage": {"prompt_tokens": 3, "total_tokens": 5}}
    assert strict_loads(encode_inputs(args, DEFAULT, 1000)) == args


def test_redaction_can_be_turned_off() -> None:
    """With redact=False secret-looking names keep their values."""
    limits = Limits(redact=False)
    assert to_jsonable({"password": "x"}, limits) == {"password": "x"}
    assert not is_secret_name("password", limits)


def test_extra_patterns_are_case_insensitive_searches() -> None:
    """redact_patterns are searched case-insensitively in names, in addition to the defaults."""
    limits = Limits(redact_patterns=(r"ssn", r"^pin$"))
    out = to_jsonable({"user_SSN": 1, "PIN": 2, "spin": 3, "secret": 4}, limits)
    assert out == {"user_SSN": REDACTED, "PIN": REDACTED, "spin": 3, "secret": REDACTED}


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


@settings(max_examples=200, deadline=None)
@given(result=st.dictionaries(st.text(max_size=10), plain_values, max_size=6))
def test_a_dict_result_encodes_as_the_full_walk_does(result: dict[str, Any]) -> None:
    """A dict returned by a call (its own fast path) encodes to what to_jsonable gives."""
    text, mime = encode_output(result, DEFAULT, 8192)
    assert mime == "application/json"
    assert json.loads(text) == to_jsonable(result, DEFAULT)


# --- credentials inside text ---------------------------------------------------
def test_credentials_inside_strings_are_scrubbed_and_named() -> None:
    """A key inside a prompt is replaced by a marker naming its kind; the text around stays."""
    prompt = "use sk-proj-abcdefghijklmnopqrstuvwxyz0123 to call"
    text = encode_inputs({"prompt": prompt, "n": 1}, DEFAULT, 1000)
    assert strict_loads(text) == {"prompt": "use [REDACTED:openai-key] to call", "n": 1}


def test_every_credential_trigger_passes_the_quick_check() -> None:
    """Each rule's triggers hold an anchor character or are an anchor word, so the
    one-class pre-check never skips a text a rule could match."""
    from flow_xray.serialize.secrets import ANCHOR_CHARS, ANCHOR_WORDS, VALUE_RULES

    for kind, triggers, _, _ in VALUE_RULES:
        for trigger in triggers:
            covered = any(c in trigger for c in ANCHOR_CHARS) or trigger.lower() in ANCHOR_WORDS
            assert covered, (kind, trigger)


def test_a_long_text_scrubs_the_same_twice() -> None:
    """A long text seen again (a prompt passed through to the output) gives the same result,
    and an unchanged text comes back as the very object passed."""
    from flow_xray.serialize.secrets import scrub_text

    secret = "context " * 40 + "key sk-proj-abcdefghijklmnopqrstuvwxyz0123 end"
    clean = "context " * 60
    for _ in range(2):
        assert "[REDACTED:openai-key]" in scrub_text("".join(secret), DEFAULT)
        copy = "".join(clean)
        assert scrub_text(copy, DEFAULT) is copy


def test_allow_list_and_off_switch(restore_limits: None) -> None:
    """set_redaction(allow=...) keeps listed names and kinds; enabled=False keeps everything."""
    from flow_xray import set_redaction

    args = {"session_id": "s-1", "dsn": "postgres://u:pw@h/db", "password": "x"}
    set_redaction(allow=("Session-ID", "url-password"))
    kept = strict_loads(encode_inputs(args, get_limits(), 1000))
    assert kept == {"session_id": "s-1", "dsn": "postgres://u:pw@h/db", "password": REDACTED}
    set_redaction(enabled=False)
    assert strict_loads(encode_inputs(args, get_limits(), 1000)) == args


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
