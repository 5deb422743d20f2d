"""Forward values, local derivatives and misuse errors of `Value` operations."""

from __future__ import annotations

import math
from collections.abc import Callable

import pytest

from flow_xray.autodiff import Value, backward_from, zero_grad

A, B = 1.75, -0.625

# (name, expression on Values, the same expression on floats)
FORWARD: list[tuple[str, Callable[[Value, Value], Value], Callable[[float, float], float]]] = [
    ("add", lambda a, b: a + b, lambda a, b: a + b),
    ("sub", lambda a, b: a - b, lambda a, b: a - b),
    ("mul", lambda a, b: a * b, lambda a, b: a * b),
    ("div", lambda a, b: a / b, lambda a, b: a / b),
    ("radd", lambda a, b: 2 + a, lambda a, b: 2 + a),
    ("rsub", lambda a, b: 2 - a, lambda a, b: 2 - a),
    ("rmul", lambda a, b: 2 * a, lambda a, b: 2 * a),
    ("rdiv", lambda a, b: 2 / a, lambda a, b: 2 / a),
    ("add_number", lambda a, b: a + 3, lambda a, b: a + 3),
    ("neg", lambda a, b: -a, lambda a, b: -a),
    ("pow_int", lambda a, b: b**3, lambda a, b: b**3),
    ("pow_float", lambda a, b: a**1.5, lambda a, b: a**1.5),
    ("pow_negative", lambda a, b: a**-2, lambda a, b: a**-2),
    ("relu_pos", lambda a, b: a.relu(), lambda a, b: max(a, 0.0)),
    ("relu_neg", lambda a, b: b.relu(), lambda a, b: max(b, 0.0)),
    ("tanh", lambda a, b: b.tanh(), lambda a, b: math.tanh(b)),
    ("exp", lambda a, b: b.exp(), lambda a, b: math.exp(b)),
    ("log", lambda a, b: a.log(), lambda a, b: math.log(a)),
    ("sigmoid_neg", lambda a, b: b.sigmoid(), lambda a, b: 1 / (1 + math.exp(-b))),
    ("sigmoid_pos", lambda a, b: a.sigmoid(), lambda a, b: 1 / (1 + math.exp(-a))),
]

# (name, expression, d/da, d/db) with derivatives written out by hand
DERIVATIVES: list[
    tuple[str, Callable[[Value, Value], Value], Callable[[float, float], tuple[float, float]]]
] = [
    ("add", lambda a, b: a + b, lambda a, b: (1.0, 1.0)),
    ("sub", lambda a, b: a - b, lambda a, b: (1.0, -1.0)),
    ("mul", lambda a, b: a * b, lambda a, b: (b, a)),
    ("div", lambda a, b: a / b, lambda a, b: (1 / b, -a / b**2)),
    ("rsub", lambda a, b: 2 - a, lambda a, b: (-1.0, 0.0)),
    ("rdiv", lambda a, b: 2 / a, lambda a, b: (-2 / a**2, 0.0)),
    ("neg", lambda a, b: -a, lambda a, b: (-1.0, 0.0)),
    ("pow", lambda a, b: a**1.5, lambda a, b: (1.5 * a**0.5, 0.0)),
    ("relu", lambda a, b: a.relu() + b.relu(), lambda a, b: (1.0, 0.0)),
    ("tanh", lambda a, b: a.tanh(), lambda a, b: (1 - math.tanh(a) ** 2, 0.0)),
    ("exp", lambda a, b: b.exp(), lambda a, b: (0.0, math.exp(b))),
    ("log", lambda a, b: a.log(), lambda a, b: (1 / a, 0.0)),
    (
        "sigmoid",
        lambda a, b: b.sigmoid(),
        lambda a, b: (0.0, math.exp(-b) / (1 + math.exp(-b)) ** 2),
    ),
    ("square_shared", lambda a, b: a * a, lambda a, b: (2 * a, 0.0)),
]


@pytest.mark.parametrize(("name", "expr", "plain"), FORWARD, ids=[row[0] for row in FORWARD])
def test_forward_matches_float_arithmetic(
    name: str, expr: Callable[[Value, Value], Value], plain: Callable[[float, float], float]
) -> None:
    """Every operation and reflected form computes what Python floats compute."""
    assert expr(Value(A), Value(B)).data == pytest.approx(plain(A, B), rel=1e-15)


@pytest.mark.parametrize(
    ("name", "expr", "grads"), DERIVATIVES, ids=[row[0] for row in DERIVATIVES]
)
def test_backward_gives_the_analytic_derivative(
    name: str,
    expr: Callable[[Value, Value], Value],
    grads: Callable[[float, float], tuple[float, float]],
) -> None:
    """Each operation's local derivative, pushed by backward, is the textbook one."""
    a, b = Value(A), Value(B)
    expr(a, b).backward()
    assert (a.grad, b.grad) == pytest.approx(grads(A, B), rel=1e-12)


def test_micrograd_readme_example() -> None:
    """The expression from micrograd's README gives the numbers micrograd documents."""
    a = Value(-4.0)
    b = Value(2.0)
    c = a + b
    d = a * b + b**3
    c += c + 1
    c += 1 + c + (-a)
    d += d * 2 + (b + a).relu()
    d += 3 * d + (b - a).relu()
    e = c - d
    f = e**2
    g = f / 2.0
    g += 10.0 / f
    g.backward()
    assert round(g.data, 4) == 24.7041
    assert round(a.grad, 4) == 138.8338
    assert round(b.grad, 4) == 645.5773


