"""The scalar `Value`: one node of a computation graph, and its local derivatives.

Each operation computes its result and, right beside it, the local derivative of
the result with respect to each operand (``_d0`` for the first, ``_d1`` for the
second). The backward pass is then the chain rule applied along ``_prev``: each
operand receives ``local * out.grad``. Storing two numbers instead of
micrograd's per-node closure keeps nodes small (one allocation per operation
besides the operand tuple), makes the graph free of reference cycles, and lets
the backward loop run without a Python call per node.

Node ids are not fixed at creation: ``node_id`` is ``n<k>``, ``k`` being the
node's position in the topological order of the graph that was last exported
(`number_graph`), or of the node's own sub-graph when it was never exported.
So building the same expression twice, in one process or in two, gives the
same ids, the same DOT and the same IR. To read the ids of a whole graph, call
``number_graph(root)`` (or export it) first: asking a leaf of an unnumbered
graph for its id numbers only that leaf's sub-graph, so every such leaf is n0.
"""

from __future__ import annotations

import math
import numbers

_new = object.__new__
_EMIT = object()  # stack marker in topological_order: "emit the node below me"


class Value:
    """A scalar with a gradient, produced by an operation on other Values.

    Args:
        data: the number (anything real: int, float, ``numbers.Real``).
        label: a name shown in DOT, IR and the viewer (empty: the node id).

    Example:
        >>> a, b = Value(2.0, "a"), Value(-3.0, "b")
        >>> y = (a * b + 10).tanh()
        >>> y.backward()
        >>> round(a.grad, 6)
        -0.004023

    Raises:
        TypeError: ``data`` is not a real number.
    """

    __slots__ = ("_d0", "_d1", "_nid", "_op", "_prev", "data", "grad", "label")

    data: float
    grad: float
    label: str
    _prev: tuple[Value, ...]
    _d0: float
    _d1: float
    _op: str
    _nid: str | None

    def __init__(self, data: float, label: str = "") -> None:
        self.data = as_float(data)
        self.grad = 0.0
        self.label = label
        self._prev = ()
        self._d0 = self._d1 = 0.0
        self._op = ""
        self._nid = None

    # -- identity ---------------------------------------------------------------

    @property
    def node_id(self) -> str:
        """DOT-safe id ``n<k>``; numbers this node's sub-graph if it was never exported."""
        if self._nid is None:
            number_graph(self)
        return self._nid  # type: ignore[return-value]  # number_graph always sets it

    @property
    def display_name(self) -> str:
        """The label, or the node id when the label is empty."""
        return self.label or self.node_id

    def __repr__(self) -> str:
        op = f", op={self._op!r}" if self._op else ""
        label = f", label={self.label!r}" if self.label else ""
        return f"Value(data={self.data!r}, grad={self.grad!r}{label}{op})"

    # -- arithmetic: forward value and local derivatives side by side -----------

    def __add__(self, other: Value | float) -> Value:
        other = other if isinstance(other, Value) else Value(other)
        return _binary(self.data + other.data, self, other, 1.0, 1.0, "+")

    def __radd__(self, other: float) -> Value:
        return Value(other) + self

    def __sub__(self, other: Value | float) -> Value:
        other = other if isinstance(other, Value) else Value(other)
        return _binary(self.data - other.data, self, other, 1.0, -1.0, "-")

    def __rsub__(self, other: float) -> Value:
        return Value(other) - self

    def __mul__(self, other: Value | float) -> Value:
        other = other if isinstance(other, Value) else Value(other)
        return _binary(self.data * other.data, self, other, other.data, self.data, "*")

    def __rmul__(self, other: float) -> Value:
        return Value(other) * self

    def __truediv__(self, other: Value | float) -> Value:
        other = other if isinstance(other, Value) else Value(other)
        b = other.data
        if b == 0.0:
            raise ZeroDivisionError(f"Value division by zero ({self.data!r} / 0)")
        q = self.data / b
        return _binary(q, self, other, 1.0 / b, -q / b, "/")

    def __rtruediv__(self, other: float) -> Value:
        return Value(other) / self

    def __neg__(self) -> Value:
        return _unary(-self.data, self, -1.0, "neg")

    def __pow__(self, exponent: float) -> Value:
        if isinstance(exponent, Value) or not isinstance(exponent, numbers.Real):
            raise TypeError(
                "Value ** exponent needs an int or float exponent, got "
                f"{type(exponent).__name__}; for a Value exponent write (y * x.log()).exp()"
            )
        k = int(exponent) if isinstance(exponent, bool) else exponent
        x = self.data
        try:
            y = x**k
        except ZeroDivisionError:
            raise ZeroDivisionError(f"Value 0.0 ** {k!r}: zero to a negative power") from None
        if isinstance(y, complex):
            raise ValueError(f"Value {x!r} ** {k!r}: a negative base needs an integer exponent")
        if k == 0:
            local = 0.0
        else:
            try:
                local = k * x ** (k - 1)
            except ZeroDivisionError:  # 0 ** k with 0 < k < 1: the slope is infinite
                local = math.inf
        return _unary(float(y), self, local, f"**{k}")

    # -- elementwise functions ------------------------------------------------------

    def relu(self) -> Value:
        """max(0, x); the derivative at 0 is taken as 0."""
        x = self.data
        return _unary(x if x > 0.0 else 0.0, self, 1.0 if x > 0.0 else 0.0, "relu")

    def tanh(self) -> Value:
        """Hyperbolic tangent; derivative 1 - tanh(x)**2."""
        t = math.tanh(self.data)
        return _unary(t, self, 1.0 - t * t, "tanh")

    def exp(self) -> Value:
        """e**x; derivative e**x.

        Raises:
            OverflowError: the result does not fit a float.
        """
        try:
            e = math.exp(self.data)
        except OverflowError:
            raise OverflowError(f"Value.exp({self.data!r}) overflows a float") from None
        return _unary(e, self, e, "exp")

    def log(self) -> Value:
        """Natural logarithm; derivative 1/x.

        Raises:
            ValueError: x is zero or negative.
        """
        x = self.data
        if not x > 0.0:
            raise ValueError(f"Value.log needs a positive value, got {x!r}")
        return _unary(math.log(x), self, 1.0 / x, "log")

    def sigmoid(self) -> Value:
        """1 / (1 + e**-x), computed without overflow; derivative s * (1 - s)."""
        x = self.data
        if x >= 0.0:
            s = 1.0 / (1.0 + math.exp(-x))
        else:
            e = math.exp(x)
            s = e / (1.0 + e)
        return _unary(s, self, s * (1.0 - s), "sigmoid")

    # -- backward ---------------------------------------------------------------

    def _backward(self) -> None:
        """Chain rule for this node: add ``local * self.grad`` to each operand's grad."""
        g = self.grad
        prev = self._prev
        if prev:
            prev[0].grad += self._d0 * g
        if len(prev) == 2:
            prev[1].grad += self._d1 * g

    def backward(self) -> None:
        """Backpropagate from this node with gradient 1, accumulating like micrograd.

        Gradients add up across calls; `backward_from` starts from zero instead.
        """
        backward_from(self, 1.0, zero_first=False)


