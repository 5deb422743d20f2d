"""`flow_xray.autodiff.nn`: a seeded micrograd-style MLP, each node named by layer and neuron."""

from __future__ import annotations

import re

import pytest

from flow_xray.autodiff import Value, topological_order
from flow_xray.autodiff.nn import MLP, Neuron

XS = [[2.0, 3.0, -1.0], [3.0, -1.0, 0.5], [0.5, 1.0, 1.0], [1.0, 1.0, -1.0]]
YS = [1.0, -1.0, -1.0, 1.0]


def loss_of(model: MLP) -> Value:
    """Sum of squared errors over the four-point data set."""
    total = Value(0.0, label="loss0")
    for x, y in zip(XS, YS, strict=True):
        prediction = model(x)
        assert isinstance(prediction, Value)
        total = total + (prediction - y) ** 2
    return total


def test_training_lowers_the_loss_and_is_deterministic() -> None:
    """SGD on the model's parameters drives the loss down, the same way for the same seed."""

    def train(seed: int) -> list[float]:
        model = MLP(3, [4, 4, 1], seed=seed)
        losses = []
        for _ in range(20):
            loss = loss_of(model)
            model.zero_grad()
            loss.backward()
            for p in model.parameters():
                p.data -= 0.05 * p.grad
            losses.append(loss.data)
        return losses

    first = train(3)
    assert first[-1] < 0.5 * first[0]
    assert train(3) == first
    assert train(4) != first


def test_every_model_node_is_named_layer_dot_neuron_dot_part() -> None:
    """Each Value the model makes is labelled ``L<k>.N<j>.<part>``; inputs are ``x<i>``."""
    model = MLP(3, [4, 4, 1], seed=0)
    out = model([1.0, 2.0, 3.0])
    assert isinstance(out, Value)
    labels = [v.label for v in topological_order(out)]
    named = re.compile(r"L[123]\.N[0-3]\.(w\d|b|w\d\*x|sum\d|out)\Z")
    assert all(named.match(label) or label in ("x0", "x1", "x2") for label in labels), labels
    assert {label.split(".")[0] for label in labels if "." in label} == {"L1", "L2", "L3"}
    assert len([label for label in labels if label.startswith("L2.N3.")]) == 4 + 1 + 4 + 4 + 1
    assert out.label == "L3.N0.out" and out._op == "+"  # the last layer is linear


def test_misuse_is_a_clear_error() -> None:
    """A wrong input count or activation name raises ValueError naming the problem."""
    with pytest.raises(ValueError, match="takes 3 inputs, got 2"):
        MLP(3, [2], seed=0)([1.0, 2.0])
    with pytest.raises(ValueError, match="activation"):
        Neuron(2, __import__("random").Random(0), activation="gelu")
