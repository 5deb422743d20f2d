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
    ops_graph: Callable[[], Value], built_fresh: Callable[[Callable[[], Value]], Value]
) -> None:
    """Exhausting the steps leaves the same gradients as one ``backward_from`` call."""
    stepped, reference = built_fresh(ops_graph), built_fresh(ops_graph)
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


def test_named_snapshots_match_the_steps(
    built_fresh: Callable[[Callable[[], Value]], Value],
) -> None:
    """Step k's DOT is the graph after k+1 backward steps; after_backward the final one."""
    root = built_fresh(demo_graph)
    snapshots = GraphDebugger(root).named_snapshots(seed=1.0)
    replay = built_fresh(demo_graph)
    for k, _ in enumerate(iter_backward_steps(replay)):
        assert snapshots[f"backward_step_{k}"] == value_graph_to_dot(replay, show_grad=True)
    assert snapshots["after_backward"] == value_graph_to_dot(replay, show_grad=True)
    assert snapshots["forward"] == value_graph_to_dot(built_fresh(demo_graph))


def test_graph_debugger_forward_views_have_no_gradients() -> None:
    """dot_forward and ir_forward show data only."""
    dbg = GraphDebugger(demo_graph())
    assert "grad" not in dbg.dot_forward()
    assert all("grad" not in node for node in dbg.ir_forward()["nodes"])


def test_graph_debugger_backward_views_show_the_current_gradients(
    built_fresh: Callable[[Callable[[], Value]], Value],
) -> None:
    """dot_backward / ir_backward export the gradients the user's backward() left."""
    root, reference = built_fresh(demo_graph), built_fresh(demo_graph)
    root.backward()
    reference.backward()
    dbg = GraphDebugger(root)
    assert dbg.dot_backward() == value_graph_to_dot(reference, show_grad=True)
    assert dbg.ir_backward() == graph_to_ir(reference)


def test_backward_views_never_run_a_pass_of_their_own() -> None:
    """Before any backward() the backward views show zeros, and the grads stay untouched."""
    root = demo_graph()
    leaf = topological_order(root)[0]
    leaf.grad = 42.0  # the user's own number, e.g. from a custom pass
    graph, two = GraphDebugger(root), TwoStepDebugger(root)
    dot, ir, step = graph.dot_backward(), graph.ir_backward(), two.step_backward_dot()
    assert "grad: 42" in dot and "grad: 42" in step
    assert ir["nodes"][0]["grad"] == 42.0
    assert [v.grad for v in topological_order(root)] == [42.0] + [0.0] * 9


def test_two_step_debugger(built_fresh: Callable[[Callable[[], Value]], Value]) -> None:
    """Forward DOT has no gradients; after y.backward() the backward DOT shows them."""
    root, reference = built_fresh(demo_graph), built_fresh(demo_graph)
    dbg = TwoStepDebugger(root)
    assert dbg.step_forward_dot() == value_graph_to_dot(reference)
    root.backward()
    backward_from(reference)
    assert dbg.step_backward_dot() == value_graph_to_dot(reference, show_grad=True)


def test_backward_snapshots_do_not_accumulate() -> None:
    """Asking for the backward DOT twice gives the same gradients, not doubled ones."""
    root = demo_graph()
    root.backward()
    dbg = TwoStepDebugger(root)
    assert dbg.step_backward_dot() == dbg.step_backward_dot()


def test_every_backward_entry_point_rejects_a_non_number_seed() -> None:
    """A seed float() rejects is a clear error everywhere, as in backward_from."""
    root = Value(2.0) * Value(3.0)
    with pytest.raises(TypeError, match="Value needs a number"):
        list(iter_backward_steps(root, seed=None))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="Value needs a number"):
        GraphDebugger(root).named_snapshots(seed="abc")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="Value needs a number"):
        backward_from(root, seed=[1.0])  # type: ignore[arg-type]
