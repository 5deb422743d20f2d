"""A micrograd-style multilayer perceptron whose every node is named by layer and neuron.

Written like micrograd's ``nn.py`` (``Neuron``, ``Layer``, ``MLP``,
``parameters()``, ``zero_grad()``), with two differences for a debugger: the
weights come from a seeded generator, so a model is the same in every run,
and each Value it creates is labelled ``L<layer>.N<neuron>.<part>``
(``L1.N0.w2``, ``L1.N0.b``, ``L1.N0.w2*x``, ``L1.N0.sum2``, ``L1.N0.out``).
The graph viewer groups nodes by those first two parts, so a model's graph
can be folded per neuron or per layer; any label of that form groups the same
way (``enc.head3.q``).

Example:
    >>> from flow_xray.autodiff.nn import MLP
    >>> model = MLP(3, [4, 4, 1], seed=0)
    >>> out = model([2.0, 3.0, -1.0])
    >>> out.label
    'L3.N0.out'
    >>> len(model.parameters())
    41
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from flow_xray.autodiff.value import Value

__all__ = ["MLP", "Layer", "Neuron"]

_ACTIVATIONS = ("tanh", "relu", "linear")


class Module:
    """What every part of a model has: its parameters, and a way to zero their gradients."""

    def parameters(self) -> list[Value]:
        """The trainable Values, in a fixed order."""
        return []

    def zero_grad(self) -> None:
        """Set every parameter's gradient to 0 (before the next backward pass)."""
        for p in self.parameters():
            p.grad = 0.0


class Neuron(Module):
    """``activation(w . x + b)``: weights uniform in [-1, 1] from ``rng``, bias 0."""

    def __init__(
        self, n_inputs: int, rng: random.Random, *, activation: str = "tanh", name: str = "N0"
    ) -> None:
        if activation not in _ACTIVATIONS:
            raise ValueError(f"activation must be one of {_ACTIVATIONS}, got {activation!r}")
        self.name = name
        self.activation = activation
        self.w = [Value(rng.uniform(-1, 1), label=f"{name}.w{i}") for i in range(n_inputs)]
        self.b = Value(0.0, label=f"{name}.b")

    def __call__(self, x: Sequence[Value | float]) -> Value:
        if len(x) != len(self.w):
            raise ValueError(f"{self.name} takes {len(self.w)} inputs, got {len(x)}")
        act = self.b
        for i, (wi, xi) in enumerate(zip(self.w, x, strict=True)):
            product = wi * xi
            product.label = f"{self.name}.w{i}*x"
            act = act + product
            act.label = f"{self.name}.sum{i}"
        if self.activation == "tanh":
            act = act.tanh()
        elif self.activation == "relu":
            act = act.relu()
        act.label = f"{self.name}.out"
        return act

    def parameters(self) -> list[Value]:
        return [*self.w, self.b]


class Layer(Module):
    """``n_out`` neurons over the same inputs, named ``<name>.N0`` … ``<name>.N<n_out-1>``."""

    def __init__(
        self,
        n_in: int,
        n_out: int,
        rng: random.Random,
        *,
        activation: str = "tanh",
        name: str = "L1",
    ) -> None:
        self.name = name
        self.neurons = [
            Neuron(n_in, rng, activation=activation, name=f"{name}.N{j}") for j in range(n_out)
        ]

    def __call__(self, x: Sequence[Value | float]) -> list[Value]:
        return [neuron(x) for neuron in self.neurons]

    def parameters(self) -> list[Value]:
        return [p for neuron in self.neurons for p in neuron.parameters()]


class MLP(Module):
    """Layers ``L1`` … ``Ln`` of ``activation`` neurons; the last layer is linear.

    Args:
        n_in: the number of inputs.
        sizes: the width of each layer, e.g. ``[4, 4, 1]``.
        seed: seeds the weights (the same seed, the same model).
        activation: ``"tanh"`` (the default) or ``"relu"`` (micrograd's).

    Calling the model on a list of inputs (numbers or Values) returns the
    output Value when the last layer has one neuron, else the list of them.
    """

    def __init__(
        self, n_in: int, sizes: Sequence[int], *, seed: int = 0, activation: str = "tanh"
    ) -> None:
        rng = random.Random(seed)
        dims = [n_in, *sizes]
        self.layers = [
            Layer(
                dims[k],
                dims[k + 1],
                rng,
                activation=activation if k < len(sizes) - 1 else "linear",
                name=f"L{k + 1}",
            )
            for k in range(len(sizes))
        ]

    def __call__(self, x: Sequence[Value | float]) -> Value | list[Value]:
        values: list[Value] = [
            v if isinstance(v, Value) else Value(v, label=f"x{i}") for i, v in enumerate(x)
        ]
        for layer in self.layers:
            values = layer(values)
        return values[0] if len(values) == 1 else values

    def parameters(self) -> list[Value]:
        return [p for layer in self.layers for p in layer.parameters()]