def test_prev_is_an_ordered_tuple_of_operands() -> None:
    """``_prev`` keeps the operands in call order, a repeated operand twice."""
    a, b = Value(1.0, "a"), Value(2.0, "b")
    assert (b - a)._prev == (b, a)
    assert (a * a)._prev == (a, a)
    assert (3 - a)._prev[1] is a


def test_op_names() -> None:
    """Each result records the operation that made it; inputs have none."""
    a = Value(2.0)
    ops = [(a + 1)._op, (a - 1)._op, (a * 2)._op, (a / 2)._op, (-a)._op, (a**2)._op]
    ops += [a.relu()._op, a.tanh()._op, a.exp()._op, a.log()._op, a.sigmoid()._op]
    assert ops == ["+", "-", "*", "/", "neg", "**2", "ReLU", "tanh", "exp", "log", "sigmoid"]
    assert a._op == ""


def test_backward_accumulates_like_micrograd() -> None:
    """``Value.backward`` adds to existing gradients; a second call doubles a leaf's grad."""
    a = Value(3.0)
    y = a * 2
    y.backward()
    y.backward()
    assert a.grad == 4.0


def test_backward_from_starts_from_zero_and_scales_by_seed() -> None:
    """``backward_from`` zeroes gradients first and seeds the root with ``seed``."""
    a = Value(3.0)
    y = a * 2
    a.grad = 100.0
    backward_from(y, seed=0.5)
    assert (a.grad, y.grad) == (1.0, 0.5)


def test_backward_from_can_accumulate() -> None:
    """``zero_first=False`` keeps the gradients already there."""
    a = Value(3.0)
    y = a * 2
    a.grad = 1.0
    backward_from(y, zero_first=False)
    assert a.grad == 3.0


def test_zero_grad_clears_every_node() -> None:
    """``zero_grad`` resets the gradient of every node in the graph."""
    a, b = Value(1.0), Value(2.0)
    y = (a * b).tanh()
    y.backward()
    zero_grad(y)
    assert [a.grad, b.grad, y.grad] == [0.0, 0.0, 0.0]


def test_values_have_no_instance_dict() -> None:
    """Values use ``__slots__``: unknown attributes cannot be set by typo."""
    with pytest.raises(AttributeError):
        Value(1.0).gard = 1.0  # type: ignore[attr-defined]


def test_data_is_stored_as_float() -> None:
    """Integer and boolean inputs become floats."""
    assert (Value(3).data, Value(True).data) == (3.0, 1.0)
    assert type(Value(3).data) is float


def test_repr_shows_numbers_label_and_op() -> None:
    """The repr names data, grad, label and op."""
    y = Value(2.0, "x") * 3
    assert repr(y) == "Value(data=6.0, grad=0.0, op='*')"
    assert repr(Value(1.0, "a")) == "Value(data=1.0, grad=0.0, label='a')"


@pytest.mark.parametrize("exponent", [Value(2.0), "2", None, 1j])
def test_non_number_exponent_is_a_clear_type_error(exponent: object) -> None:
    """``x ** e`` with a non-real exponent raises TypeError naming the problem."""
    with pytest.raises(TypeError, match="exponent"):
        Value(2.0) ** exponent  # type: ignore[operator]


@pytest.mark.parametrize("bad", [None, 1j, [1.0], object()])
def test_non_number_data_is_a_clear_type_error(bad: object) -> None:
    """A Value of something ``float()`` rejects raises TypeError naming Value."""
    with pytest.raises(TypeError, match="Value needs a number"):
        Value(bad)


def test_data_is_read_with_float_as_in_0_2_0() -> None:
    """Numeric strings and objects with ``__float__`` are accepted, as 0.2.0's ``float()``."""
    assert (Value("2.5").data, Value(" -1e3 ").data) == (2.5, -1000.0)
    assert (Value(1.0) + "1").data == 2.0


def test_non_numeric_string_is_a_value_error() -> None:
    """A string ``float()`` cannot read raises ValueError (as ``float()`` does), naming Value."""
    with pytest.raises(ValueError, match="Value needs a number"):
        Value("abc")


def test_non_number_operand_is_a_clear_error() -> None:
    """Adding a non-numeric string to a Value raises ValueError, not an assertion."""
    with pytest.raises(ValueError, match="Value needs a number"):
        Value(1.0) + "x"


@pytest.mark.parametrize("x", [0.0, -1.0])
def test_log_of_non_positive_is_a_value_error(x: float) -> None:
    """``log`` of zero or a negative number raises ValueError with the value."""
    with pytest.raises(ValueError, match="positive"):
        Value(x).log()


def test_negative_base_fractional_exponent_is_a_value_error() -> None:
    """A negative number to a fractional power would be complex: ValueError."""
    with pytest.raises(ValueError, match="negative base"):
        Value(-8.0) ** 0.5


def test_division_by_zero_names_the_operation() -> None:
    """Dividing by a zero Value raises ZeroDivisionError mentioning Value."""
    with pytest.raises(ZeroDivisionError, match="Value division by zero"):
        Value(1.0) / 0


def test_exp_overflow_is_reported() -> None:
    """``exp`` of a huge number raises OverflowError naming the input."""
    with pytest.raises(OverflowError, match="1000"):
        Value(1000.0).exp()


def test_sigmoid_of_large_inputs_does_not_overflow() -> None:
    """``sigmoid`` saturates to 0 and 1 instead of overflowing."""
    assert (Value(-1000.0).sigmoid().data, Value(1000.0).sigmoid().data) == (0.0, 1.0)


def test_sqrt_at_zero_has_infinite_slope() -> None:
    """``0 ** 0.5`` is 0 with an infinite local derivative, not a crash."""
    x = Value(0.0)
    (x**0.5).backward()
    assert x.grad == math.inf
