"""The scalar `Value`: one node of a computation graph, and its local derivatives.

Each operation computes its result and, beside it, the local derivative of the
result with respect to each operand, by name (``d_x``, ``d_y``), as micrograd
writes them in its ``_backward`` closures. The backward pass is the chain rule
along ``_prev``: each operand receives ``local * out.grad``. It is written
once, in `chain_rule`, which every backward entry point (``backward``,
`backward_from`, the debuggers, the stepping viewer) runs.

Storing two numbers instead of a closure per node keeps nodes small and free of
reference cycles, and lets the backward loop run without a Python call per
node. micrograd's custom-operation pattern works as well::

    out = Value(x.data ** 3, (x,), "cube")
    def _backward():
        x.grad += 3 * x.data ** 2 * out.grad
    out._backward = _backward

A node built with ``Value(data, _children, _op)`` passes no gradient until its
``_backward`` is assigned, as in micrograd.

Identity: ``node_id`` is ``v<k>``, ``k`` counted per process in creation order
(``Value._next_seq = 0`` starts the count again, as in 0.2.0). It is fixed for
the object's lifetime. DOT, IR and the viewers name nodes by it, as 0.2.0 did
(see `export_ids`): resetting the count before building an expression makes
its export the same text in every process. Position ids (``n<k>``, see
`position_ids`) are there behind an explicit ``ids="position"``.
"""

from __future__ import annotations

import itertools
import math
import numbers
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Literal

#: How DOT, IR and the viewers name nodes: by ``Value.node_id`` (0.2.0's ids, the
#: default) or by position in the topological order (``n<k>``).
IdScheme = Literal["node_id", "position"]

_new = object.__new__
_EMIT = object()  # stack marker in topological_order: "emit the node below me"
_tick: Callable[[], int] = itertools.count().__next__  # the next creation number


def _no_local_derivative() -> None:
    """The ``_backward`` of a node built by hand until its own is assigned."""


class _ValueType(type):
    """Metaclass of `Value`: makes ``Value._next_seq`` read and reset the id counter."""

    @property
    def _next_seq(cls) -> int:
        """The number the next Value's ``node_id`` gets (``v<number>``)."""
        # The engine's id counter, read on every Value made: a module global is the
        # fastest read there is (0.2.0's `Value._next_seq` reads and resets it).
        global _tick  # noqa: PLW0603 (see above)
        upcoming = _tick()
        _tick = itertools.count(upcoming).__next__
        return upcoming

    @_next_seq.setter
    def _next_seq(cls, value: int) -> None:
        global _tick  # noqa: PLW0603 (the id counter, see the getter)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"Value._next_seq must be an int >= 0, got {value!r}")
        _tick = itertools.count(value).__next__


