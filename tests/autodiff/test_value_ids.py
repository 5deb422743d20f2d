"""``node_id``: 0.2.0's ``v<k>`` creation counter, the ids DOT and IR export by."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

import pytest

from flow_xray.autodiff import IdScheme, Value, backward_from, graph_to_ir, value_graph_to_dot


@pytest.fixture
def restore_counter() -> Iterator[None]:
    """Tests that reset ``Value._next_seq`` leave it past every id handed out."""
    saved = Value._next_seq
    yield
    Value._next_seq = max(saved, Value._next_seq)


def test_reset_counter_gives_v0_v1_again(restore_counter: None) -> None:
    """``Value._next_seq = 0`` (0.2.0's reset) numbers the next Values v0, v1, ... by creation."""
    Value._next_seq = 0
    a, b = Value(1.0), Value(2.0)
    y = a * b
    assert (b.node_id, a.node_id, y.node_id) == ("v1", "v0", "v2")
    assert Value._next_seq == 3


def test_reading_the_counter_does_not_use_up_an_id(restore_counter: None) -> None:
    """Reading ``Value._next_seq`` tells the next id without taking it."""
    upcoming = Value._next_seq
    assert Value._next_seq == upcoming
    assert Value(1.0).node_id == f"v{upcoming}"


@pytest.mark.parametrize("bad", [-1, 1.5, True, "0"])
def test_counter_accepts_only_a_non_negative_int(bad: object, restore_counter: None) -> None:
    """A reset to anything but an int >= 0 is a ValueError."""
    with pytest.raises(ValueError, match="_next_seq"):
        Value._next_seq = bad  # type: ignore[assignment]


def test_node_id_is_dot_safe() -> None:
    """Every node id is a bare DOT identifier."""
    y = (Value(1.0) * 2).relu()
    assert re.fullmatch(r"v[0-9]+", y.node_id)


def test_node_id_cannot_be_reassigned() -> None:
    """The id is fixed for the object's lifetime."""
    with pytest.raises(AttributeError):
        Value(1.0).node_id = "x"  # type: ignore[misc]


def test_builds_after_a_reset_export_identical_dot_and_ir(
    ops_graph: Callable[[], Value], restore_counter: None
) -> None:
    """Resetting ``Value._next_seq = 0`` before each build (0.2.0's way to determinism) makes
    two builds of one expression export the same DOT and IR; position ids need no reset."""

    def export(ids: IdScheme) -> tuple[str, dict[str, object]]:
        root = ops_graph()
        backward_from(root)
        return value_graph_to_dot(root, show_grad=True, ids=ids), graph_to_ir(root, ids=ids)

    by_position = export("position")
    Value._next_seq = 0
    first = export("node_id")
    Value._next_seq = 0
    second = export("node_id")
    assert first == second
    assert first[1]["root_id"] == "v32" and first != by_position
    assert export("position") == by_position


def test_ids_of_old_and_new_values_never_collide_in_an_export(restore_counter: None) -> None:
    """A graph mixing Values from before and after a reset still exports distinct ids: the
    later node sharing an id gets a ``_2`` suffix."""
    old = Value(1.0)
    Value._next_seq = int(old.node_id[1:])
    new = Value(2.0)
    assert new.node_id == old.node_id
    total = old + new
    ir = graph_to_ir(total)
    assert [n["id"] for n in ir["nodes"]] == [old.node_id, f"{old.node_id}_2", total.node_id]
    assert ir["nodes"][2]["parents"] == [old.node_id, f"{old.node_id}_2"]
