"""Gradients of random expressions agree with finite differences (and PyTorch if present)."""

from __future__ import annotations

import importlib.util
import math
from collections.abc import Callable, Sequence

import pytest
from hypothesis import assume, given, settings, strategies as st

from flow_xray.autodiff import Value, backward_from

# Each step applies one operation to earlier nodes (indices taken modulo the count).
# Domains are kept safe by construction: log and ** 0.5 see x*x + 1, division sees
# x*x + 1 in the denominator, exp sees tanh(x). relu is left out: its kink breaks
# finite differences (it has its own test).
UNARY: dict[str, Callable[[Value], Value]] = {
    "neg": lambda x: -x,
    "tanh": lambda x: x.tanh(),
    "sigmoid": lambda x: x.sigmoid(),
    "exp": lambda x: x.tanh().exp(),
    "log": lambda x: (x * x + 1).log(),
    "square": lambda x: x**2,
    "cube": lambda x: x**3,
    "sqrt": lambda x: (x * x + 1) ** 0.5,
    "rdiv": lambda x: 1 / (x * x + 1),
}
BINARY: dict[str, Callable[[Value, Value], Value]] = {
    "add": lambda x, y: x + y,
    "sub": lambda x, y: x - y,
    "mul": lambda x, y: x * y,
    "div": lambda x, y: x / (y * y + 1),
}
Step = tuple[str, int, int]

steps = st.lists(
    st.tuples(
        st.sampled_from(sorted(UNARY) + sorted(BINARY)), st.integers(0, 99), st.integers(0, 99)
    ),
    min_size=1,
    max_size=10,
)
inputs = st.lists(st.floats(-2.0, 2.0), min_size=1, max_size=3)


def build(xs: Sequence[float], program: Sequence[Step]) -> tuple[list[Value], Value]:
    """Leaves for ``xs`` and the root of the program applied to them."""
    leaves = [Value(x) for x in xs]
    nodes = list(leaves)
    for op, i, j in program:
        x, y = nodes[i % len(nodes)], nodes[j % len(nodes)]
        nodes.append(UNARY[op](x) if op in UNARY else BINARY[op](x, y))
    return leaves, nodes[-1]


def central_difference(xs: list[float], program: Sequence[Step], k: int, h: float) -> float:
    """(f(x + h e_k) - f(x - h e_k)) / 2h for input ``k``."""
    up, down = list(xs), list(xs)
    up[k] += h
    down[k] -= h
    return (build(up, program)[1].data - build(down, program)[1].data) / (2 * h)


@settings(max_examples=200, deadline=None)
@given(xs=inputs, program=steps)
def test_gradients_match_central_differences(xs: list[float], program: list[Step]) -> None:
    """Backward gradients of any expression equal central finite differences."""
    leaves, root = build(xs, program)
    assume(abs(root.data) < 1e3)
    backward_from(root)
    for k, leaf in enumerate(leaves):
        numeric = central_difference(xs, program, k, 1e-6)
        assert math.isclose(leaf.grad, numeric, rel_tol=1e-4, abs_tol=1e-4), (k, leaf.grad)


@given(x=st.floats(-3.0, 3.0).filter(lambda v: abs(v) > 1e-3))
def test_relu_gradient_away_from_the_kink(x: float) -> None:
    """``relu``'s gradient is 1 for positive inputs and 0 for negative ones."""
    leaf = Value(x)
    leaf.relu().backward()
    assert leaf.grad == (1.0 if x > 0 else 0.0)


def test_relu_gradient_at_zero_is_zero() -> None:
    """At exactly 0 the relu derivative is taken as 0 (micrograd's convention)."""
    leaf = Value(0.0)
    leaf.relu().backward()
    assert leaf.grad == 0.0


@pytest.mark.skipif(
    importlib.util.find_spec("torch") is None, reason="torch is not installed (optional check)"
)
@settings(max_examples=50, deadline=None)
@given(xs=inputs, program=steps)
def test_gradients_match_pytorch(xs: list[float], program: list[Step]) -> None:
    """With torch installed, gradients equal torch.autograd's in float64."""
    import torch

    leaves, root = build(xs, program)
    assume(abs(root.data) < 1e3)
    backward_from(root)
    tensors = [torch.tensor(x, dtype=torch.float64, requires_grad=True) for x in xs]
    nodes: list[torch.Tensor] = list(tensors)
    for op, i, j in program:
        x, y = nodes[i % len(nodes)], nodes[j % len(nodes)]
        nodes.append(_TORCH[op](x, y))
    nodes[-1].backward()
    for leaf, tensor in zip(leaves, tensors, strict=True):
        grad = 0.0 if tensor.grad is None else float(tensor.grad)
        assert math.isclose(leaf.grad, grad, rel_tol=1e-9, abs_tol=1e-12)


_TORCH: dict[str, Callable[[object, object], object]] = {
    "neg": lambda x, y: -x,  # type: ignore[operator]
    "tanh": lambda x, y: x.tanh(),  # type: ignore[attr-defined]
    "sigmoid": lambda x, y: x.sigmoid(),  # type: ignore[attr-defined]
    "exp": lambda x, y: x.tanh().exp(),  # type: ignore[attr-defined]
    "log": lambda x, y: (x * x + 1).log(),  # type: ignore[operator]
    "square": lambda x, y: x**2,  # type: ignore[operator]
    "cube": lambda x, y: x**3,  # type: ignore[operator]
    "sqrt": lambda x, y: (x * x + 1) ** 0.5,  # type: ignore[operator]
    "rdiv": lambda x, y: 1 / (x * x + 1),  # type: ignore[operator]
    "add": lambda x, y: x + y,  # type: ignore[operator]
    "sub": lambda x, y: x - y,  # type: ignore[operator]
    "mul": lambda x, y: x * y,  # type: ignore[operator]
    "div": lambda x, y: x / (y * y + 1),  # type: ignore[operator]
}
