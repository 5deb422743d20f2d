"""Stepping debuggers: per-node backward steps and DOT / IR snapshots."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from flow_xray.autodiff import (
    GraphDebugger,
    TwoStepDebugger,
    Value,
    backward_from,
    demo_graph,
    graph_to_ir,
    iter_backward_steps,
    topological_order,
    value_graph_to_dot,
)


def test_iter_backward_steps_yields_reverse_topological_order(
    ops_graph: Callable[[], Value],
) -> None:
    """Steps visit every node once, root first, in reverse topological order."""
    root = ops_graph()
    assert list(iter_backward_steps(root)) == topological_order(root)[::-1]


def test_iter_backward_steps_starts_from_zero() -> None:
    """Stale gradients are cleared before the first step; only the root holds the seed."""
    a = Value(2.0, "a")
    y = a * 3
    a.grad = y.grad = 42.0
    steps = iter_backward_steps(y, seed=2.0)
    first = next(steps)
    assert (first is y, y.grad, a.grad) == (True, 2.0, 6.0)


def test_iter_backward_steps_ends_with_backward_from_gradients(
    ops_graph: Callable[[], Value],
) -> None:
    """Exhausting the steps leaves the same gradients as one ``backward_from`` call."""
    stepped, reference = ops_graph(), ops_graph()
    for _ in iter_backward_steps(stepped):
        pass
    backward_from(reference)
    assert graph_to_ir(stepped) == graph_to_ir(reference)


def test_each_step_fills_the_operands_of_the_stepped_node() -> None:
    """After a node's step its operands hold their gradient share, later ones do not yet."""
    o = demo_graph()
    seen: list[list[float]] = []
    for _ in iter_backward_steps(o):
        seen.append([v.grad for v in topological_order(o)])
    assert seen[0][-2] != 0.0  # n received tanh' after the first step
    assert seen[0][0] == 0.0  # x1 still untouched
    assert seen[-1][0] != 0.0


def test_named_snapshots_keys() -> None:
    """Keys are forward, backward_step_0..n-1 (n nodes) and after_backward, in that order."""
    root = demo_graph()
    n = len(topological_order(root))
    keys = list(GraphDebugger(root).named_snapshots())
    assert keys == ["forward", *[f"backward_step_{k}" for k in range(n)], "after_backward"]


def test_named_snapshots_without_step_dots() -> None:
    """``include_step_dots=False`` keeps only forward and after_backward."""
    snapshots = GraphDebugger(demo_graph()).named_snapshots(include_step_dots=False)
    assert list(snapshots) == ["forward", "after_backward"]


def test_named_snapshots_match_the_steps() -> None:
    """Step k's DOT is the graph after k+1 backward steps; after_backward the final one."""
    root = demo_graph()
    snapshots = GraphDebugger(root).named_snapshots(seed=1.0)
    replay = demo_graph()
    for k, _ in enumerate(iter_backward_steps(replay)):
        assert snapshots[f"backward_step_{k}"] == value_graph_to_dot(replay, show_grad=True)
    assert snapshots["after_backward"] == value_graph_to_dot(replay, show_grad=True)
    assert snapshots["forward"] == value_graph_to_dot(demo_graph())


def test_graph_debugger_views() -> None:
    """dot/ir forward show no gradients; dot/ir backward run a clean backward pass."""
    root = demo_graph()
    dbg = GraphDebugger(root)
    assert "grad" not in dbg.dot_forward()
    assert all("grad" not in node for node in dbg.ir_forward()["nodes"])
    reference = demo_graph()
    backward_from(reference)
    assert dbg.dot_backward() == value_graph_to_dot(reference, show_grad=True)
    assert dbg.ir_backward() == graph_to_ir(reference)


def test_two_step_debugger() -> None:
    """Forward DOT has no gradients; backward DOT shows the gradients of a clean pass."""
    dbg = TwoStepDebugger(demo_graph())
    reference = demo_graph()
    backward_from(reference)
    assert dbg.step_forward_dot() == value_graph_to_dot(demo_graph())
    assert dbg.step_backward_dot() == value_graph_to_dot(reference, show_grad=True)


def test_backward_snapshots_do_not_accumulate() -> None:
    """Asking for the backward DOT twice gives the same gradients, not doubled ones."""
    dbg = TwoStepDebugger(demo_graph())
    assert dbg.step_backward_dot() == dbg.step_backward_dot()


def test_every_backward_entry_point_rejects_a_non_number_seed() -> None:
    """A string seed is a clear TypeError everywhere, as in backward_from."""
    root = Value(2.0) * Value(3.0)
    with pytest.raises(TypeError, match="real number"):
        list(iter_backward_steps(root, seed="1.5"))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="real number"):
        GraphDebugger(root).named_snapshots(seed="1.5")  # type: ignore[arg-type]
