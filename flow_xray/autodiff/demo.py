"""The demo expression behind ``flow-xray dot demo``: one tanh neuron with two inputs."""

from __future__ import annotations

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
