"""Stepping through a backward pass: per-node steps, and DOT / IR snapshots.

The backward pass visits nodes in reverse topological order (root first) and
runs each node's ``_backward``, which pushes that node's gradient to its
operands. A *step* is one such call. Every debugger starts from zeroed
gradients with ``root.grad = seed``, so running it twice gives the same result.
There is no rewind: rebuild the expression to step through it again from the
forward state.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from flow_xray.autodiff.export import dot_from_order, value_graph_to_dot
from flow_xray.autodiff.ir import graph_to_ir
from flow_xray.autodiff.value import (
    Value,
    as_float,
    backward_from,
    number_graph,
    topological_order,
)


def iter_backward_steps(root: Value, seed: float = 1.0) -> Iterator[Value]:
    """Run the backward pass one node at a time, yielding each node after its step.

    Gradients are zeroed and ``root.grad`` set to ``seed`` before the first step;
    when the iterator is exhausted the gradients equal `backward_from`'s.

    Example:
        >>> from flow_xray.autodiff import Value
        >>> a = Value(3.0, "a")
        >>> [v.display_name for v in iter_backward_steps((a * a).tanh())]
        ['n2', 'n1', 'a']
    """
    yield from _steps(topological_order(root), as_float(seed))


def _steps(order: list[Value], seed: float) -> Iterator[Value]:
    """The stepping loop over a topological order (root last)."""
    for node in order:
        node.grad = 0.0
    order[-1].grad = seed
    for node in reversed(order):
        node._backward()
        yield node


class TwoStepDebugger:
    """Two snapshots of a graph: the forward pass, then after a full backward pass.

    Example:
        >>> from flow_xray.autodiff import Value
        >>> dbg = TwoStepDebugger(Value(2.0, "a") * 3)
        >>> "grad:" in dbg.step_forward_dot(), "grad:" in dbg.step_backward_dot()
        (False, True)
    """

    __slots__ = ("root",)

    def __init__(self, root: Value) -> None:
        self.root = root

    def step_forward_dot(self) -> str:
        """DOT of the forward graph: data only, no gradients."""
        return value_graph_to_dot(self.root, show_grad=False)

    def step_backward_dot(self, seed: float = 1.0) -> str:
        """Run a clean backward pass from the root, then DOT with gradients."""
        backward_from(self.root, seed)
        return value_graph_to_dot(self.root, show_grad=True)


class GraphDebugger:
    """DOT and IR of a graph before, during and after its backward pass."""

    __slots__ = ("root",)

    def __init__(self, root: Value) -> None:
        self.root = root

    def dot_forward(self) -> str:
        """DOT of the forward graph (no gradients)."""
        return value_graph_to_dot(self.root, show_grad=False)

    def dot_backward(self, seed: float = 1.0) -> str:
        """Run a clean backward pass, then DOT with gradients."""
        backward_from(self.root, seed)
        return value_graph_to_dot(self.root, show_grad=True)

    def ir_forward(self) -> dict[str, Any]:
        """IR of the forward graph (no ``grad`` fields)."""
        return graph_to_ir(self.root, include_grad=False)

    def ir_backward(self, seed: float = 1.0) -> dict[str, Any]:
        """Run a clean backward pass, then the IR with gradients."""
        backward_from(self.root, seed)
        return graph_to_ir(self.root, include_grad=True)

    def named_snapshots(
        self, seed: float = 1.0, *, include_step_dots: bool = True
    ) -> dict[str, str]:
        """DOT text at every stage of a backward pass, by name.

        Keys, in order: ``forward``; ``backward_step_0`` ... ``backward_step_{n-1}``
        (the graph after the k-th node's ``_backward``, n = number of nodes;
        left out when ``include_step_dots`` is False); ``after_backward``.
        Leaves the root's gradients filled.
        """
        order = number_graph(self.root)
        snapshots = {"forward": dot_from_order(order, show_grad=False)}
        for k, _node in enumerate(_steps(order, as_float(seed))):
            if include_step_dots:
                snapshots[f"backward_step_{k}"] = dot_from_order(order, show_grad=True)
        snapshots["after_backward"] = dot_from_order(order, show_grad=True)
        return snapshots
