"""micrograd's own ``nn.py`` runs unchanged on our `Value` and trains identically.

micrograd is in the ``test`` extra (it skips, with the reason, where it is not
installed). The module's source is executed as published, with its
``from micrograd.engine import Value`` bound to ours.
"""

from __future__ import annotations

import inspect
import random
import sys
import types
from typing import Any

import pytest

from flow_xray.autodiff import Value

micrograd_nn = pytest.importorskip("micrograd.nn", reason="micrograd is not installed")
micrograd_engine = pytest.importorskip("micrograd.engine")


def nn_module_on(value_class: type) -> types.ModuleType:
    """micrograd's nn.py, executed with ``micrograd.engine.Value`` replaced by ``value_class``."""
    fake_engine = types.ModuleType("micrograd.engine")
    fake_engine.Value = value_class  # type: ignore[attr-defined]
    module = types.ModuleType("nn_on_value")
    source = inspect.getsource(micrograd_nn)
    real = sys.modules["micrograd.engine"]
    sys.modules["micrograd.engine"] = fake_engine
    try:
        exec(compile(source, "micrograd/nn.py", "exec"), module.__dict__)
    finally:
        sys.modules["micrograd.engine"] = real
    return module


def train(nn: types.ModuleType, steps: int = 20) -> list[float]:
    """micrograd's README training loop (hinge loss + L2) on a small fixed data set."""
    random.seed(1337)
    xs = [[random.uniform(-1, 1), random.uniform(-1, 1)] for _ in range(24)]
    ys = [1 if x[0] * x[1] > 0 else -1 for x in xs]
    model = nn.MLP(2, [8, 8, 1])
    losses = []
    for k in range(steps):
        scores = [model(x) for x in xs]
        data_loss = sum((1 + -yi * si).relu() for yi, si in zip(ys, scores, strict=True)) * (
            1.0 / len(xs)
        )
        reg_loss = 1e-4 * sum(p * p for p in model.parameters())
        loss: Any = data_loss + reg_loss
        model.zero_grad()
        loss.backward()
        learning_rate = 1.0 - 0.9 * k / steps
        for p in model.parameters():
            p.data -= learning_rate * p.grad
        losses.append(loss.data)
    return losses


def test_micrograd_nn_trains_identically_on_our_value() -> None:
    """Same seed, same model code: the loss curve matches micrograd's to 1e-9."""
    ours = train(nn_module_on(Value))
    theirs = train(nn_module_on(micrograd_engine.Value))
    assert ours[-1] < ours[0]
    assert ours == pytest.approx(theirs, rel=1e-9, abs=1e-12)