class Value(metaclass=_ValueType):
    """A scalar with a gradient, produced by an operation on other Values.

    Args:
        data: the number; anything ``float()`` accepts (``2``, ``"2.5"``, a
            NumPy scalar), as in 0.2.0.
        _children: the operands, for a custom operation (micrograd's form);
            assign ``out._backward`` to say how gradients flow to them.
        _op: the name of that operation, shown in DOT and IR.
        label: a name shown in DOT, IR and the viewer. It may also be given
            as the second positional argument: ``Value(2.0, "a")``.

    Example:
        >>> a, b = Value(2.0, label="a"), Value(-3.0, label="b")
        >>> y = (a * b + 10).tanh()
        >>> y.backward()
        >>> round(a.grad, 6)
        -0.004023

    Raises:
        TypeError: ``data`` is not a number, or a child is not a Value.
        ValueError: ``data`` is a string ``float()`` cannot read.
    """

    __slots__ = ("_bw", "_d0", "_d1", "_op", "_prev", "_seq", "data", "grad", "label")

    data: float
    grad: float
    label: str
    _prev: tuple[Value, ...]
    _op: str
    _d0: float
    _d1: float
    _bw: Callable[[], None] | None
    _seq: int

    def __init__(
        self,
        data: Any,
        _children: Iterable[Value] | str = (),
        _op: str = "",
        label: str = "",
    ) -> None:
        if isinstance(_children, str):  # Value(2.0, "a"): a label, never a list of children
            if _op or label:
                raise TypeError(
                    f"Value(data, _children, _op, label): _children must be Values, "
                    f"got the string {_children!r}"
                )
            label = _children
            prev: tuple[Value, ...] = ()
        else:
            prev = tuple(_children)
        for child in prev:
            if not isinstance(child, Value):
                raise TypeError(
                    f"Value _children must be Values, got {type(child).__name__}: {child!r}"
                )
        self.data = as_float(data)
        self.grad = 0.0
        self.label = label
        self._prev = prev
        self._op = _op
        self._d0 = self._d1 = 0.0
        self._bw = _no_local_derivative if prev else None
        self._seq = _tick()

    # -- identity ---------------------------------------------------------------

    @property
    def node_id(self) -> str:
        """``v<k>``: unique in the process (until ``Value._next_seq`` is reset), DOT-safe."""
        return f"v{self._seq}"

    @property
    def display_name(self) -> str:
        """The label, or the node id when the label is empty."""
        return self.label or self.node_id

    @property
    def _backward(self) -> Callable[[], None]:
        """This node's step of the chain rule (assignable, micrograd's custom-op pattern)."""
        if self._bw is not None:
            return self._bw
        return self._chain_rule_step

    @_backward.setter
    def _backward(self, fn: Callable[[], None]) -> None:
        if not callable(fn):
            raise TypeError(f"Value._backward must be callable, got {type(fn).__name__}")
        self._bw = fn

    def _chain_rule_step(self) -> None:
        chain_rule((self,))

    def __repr__(self) -> str:
        op = f", op={self._op!r}" if self._op else ""
        label = f", label={self.label!r}" if self.label else ""
        return f"Value(data={self.data!r}, grad={self.grad!r}{label}{op})"

    def _repr_html_(self) -> str | None:
        """Jupyter's inline view of this graph; the notebook bridge, imported on first use.

        See `flow_xray.integrations.notebook.value_html` (None for a graph too big to draw).
        """
        from flow_xray.integrations.notebook import value_html  # noqa: PLC0415 (the bridge)

        return value_html(self)

    # -- arithmetic: the result, then d(result)/d(operand) by name ----------------

    def __add__(self, other: Value | float | str) -> Value:
        y = other if isinstance(other, Value) else Value(other)
        return _binary(self.data + y.data, "+", self, y, d_x=1.0, d_y=1.0)

    def __radd__(self, other: float | str) -> Value:
        return Value(other) + self

    def __sub__(self, other: Value | float | str) -> Value:
        y = other if isinstance(other, Value) else Value(other)
        return _binary(self.data - y.data, "-", self, y, d_x=1.0, d_y=-1.0)

    def __rsub__(self, other: float | str) -> Value:
        return Value(other) - self

    def __mul__(self, other: Value | float | str) -> Value:
        y = other if isinstance(other, Value) else Value(other)
        return _binary(self.data * y.data, "*", self, y, d_x=y.data, d_y=self.data)

    def __rmul__(self, other: float | str) -> Value:
        return Value(other) * self

    def __truediv__(self, other: Value | float | str) -> Value:
        y = other if isinstance(other, Value) else Value(other)
        b = y.data
        if b == 0.0:
            raise ZeroDivisionError(f"Value division by zero ({self.data!r} / 0)")
        q = self.data / b
        return _binary(q, "/", self, y, d_x=1.0 / b, d_y=-q / b)

    def __rtruediv__(self, other: float | str) -> Value:
        return Value(other) / self

    def __neg__(self) -> Value:
        return _unary(-self.data, "neg", self, d_x=-1.0)

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
            d_x = 0.0
        else:
            try:
                d_x = k * x ** (k - 1)
            except ZeroDivisionError:  # 0 ** k with 0 < k < 1: the slope is infinite
                d_x = math.inf
        return _unary(float(y), f"**{k}", self, d_x=d_x)

    # -- elementwise functions ------------------------------------------------------

    def relu(self) -> Value:
        """max(0, x); the derivative at 0 is taken as 0. The op name is ``ReLU`` (as 0.2.0)."""
        x = self.data
        return _unary(x if x > 0.0 else 0.0, "ReLU", self, d_x=1.0 if x > 0.0 else 0.0)

    def tanh(self) -> Value:
        """Hyperbolic tangent; derivative 1 - tanh(x)**2."""
        t = math.tanh(self.data)
        return _unary(t, "tanh", self, d_x=1.0 - t * t)

    def exp(self) -> Value:
        """e**x; derivative e**x.

        Raises:
            OverflowError: the result does not fit a float.
        """
        try:
            e = math.exp(self.data)
        except OverflowError:
            raise OverflowError(f"Value.exp({self.data!r}) overflows a float") from None
        return _unary(e, "exp", self, d_x=e)

    def log(self) -> Value:
        """Natural logarithm; derivative 1/x.

        Raises:
            ValueError: x is zero or negative.
        """
        x = self.data
        if not x > 0.0:
            raise ValueError(f"Value.log needs a positive value, got {x!r}")
        return _unary(math.log(x), "log", self, d_x=1.0 / x)

    def sigmoid(self) -> Value:
        """1 / (1 + e**-x), computed without overflow; derivative s * (1 - s)."""
        x = self.data
        if x >= 0.0:
            s = 1.0 / (1.0 + math.exp(-x))
        else:
            e = math.exp(x)
            s = e / (1.0 + e)
        return _unary(s, "sigmoid", self, d_x=s * (1.0 - s))

    # -- backward ---------------------------------------------------------------

    def backward(self) -> None:
        """Backpropagate from this node with gradient 1, accumulating like micrograd.

        Sets this node's grad to 1 and adds to every other gradient, so calling it
        twice doubles the leaves' gradients; `backward_from` starts from zero.
        """
        backward_from(self, 1.0, zero_first=False)


