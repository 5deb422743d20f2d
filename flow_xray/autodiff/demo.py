"""The demo graphs behind ``flow-xray dot demo``: 0.2.0's expression and a tanh neuron."""

from __future__ import annotations

from collections.abc import Callable

from flow_xray.autodiff.value import Value

#: Chosen so that the pre-activation ``n`` is about 0.8814 and ``o = tanh(n)``
#: about 0.7071: every gradient in the backward pass is a readable number.
DEMO_BIAS = 6.8813735870195432


def demo_graph() -> Value:
    """Build ``o = tanh(x1*w1 + x2*w2 + b)`` with every node labelled; returns ``o``.

    Each call builds a new graph (gradients all zero), identical to the last.
    """
    x1 = Value(2.0, "x1")
    x2 = Value(0.0, "x2")
    w1 = Value(-3.0, "w1")
    w2 = Value(1.0, "w2")
    b = Value(DEMO_BIAS, "b")
    x1w1 = x1 * w1
    x1w1.label = "x1*w1"
    x2w2 = x2 * w2
    x2w2.label = "x2*w2"
    total = x1w1 + x2w2
    total.label = "x1*w1 + x2*w2"
    n = total + b
    n.label = "n"
    o = n.tanh()
    o.label = "o"
    return o


def expression_graph() -> Value:
    """Build 0.2.0's demo expression ``L = ((a*b)+c).relu().tanh()``; returns ``L``.

    ``a = 2``, ``b = -3``, ``c = 10``: ``a*b + c = 4``, so ReLU passes it and
    ``L = tanh(4)``. The default graph of ``flow-xray dot demo``, as in 0.2.0.
    """
    a = Value(2.0, label="a")
    b = Value(-3.0, label="b")
    c = Value(10.0, label="c")
    out = ((a * b) + c).relu().tanh()
    out.label = "L"
    return out


#: The graphs ``flow-xray dot demo --graph NAME`` can draw; the first is the default.
DEMOS: dict[str, Callable[[], Value]] = {"expression": expression_graph, "neuron": demo_graph}
