"""Stepping through a backward pass: per-node steps, and DOT / IR snapshots.

Two kinds of call, as in 0.2.0:

- *Views* export the graph as it is now and change nothing:
  `TwoStepDebugger.step_forward_dot` / ``step_backward_dot`` and
  `GraphDebugger.dot_forward` / ``dot_backward`` / ``ir_forward`` /
  ``ir_backward``. The backward views show the gradients the user's own
  ``backward()`` left (all zero before one ran)::

      dbg = TwoStepDebugger(y)
      forward = dbg.step_forward_dot()
      y.backward()
      backward = dbg.step_backward_dot()

- *Steppers* run a backward pass of their own, one node at a time:
  `iter_backward_steps` and `GraphDebugger.named_snapshots`. They start from
  zeroed gradients with ``root.grad = seed`` (so running one twice gives the
  same result) and leave the final gradients in the graph. A *step* is one
  node's turn of the chain rule, in reverse topological order (root first).

There is no rewind: rebuild the expression to step through it again.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from flow_xray.autodiff.export import dot_from_order, value_graph_to_dot
from flow_xray.autodiff.ir import graph_to_ir
from flow_xray.autodiff.value import (
    Value,
    as_float,
    chain_rule,
    export_ids,
    start_backward,
    topological_order,
)


def iter_backward_steps(root: Value, seed: float = 1.0) -> Iterator[Value]:
    """Run the backward pass one node at a time, yielding each node after its step.

    Gradients are zeroed and ``root.grad`` set to ``seed`` before the first step;
    when the iterator is exhausted the gradients equal `backward_from`'s.

    Example:
        >>> from flow_xray.autodiff import Value
        >>> a = Value(3.0, label="a")
        >>> y = (a * a).tanh()
        >>> [v._op or v.label for v in iter_backward_steps(y)]
        ['tanh', '*', 'a']
    """
    yield from backward_steps(topological_order(root), as_float(seed))


def backward_steps(order: Sequence[Value], seed: float) -> Iterator[Value]:
    """The stepping loop over a topological order (root last): zero, seed, then step."""
    start_backward(order, seed)
    for node in reversed(order):
        chain_rule((node,))
        yield node


class TwoStepDebugger:
    """Two views of a graph: data only, then data and the current gradients.

    Example:
        >>> from flow_xray.autodiff import Value
        >>> y = Value(2.0, label="a") * 3
        >>> dbg = TwoStepDebugger(y)
        >>> y.backward()
        >>> "grad: 3" in dbg.step_backward_dot(), "grad:" in dbg.step_forward_dot()
        (True, False)
    """

    __slots__ = ("root",)

    def __init__(self, root: Value) -> None:
        self.root = root

    def step_forward_dot(self) -> str:
        """DOT of the forward graph: data only, no gradients."""
        return value_graph_to_dot(self.root, show_grad=False)

    def step_backward_dot(self) -> str:
        """DOT with the gradients as they are now (run ``backward()`` first); runs no pass."""
        return value_graph_to_dot(self.root, show_grad=True)


class GraphDebugger:
    """DOT and IR of a graph, as it is now, or at every step of a backward pass."""

    __slots__ = ("root",)

    def __init__(self, root: Value) -> None:
        self.root = root

    def dot_forward(self) -> str:
        """DOT of the forward graph (no gradients)."""
        return value_graph_to_dot(self.root, show_grad=False)

    def dot_backward(self) -> str:
        """DOT with the current gradients; runs no backward pass."""
        return value_graph_to_dot(self.root, show_grad=True)

    def ir_forward(self) -> dict[str, Any]:
        """IR of the forward graph (no ``grad`` fields)."""
        return graph_to_ir(self.root, include_grad=False)

    def ir_backward(self) -> dict[str, Any]:
        """IR with the current gradients; runs no backward pass."""
        return graph_to_ir(self.root, include_grad=True)

    def named_snapshots(
        self, seed: float = 1.0, *, include_step_dots: bool = True
    ) -> dict[str, str]:
        """Run a backward pass step by step and return the DOT text of every stage, by name.

        Keys, in order: ``forward``; ``backward_step_0`` ... ``backward_step_{n-1}``
        (the graph after the k-th node's step, n = number of nodes; left out when
        ``include_step_dots`` is False); ``after_backward``. Like 0.2.0, this
        overwrites the graph's gradients: they are left as the pass ends.
        """
        order = topological_order(self.root)
        ids = export_ids(order)
        snapshots = {"forward": dot_from_order(order, ids, show_grad=False)}
        for k, _node in enumerate(backward_steps(order, as_float(seed))):
            if include_step_dots:
                snapshots[f"backward_step_{k}"] = dot_from_order(order, ids, show_grad=True)
        snapshots["after_backward"] = dot_from_order(order, ids, show_grad=True)
        return snapshots
