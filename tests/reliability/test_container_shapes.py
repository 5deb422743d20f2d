"""Property: every container shape is read within the cap, running no user hook it need not.

Random nestings of the shapes a program passes (list, tuple, set, frozenset,
deque, dict, OrderedDict, ChainMap, MappingProxyType, dict views,
``functools.partial``, ``argparse.Namespace``, ``SimpleNamespace``,
namedtuple, dataclass, UserDict, UserList) over plain values, hostile
objects (hooks raising ``BaseException``s) and tripwires (a lazy object, an
``_asdict()`` of its own, comparisons) go through a traced call: the caller
gets the very object back, the recorded input stays within its cap and
parses as JSON, and no tripwire runs. Big ones (2M-item partial, Namespace,
ChainMap) are read without building anything big: measured by allocation.
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import functools
import json
import tracemalloc
import types
from collections.abc import Callable
from typing import Any

import pytest
from hostile_values import HOOKS, STOPS, BlockingAsDict, LazyObject, Ordered, Tripwire, hostile
from hypothesis import HealthCheck, example, given, settings, strategies as st

from flow_xray import trace
from flow_xray.serialize import get_limits

pytestmark = pytest.mark.filterwarnings("ignore:mypy_extensions.TypedDict:DeprecationWarning")

Pair = collections.namedtuple("Pair", "left right")


@dataclasses.dataclass
class Box:
    content: Any
    label: str = "box"


def _hostile_leaf(hook: str, stop: str) -> Any:
    return hostile(hook, STOPS[stop])


LEAVES = st.one_of(
    st.integers(),
    st.floats(allow_nan=True),
    st.text(max_size=20),
    st.binary(max_size=20),
    st.none(),
    st.builds(
        _hostile_leaf,
        st.sampled_from([h for h in HOOKS if h not in ("__hash__", "__eq__")]),
        st.sampled_from(list(STOPS)),
    ),
    st.builds(LazyObject, st.just(dict)),
    st.builds(BlockingAsDict),
    st.builds(Ordered, st.integers(0, 10)),
)
HASHABLE = st.one_of(st.integers(), st.text(max_size=10), st.builds(Ordered, st.integers(0, 9)))

# Each shape: a strategy of its children -> the container built from them.
SHAPES: dict[str, Callable[[st.SearchStrategy[Any]], st.SearchStrategy[Any]]] = {
    "list": lambda c: st.lists(c, max_size=5),
    "tuple": lambda c: st.lists(c, max_size=5).map(tuple),
    "deque": lambda c: st.lists(c, max_size=5).map(collections.deque),
    "UserList": lambda c: st.lists(c, max_size=5).map(collections.UserList),
    "dict": lambda c: st.dictionaries(st.text(max_size=8), c, max_size=5),
    "OrderedDict": lambda c: st.dictionaries(st.text(max_size=8), c, max_size=5).map(
        collections.OrderedDict
    ),
    "UserDict": lambda c: st.dictionaries(st.text(max_size=8), c, max_size=5).map(
        collections.UserDict
    ),
    "ChainMap": lambda c: st.lists(
        st.dictionaries(st.text(max_size=4), c, max_size=3), max_size=3
    ).map(lambda maps: collections.ChainMap(*maps)),
    "MappingProxyType": lambda c: st.dictionaries(st.text(max_size=8), c, max_size=5).map(
        types.MappingProxyType
    ),
    "dict.values()": lambda c: st.dictionaries(st.text(max_size=8), c, max_size=5).map(
        lambda d: d.values()
    ),
    "dict.items()": lambda c: st.dictionaries(st.text(max_size=8), c, max_size=5).map(
        lambda d: d.items()
    ),
    "set": lambda c: st.sets(HASHABLE, max_size=5),
    "frozenset": lambda c: st.frozensets(HASHABLE, max_size=5),
    "dict.keys()": lambda c: st.sets(HASHABLE, max_size=5).map(lambda s: dict.fromkeys(s).keys()),
    "partial": lambda c: st.tuples(st.lists(c, max_size=3), st.dictionaries(st.text(), c)).map(
        lambda p: functools.partial(print, *p[0], **p[1])
    ),
    "Namespace": lambda c: st.dictionaries(st.from_regex(r"[a-z]{1,6}", fullmatch=True), c).map(
        lambda d: argparse.Namespace(**d)
    ),
    "SimpleNamespace": lambda c: st.dictionaries(
        st.from_regex(r"[a-z]{1,6}", fullmatch=True), c
    ).map(lambda d: types.SimpleNamespace(**d)),
    "namedtuple": lambda c: st.tuples(c, c).map(lambda t: Pair(*t)),
    "dataclass": lambda c: c.map(Box),
}


def _nested(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(*(build(children) for build in SHAPES.values()))


VALUES = st.recursive(LEAVES, _nested, max_leaves=12)


@trace
def ident(value: Any) -> Any:
    return value


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(VALUES)
# Lazy values under names whose value decides whether they are hidden (once found at random).
@example({"Pwd": LazyObject(dict)})
@example({"token": LazyObject(dict), "session": [LazyObject(dict)]})
def test_any_container_shape_is_recorded_within_its_cap(value: Any) -> None:
    """The caller gets its object back; the input is JSON within the cap; no tripwire runs."""
    Tripwire.reset()
    with trace.capture() as result:
        assert ident(value) is value
    (node,) = list(result)
    text = json.dumps(node.inputs, ensure_ascii=False, separators=(",", ":"))
    assert len(text.encode("utf-8", "surrogatepass")) <= get_limits().max_span_bytes
    assert Tripwire.ran == {}


BIG = list(range(2_000_000))
BIG_SHAPES: dict[str, Callable[[], Any]] = {
    "partial over 2M items": lambda: functools.partial(print, BIG, key=BIG),
    "Namespace over 2M items": lambda: argparse.Namespace(a=BIG, b=dict.fromkeys(BIG[:300_000])),
    "SimpleNamespace over 2M items": lambda: types.SimpleNamespace(a=BIG),
    "ChainMap of 2 x 500k": lambda: collections.ChainMap(
        dict.fromkeys(BIG[:500_000], 1), dict.fromkeys(BIG[500_000:1_000_000], 2)
    ),
    "ChainMap of 500k shadowed keys": lambda: collections.ChainMap(
        dict.fromkeys(BIG[:500_000], 1), dict.fromkeys(BIG[:500_000], 2)
    ),
    "set of 4,000 user-ordered objects": lambda: {Ordered(i) for i in range(4000)},
}


@pytest.mark.parametrize("name", list(BIG_SHAPES))
def test_a_big_container_is_read_without_building_anything_big(name: str) -> None:
    """Recording allocates under 2 MB for a value whose repr or len would build 16-280 MB."""
    value = BIG_SHAPES[name]()
    Tripwire.reset()
    with trace.capture() as result:
        tracemalloc.start()
        try:
            assert ident(value) is value
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert peak < 2_000_000, f"{name}: {peak:,} bytes"
    assert Tripwire.ran == {}
    recorded = json.dumps(result.roots[0].inputs, separators=(",", ":"))
    assert len(recorded) <= get_limits().max_span_bytes