def as_float(data: object) -> float:
    """Turn a real number into a float; anything else is a clear `TypeError`."""
    if isinstance(data, float):
        return data
    if isinstance(data, numbers.Real):
        return float(data)
    raise TypeError(f"Value needs a real number, got {type(data).__name__}: {data!r}")


def _unary(data: float, x: Value, d: float, op: str) -> Value:
    """Build the output of a one-operand operation without `Value.__init__`."""
    out: Value = _new(Value)
    out.data = data
    out.grad = 0.0
    out.label = ""
    out._prev = (x,)
    out._d0 = d
    out._d1 = 0.0
    out._op = op
    out._nid = None
    return out


def _binary(data: float, a: Value, b: Value, da: float, db: float, op: str) -> Value:
    """Build the output of a two-operand operation without `Value.__init__`."""
    out: Value = _new(Value)
    out.data = data
    out.grad = 0.0
    out.label = ""
    out._prev = (a, b)
    out._d0 = da
    out._d1 = db
    out._op = op
    out._nid = None
    return out


def topological_order(root: Value) -> list[Value]:
    """Every node of ``root``'s graph once, operands before results, ``root`` last.

    A depth-first post-order over ``_prev`` in operand order, as the recursive
    version would give, kept on an explicit stack: deterministic, and a chain of
    any depth works. When a node is expanded, it goes back on the stack under an
    `_EMIT` marker and its operands above it; popping the marker means all the
    operands are done, so the node below it is emitted.
    """
    order: list[Value] = []
    visited: set[Value] = set()
    stack: list[Value | object] = [root]
    push, pop, emit, mark = stack.append, stack.pop, order.append, visited.add
    while stack:
        node = pop()
        if node is _EMIT:
            emit(pop())  # type: ignore[arg-type]  # the entry under a marker is a Value
            continue
        if node in visited:  # pushed by two results before it was expanded
            continue
        mark(node)  # type: ignore[arg-type]
        prev = node._prev  # type: ignore[attr-defined]
        if not prev:
            emit(node)  # type: ignore[arg-type]
            continue
        push(node)
        push(_EMIT)
        # Unrolled for the one- and two-operand cases: no iterator per node.
        if len(prev) == 2:
            first, second = prev
            if second not in visited:
                push(second)
            if first not in visited:
                push(first)
        elif len(prev) == 1:
            if prev[0] not in visited:
                push(prev[0])
        else:
            for operand in reversed(prev):
                if operand not in visited:
                    push(operand)
    return order


def number_graph(root: Value) -> list[Value]:
    """Give every node of ``root``'s graph its id ``n<k>`` (k = topological position).

    Returns:
        The topological order that was numbered.
    """
    order = topological_order(root)
    for k, node in enumerate(order):
        node._nid = f"n{k}"
    return order


def zero_grad(root: Value) -> None:
    """Set the gradient of every node in ``root``'s graph to 0."""
    for node in topological_order(root):
        node.grad = 0.0


def backward_from(root: Value, seed: float = 1.0, *, zero_first: bool = True) -> None:
    """Run the backward pass from ``root`` with ``root.grad = seed``.

    Args:
        root: the output node.
        seed: the gradient of the output (1.0 for d root / d x).
        zero_first: zero every gradient first (default); False accumulates into
            the existing gradients, like micrograd's ``backward``.
    """
    _backprop(topological_order(root), as_float(seed), zero_first)


def _backprop(order: list[Value], seed: float, zero_first: bool) -> None:
    """The backward loop over a topological order (root last)."""
    if zero_first:
        for node in order:
            node.grad = 0.0
    order[-1].grad = seed
    # Value._backward inlined and unrolled by arity: no call per node halves the
    # time of the pass.
    for node in reversed(order):
        prev = node._prev
        if not prev:
            continue
        g = node.grad
        if len(prev) == 2:
            a, b = prev
            a.grad += node._d0 * g
            b.grad += node._d1 * g
        else:
            prev[0].grad += node._d0 * g
