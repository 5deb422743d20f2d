"""Graphviz DOT text for a `Value` graph.

The format is fixed (golden files test it)::

    digraph G {
      rankdir="BT";
      node [shape=box, fontname="Helvetica"];
      edge [fontname="Helvetica", fontsize=10];
      v0 [label="a\\nop: leaf\\ndata: 2\\ngrad: -3"];
      ...
      v0 -> v2 [label="*"];
    }

Nodes come in topological order with their ``Value.node_id`` as DOT id, as 0.2.0
wrote them (``ids="position"`` names them ``n<k>`` by position instead; see
`export_ids`; an unlabelled node is named by its id too), then the edges: operand -> result,
labelled with the result's operation, results in topological order and
operands in operand order. Numbers use ``%.6g``. Text is escaped by the
package's one DOT escaper, ``flow_xray.render.graph.dot_string``, and files
are written by its one atomic writer, ``flow_xray.files``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from flow_xray.autodiff.value import IdScheme, Value, export_ids, topological_order
from flow_xray.files import write_text_atomic

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


def node_lines(node: Value, name: str, show_grad: bool) -> list[str]:
    """The rows of a node's box: ``name``, op, data and (optionally) grad."""
    rows = [name, f"op: {op_name(node)}", f"data: {format_number(node.data)}"]
    if show_grad:
        rows.append(f"grad: {format_number(node.grad)}")
    return rows


def value_graph_to_dot(root: Value, *, show_grad: bool = False, ids: IdScheme = "node_id") -> str:
    """DOT text of the graph that produced ``root`` (format in the module docstring).

    Exports the gradients as they are now; it never runs a backward pass.

    Args:
        root: the output node.
        show_grad: add a ``grad: G`` row to every box.
        ids: ``"node_id"`` (node ids ``v<k>``, as 0.2.0) or ``"position"``
            (``n<k>`` by topological position: the same text for the same
            expression without resetting ``Value._next_seq``).

    Returns:
        The DOT text, ending with a newline. The same expression built after
        ``Value._next_seq = 0`` gives the same text in any process.

    Example:
        >>> from flow_xray.autodiff import Value
        >>> Value._next_seq = 0
        >>> print(value_graph_to_dot(Value(2.0, "a") * 3).splitlines()[4])
          v0 [label="a\\nop: leaf\\ndata: 2"];
    """
    order = topological_order(root)
    return dot_from_order(order, export_ids(order, ids), show_grad)


def dot_from_order(order: Sequence[Value], ids: Mapping[Value, str], show_grad: bool) -> str:
    """DOT text for a topological order (root last) whose export ids are ``ids``."""
    # render/ is loaded on first export (its page machinery takes ~25 ms to import), so
    # `from flow_xray import Value` stays as cheap as the engine itself.
    from flow_xray.render.graph import dot_string  # noqa: PLC0415 (heavy, see above)

    lines = list(_HEADER)
    for node in order:
        nid = ids[node]
        label = "\n".join(node_lines(node, node.label or nid, show_grad))
        lines.append(f"  {nid} [label={dot_string(label)}];")
    for node in order:
        if node._prev:
            edge = f" [label={dot_string(node._op)}];"
            target = ids[node]
            for operand in node._prev:
                lines.append(f"  {ids[operand]} -> {target}{edge}")
    lines.append("}")
    lines.append("")
    return "\n".join(lines)


def write_dot(path: str | os.PathLike[str], dot: str) -> None:
    """Write DOT text to ``path`` as UTF-8 with ``\\n`` line ends (atomically)."""
    write_text_atomic(path, dot)