def as_float(data: object) -> float:
    """``float(data)``, as 0.2.0 did, with a message naming Value when it fails.

    Raises:
        TypeError: ``data`` is not a number (``None``, a list, a complex).
        ValueError: ``data`` is a string that is not a number.
    """
    if type(data) is float:
        return data
    try:
        return float(data)  # type: ignore[arg-type]  # anything float() takes, as in 0.2.0
    except (TypeError, ValueError) as exc:
        raise type(exc)(
            f"Value needs a number (anything float() accepts), got {type(data).__name__}: {data!r}"
        ) from None


def _unary(data: float, op: str, x: Value, *, d_x: float) -> Value:
    """The result of a one-operand operation, with d(result)/dx (no `Value.__init__`)."""
    out: Value = _new(Value)
    out.data = data
    out.grad = 0.0
    out.label = ""
    out._prev = (x,)
    out._op = op
    out._d0 = d_x
    out._d1 = 0.0
    out._bw = None
    out._seq = _tick()
    return out


def _binary(data: float, op: str, x: Value, y: Value, *, d_x: float, d_y: float) -> Value:
    """The result of a two-operand operation, with d(result)/dx and d(result)/dy."""
    out: Value = _new(Value)
    out.data = data
    out.grad = 0.0
    out.label = ""
    out._prev = (x, y)
    out._op = op
    out._d0 = d_x
    out._d1 = d_y
    out._bw = None
    out._seq = _tick()
    return out


def chain_rule(nodes: Iterable[Value]) -> None:
    """Apply the chain rule at each node, in the order given (root first for a full pass).

    A node's step adds ``d(node)/d(operand) * node.grad`` to each operand's grad;
    a node with an assigned ``_backward`` runs it instead. This is the one place
    gradients flow: every backward entry point calls it.
    """
    # Unrolled by arity, no call per built-in node: half the time of calling a
    # method per node.
    for node in nodes:
        custom = node._bw
        if custom is not None:
            custom()
            continue
        prev = node._prev
        if len(prev) == 2:
            g = node.grad
            x, y = prev
            x.grad += node._d0 * g
            y.grad += node._d1 * g
        elif prev:
            prev[0].grad += node._d0 * node.grad


def start_backward(order: Sequence[Value], seed: float, *, zero_first: bool = True) -> None:
    """Zero every gradient of ``order`` (unless ``zero_first`` is False), then seed the root.

    ``order`` is a topological order, root last. Every backward entry point starts here.
    """
    if zero_first:
        for node in order:
            node.grad = 0.0
    order[-1].grad = seed


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


def position_ids(order: Sequence[Value]) -> dict[Value, str]:
    """The position id of each node of a topological order: ``n<k>``, k its position.

    The same expression gets the same ids however many Values the process made
    before, without resetting ``Value._next_seq``.
    """
    return {node: f"n{k}" for k, node in enumerate(order)}


def export_ids(order: Sequence[Value], ids: IdScheme = "node_id") -> dict[Value, str]:
    """The id DOT, IR and the viewers give each node of a topological order.

    ``ids="node_id"`` (the default, as 0.2.0 wrote them) uses ``Value.node_id``;
    a node sharing its ``node_id`` with an earlier one of the same graph (one
    made before a ``Value._next_seq`` reset) gets ``v<k>_2``, ``v<k>_3``, ... so
    ids stay unique. ``ids="position"`` uses `position_ids`.

    Raises:
        ValueError: ``ids`` is neither ``"node_id"`` nor ``"position"``.
    """
    if ids == "position":
        return position_ids(order)
    if ids != "node_id":
        raise ValueError(f"ids must be 'node_id' or 'position', got {ids!r}")
    found = {node: node.node_id for node in order}
    if len(set(found.values())) == len(found):
        return found
    seen: set[str] = set()
    for node, name in found.items():
        unique, k = name, 2
        while unique in seen:
            unique, k = f"{name}_{k}", k + 1
        seen.add(unique)
        found[node] = unique
    return found


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
    order = topological_order(root)
    start_backward(order, as_float(seed), zero_first=zero_first)
    chain_rule(reversed(order))
