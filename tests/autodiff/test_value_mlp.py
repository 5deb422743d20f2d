"""A small MLP written like micrograd's ``nn.py`` trains, deterministically."""

from __future__ import annotations

import random

from flow_xray.autodiff import Value


class Neuron:
    """``act(w . x + b)`` with weights drawn from a seeded generator."""

    def __init__(self, n_inputs: int, rng: random.Random, nonlin: bool = True) -> None:
        self.w = [Value(rng.uniform(-1, 1)) for _ in range(n_inputs)]
        self.b = Value(0.0)
        self.nonlin = nonlin

    def __call__(self, x: list[Value]) -> Value:
        act = sum((wi * xi for wi, xi in zip(self.w, x, strict=True)), self.b)
        return act.tanh() if self.nonlin else act

    def parameters(self) -> list[Value]:
        return [*self.w, self.b]


class Layer:
    """A list of neurons over the same inputs."""

    def __init__(self, n_in: int, n_out: int, rng: random.Random, nonlin: bool) -> None:
        self.neurons = [Neuron(n_in, rng, nonlin) for _ in range(n_out)]

    def __call__(self, x: list[Value]) -> list[Value]:
        return [neuron(x) for neuron in self.neurons]

    def parameters(self) -> list[Value]:
        return [p for neuron in self.neurons for p in neuron.parameters()]


class MLP:
    """Layers of tanh neurons and a linear output neuron."""

    def __init__(self, n_in: int, sizes: list[int], rng: random.Random) -> None:
        dims = [n_in, *sizes]
        self.layers = [
            Layer(dims[i], dims[i + 1], rng, nonlin=i != len(sizes) - 1) for i in range(len(sizes))
        ]

    def __call__(self, x: list[Value]) -> Value:
        for layer in self.layers:
            x = layer(x)
        return x[0]

    def parameters(self) -> list[Value]:
        return [p for layer in self.layers for p in layer.parameters()]


XS = [[2.0, 3.0, -1.0], [3.0, -1.0, 0.5], [0.5, 1.0, 1.0], [1.0, 1.0, -1.0]]
YS = [1.0, -1.0, -1.0, 1.0]


def train(seed: int, steps: int = 30) -> list[float]:
    """Train on a four-point data set with SGD; return the loss of every step."""
    model = MLP(3, [4, 4, 1], random.Random(seed))
    losses = []
    for _ in range(steps):
        predictions = [model([Value(v) for v in x]) for x in XS]
        loss = sum(((p - y) ** 2 for p, y in zip(predictions, YS, strict=True)), Value(0.0))
        for p in model.parameters():
            p.grad = 0.0
        loss.backward()
        for p in model.parameters():
            p.data -= 0.05 * p.grad
        losses.append(loss.data)
    return losses


def test_mlp_loss_decreases() -> None:
    """Gradient descent with the engine's gradients drives the loss down."""
    losses = train(seed=1337)
    assert losses[-1] < 0.5 * losses[0]


def test_mlp_training_is_deterministic() -> None:
    """Two runs from the same seed give bit-identical losses."""
    assert train(seed=7) == train(seed=7)
