"""Graphviz DOT text for a `Value` graph.

The format is fixed (golden files test it)::

    digraph G {
      rankdir="BT";
      node [shape=box, fontname="Helvetica"];
      edge [fontname="Helvetica", fontsize=10];
      n0 [label="a\\nop: leaf\\ndata: 2\\ngrad: -3"];
      ...
      n0 -> n2 [label="*"];
    }

Nodes come in topological order with ids ``n<k>`` (see `number_graph`), then
the edges: operand -> result, labelled with the result's operation, results in
topological order and operands in operand order. Numbers use ``%.6g``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from flow_xray.autodiff.value import Value, number_graph

_HEADER = (
    "digraph G {",
    '  rankdir="BT";',
    '  node [shape=box, fontname="Helvetica"];',
    '  edge [fontname="Helvetica", fontsize=10];',
)


def format_number(x: float) -> str:
    """A number as the DOT labels and the viewer show it (6 significant digits)."""
    return format(x, ".6g")


def op_name(node: Value) -> str:
    """The operation that produced ``node``, ``"leaf"`` for an input."""
    return node._op or "leaf"


def node_lines(node: Value, show_grad: bool) -> list[str]:
    """The rows of a node's box: name, op, data and (optionally) grad."""
    rows = [node.display_name, f"op: {op_name(node)}", f"data: {format_number(node.data)}"]
    if show_grad:
        rows.append(f"grad: {format_number(node.grad)}")
    return rows


def dot_escape(text: str) -> str:
    """Make ``text`` safe inside a double-quoted DOT string.

    Backslashes and quotes are escaped, line breaks become DOT's ``\\n`` and other
    control characters become spaces, so no label can end the string early.
    """
    text = text.replace("\\", "\\\\").replace('"', '\\"')
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\n", "\\n")
    if any(ch < " " for ch in text):
        text = "".join(" " if ch < " " else ch for ch in text)
    return text


def value_graph_to_dot(root: Value, *, show_grad: bool = False) -> str:
    """DOT text of the graph that produced ``root`` (format in the module docstring).

    Args:
        root: the output node.
        show_grad: add a ``grad: G`` row to every box.

    Returns:
        The DOT text, ending with a newline. It is the same for the same
        expression, whatever the process.

    Example:
        >>> from flow_xray.autodiff import Value
        >>> print(value_graph_to_dot(Value(2.0, "a") * 3).splitlines()[4])
          n0 [label="a\\nop: leaf\\ndata: 2"];
    """
    return dot_from_order(number_graph(root), show_grad)


def dot_from_order(order: Sequence[Value], show_grad: bool) -> str:
    """DOT text for an already numbered topological order (root last)."""
    lines = list(_HEADER)
    for node in order:
        label = "\\n".join(dot_escape(row) for row in node_lines(node, show_grad))
        lines.append(f'  {node._nid} [label="{label}"];')
    for node in order:
        if node._prev:
            edge = f' [label="{dot_escape(node._op)}"];'
            target = node._nid
            for operand in node._prev:
                lines.append(f"  {operand._nid} -> {target}{edge}")
    lines.append("}")
    lines.append("")
    return "\n".join(lines)


def write_dot(path: str | os.PathLike[str], dot: str) -> None:
    """Write DOT text to ``path`` as UTF-8 with ``\\n`` line ends."""
    with open(path, "w", encoding="utf-8", newline="\n") as handle:
        handle.write(dot)
