"""micrograd's custom-operation pattern: ``Value(data, _children, _op)`` and ``out._backward``."""

from __future__ import annotations

import pytest

from flow_xray.autodiff import (
    GraphDebugger,
    Value,
    backward_from,
    graph_to_ir,
    iter_backward_steps,
    topological_order,
)
from flow_xray.autodiff.viewer import value_graph_frames


def cube(x: Value) -> Value:
    """x**3 as a user-defined operation, written the way micrograd's README does it."""
    out = Value(x.data**3, (x,), "cube")

    def _backward() -> None:
        x.grad += 3 * x.data**2 * out.grad

    out._backward = _backward
    return out


def test_custom_op_forward_and_backward() -> None:
    """The custom op's data is its own, and its _backward gives the operand's gradient."""
    x = Value(2.0, label="x")
    y = cube(x) * 2
    y.backward()
    assert (y.data, x.grad) == (16.0, 24.0)


def test_custom_op_keeps_children_in_order_and_its_op_name() -> None:
    """``_children`` become ``_prev`` in the order given; ``_op`` names the node."""
    a, b = Value(1.0), Value(2.0)
    out = Value(3.0, (b, a), "mix")
    assert (out._prev, out._op) == ((b, a), "mix")


@pytest.mark.parametrize(
    "entry",
    ["backward", "backward_from", "iter_backward_steps", "named_snapshots", "viewer_frames"],
)
def test_every_backward_entry_point_runs_the_custom_backward(entry: str) -> None:
    """Whatever starts the pass, the assigned ``_backward`` is the one that runs."""
    x = Value(2.0, label="x")
    root = (cube(x) + x).tanh()
    reference = Value(2.0)
    (cube(reference) + reference).tanh().backward()
    if entry == "backward":
        root.backward()
    elif entry == "backward_from":
        backward_from(root)
    elif entry == "iter_backward_steps":
        list(iter_backward_steps(root))
    elif entry == "named_snapshots":
        GraphDebugger(root).named_snapshots()
    else:
        value_graph_frames(root)
    assert x.grad == pytest.approx(reference.grad, rel=1e-12)
    assert x.grad != 0.0


def test_hand_built_node_passes_no_gradient_until_backward_is_assigned() -> None:
    """Like micrograd, a node built with children but no ``_backward`` stops the gradient."""
    x = Value(2.0)
    out = Value(5.0, (x,), "opaque")
    out.backward()
    assert (out.grad, x.grad) == (1.0, 0.0)


def test_builtin_backward_is_callable_and_does_one_chain_rule_step() -> None:
    """``node._backward()`` on a built-in op pushes that node's gradient to its operands."""
    a, b = Value(3.0), Value(4.0)
    y = a * b
    y.grad = 2.0
    y._backward()
    assert (a.grad, b.grad) == (8.0, 6.0)


def test_assigning_backward_replaces_a_builtin_rule() -> None:
    """An assigned ``_backward`` overrides the built-in derivative of that node."""
    a = Value(3.0)
    y = a * 2

    def straight_through() -> None:
        a.grad += y.grad

    y._backward = straight_through
    y.backward()
    assert a.grad == 1.0


def test_backward_must_be_callable() -> None:
    """Assigning something that cannot be called is a TypeError at once, not in the pass."""
    with pytest.raises(TypeError, match="callable"):
        Value(1.0)._backward = 3  # type: ignore[assignment]


def test_children_must_be_values() -> None:
    """A child that is not a Value is a TypeError naming it."""
    with pytest.raises(TypeError, match="_children must be Values"):
        Value(1.0, [Value(1.0), 2.0], "+")  # type: ignore[list-item]


def test_second_positional_string_is_the_label() -> None:
    """``Value(2.0, "a")`` names the node (a string is never a list of children)."""
    a = Value(2.0, "a")
    assert (a.label, a._prev) == ("a", ())


def test_a_string_child_list_with_op_or_label_is_rejected() -> None:
    """``Value(1.0, "ab", "+")`` is ambiguous: a TypeError, never a silent guess."""
    with pytest.raises(TypeError, match="_children must be Values"):
        Value(1.0, "ab", "+")
    with pytest.raises(TypeError, match="_children must be Values"):
        Value(1.0, "ab", label="c")


def test_custom_op_exports_with_its_op_name() -> None:
    """DOT-facing IR carries the custom op's name and its operand."""
    x = Value(2.0, label="x")
    ir = graph_to_ir(cube(x))
    assert [(n["op"], n["parents"]) for n in ir["nodes"]] == [("", []), ("cube", [x.node_id])]


def test_custom_op_in_a_deep_chain() -> None:
    """Custom nodes in a 100k-deep chain backpropagate without recursion."""
    x = Value(1.0)
    y = x
    for _ in range(100_000):
        prev = y
        out = Value(prev.data, (prev,), "id")

        def _backward(prev: Value = prev, out: Value = out) -> None:
            prev.grad += out.grad

        out._backward = _backward
        y = out
    backward_from(y)
    assert (len(topological_order(y)), x.grad) == (100_001, 1.0)
