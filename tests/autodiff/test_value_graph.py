"""Topological order, node ids and deep graphs."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest

from flow_xray.autodiff import Value, backward_from, position_ids, topological_order


def test_topological_order_lists_each_node_once_operands_first(
    ops_graph: Callable[[], Value],
) -> None:
    """Every node appears once, after all of its operands, with the root last."""
    root = ops_graph()
    order = topological_order(root)
    position = {node: k for k, node in enumerate(order)}
    assert len(position) == len(order)
    assert order[-1] is root
    for node in order:
        assert all(position[operand] < position[node] for operand in node._prev)


def test_topological_order_is_depth_first_in_operand_order() -> None:
    """Operands are visited left to right, depth first: the order is fixed by the expression."""
    a, b, c = Value(1.0, "a"), Value(2.0, "b"), Value(3.0, "c")
    ab = a * b
    root = (ab + c) - ab
    assert topological_order(root) == [a, b, ab, c, root._prev[0], root]


def test_shared_operand_appears_once() -> None:
    """A node used many times (a diamond) is listed once."""
    a = Value(2.0, "a")
    root = a * a + a
    order = topological_order(root)
    assert order.count(a) == 1
    assert len(order) == 3


def test_topological_order_is_the_same_for_two_builds(ops_graph: Callable[[], Value]) -> None:
    """Building the same expression twice gives the same order of ops and labels."""

    def shape(root: Value) -> list[tuple[str, str, float]]:
        return [(v._op, v.label, v.data) for v in topological_order(root)]

    assert shape(ops_graph()) == shape(ops_graph())


def test_export_ids_follow_topological_positions(ops_graph: Callable[[], Value]) -> None:
    """The export id of node k of the topological order is ``n<k>``, DOT-safe."""
    order = topological_order(ops_graph())
    ids = position_ids(order)
    assert [ids[v] for v in order] == [f"n{k}" for k in range(len(order))]
    assert all(re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", i) for i in ids.values())


def test_node_id_is_a_creation_counter() -> None:
    """``node_id`` is ``v<k>``, k counting Values in creation order, operands before results."""
    a = Value(1.0)
    y = a * 2
    k = int(a.node_id[1:])
    assert (y._prev[1].node_id, y.node_id) == (f"v{k + 1}", f"v{k + 2}")


def test_node_id_is_unique_and_stable() -> None:
    """Ids differ between Values and do not change when the node joins a bigger graph."""
    a = Value(1.0)
    before = a.node_id
    graphs = [(a + k).tanh() for k in range(100)]
    nodes = {v for g in graphs for v in topological_order(g)}
    assert a.node_id == before
    assert len({v.node_id for v in nodes}) == len(nodes)


def test_display_name_is_label_or_id() -> None:
    """``display_name`` is the label when set, else the node id."""
    a = Value(1.0, label="a")
    y = a * 2
    assert (a.display_name, y.display_name) == ("a", y.node_id)


@pytest.mark.slow
def test_million_node_chain_backpropagates() -> None:
    """A chain of one million operations runs forward and backward without recursion."""
    x = Value(0.5, "x")
    y = x
    for _ in range(1_000_000):
        y = -y
    backward_from(y)
    # (-1) ** 1_000_000 == 1: x.grad is 1 only if the gradient crossed every node.
    assert (y.data, x.grad) == (0.5, 1.0)


def test_wide_graph_gradient_counts_every_use() -> None:
    """A leaf used ten thousand times receives the sum of all its paths."""
    x = Value(1.0)
    total = Value(0.0)
    for _ in range(10_000):
        total = total + x
    backward_from(total)
    assert x.grad == 10_000.0
