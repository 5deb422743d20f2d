"""Graph builders shared by the autodiff tests (as fixtures returning builders)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from flow_xray.autodiff import Value

GOLDEN = Path(__file__).parent / "golden"


def _ops_graph() -> Value:
    """One expression using every operation, a shared operand and awkward labels."""
    a = Value(1.5, "a")
    b = Value(-0.5, "b")
    c = Value(2.0, 'c "quoted" \\ back\nslash')
    d = a * b + c
    d.label = "d"
    e = (d - a) / c
    f = e**2 + (-b) + 2 * a - 3 / c + (1 - b)
    g = f.exp().log() + a.sigmoid() + b.relu() + d.tanh() + a * a + (c**0.5 - 1)
    g.label = "g"
    return g


@pytest.fixture
def golden_dir() -> Path:
    """Folder of the golden DOT and IR files."""
    return GOLDEN


@pytest.fixture
def ops_graph() -> Callable[[], Value]:
    """Builder of an expression that uses every operation (a new graph per call)."""
    return _ops_graph


@pytest.fixture
def fresh_ids() -> Iterator[None]:
    """Number Values from v0 again (0.2.0's ``Value._next_seq = 0``) for the test, then
    put the counter past every id handed out, so later tests never reuse one."""
    saved = Value._next_seq
    Value._next_seq = 0
    yield
    Value._next_seq = max(saved, Value._next_seq)


@pytest.fixture
def built_fresh(fresh_ids: None) -> Callable[[Callable[[], Value]], Value]:
    """``built_fresh(build)`` runs ``build()`` after ``Value._next_seq = 0``: each build of one
    expression gets the same node ids, as in a fresh process (the counter is put back
    past every id afterwards)."""

    def build_fresh(build: Callable[[], Value]) -> Value:
        Value._next_seq = 0
        return build()

    return build_fresh
