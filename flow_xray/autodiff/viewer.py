"""Offline HTML viewers for `Value` graphs, drawn by ``flow_xray.render``.

The render layer is imported inside the functions (its page machinery takes ~25 ms
to import), so importing the autodiff package stays cheap and never pulls in more
than the standard library.
`value_viewer_html` hands the renderer the graph plus one frame per backward
step: the page can then walk through the backward pass, highlighting the node
whose gradient is being pushed and showing every gradient filled so far.

What the page does with a real model (decided in ``render/static/graph_groups.js``
and ``graph_app.js``, from the labels alone, so DOT pages do the same):

- Following: each step's box is centred at a readable scale (labels at their
  natural size) when it is off-screen or drawn too small to read; a box already
  in view at a readable scale stays put, so a small graph never jumps. The page
  opens on the fitted drawing; a "Follow" box turns following off.
- Gradients: a ``grad: G`` row reads signed with 4 significant digits
  (``+0.1235``, ``-1.5``, ``-1.235e-4``), with a strip on the box coloured by
  sign and by size against the graph's largest gradient. Frame labels keep
  ``%.6g`` (as DOT does) and the detail panel the full float.
- Folding: a label named ``L<k>.N<j>.<part>`` (as `flow_xray.autodiff.nn`
  names every node; any ``a.b.rest`` name of identifiers) puts its node in
  neuron ``L<k>.N<j>`` inside layer ``L<k>``. Graphs over 150 nodes open with
  every neuron folded into one box (a 3-layer MLP's loss: 358 nodes, 38 boxes;
  every layer when no neuron has two members);
  a click opens a folded box, header buttons expand all / collapse neurons /
  collapse layers, and a node's detail folds its neuron or layer. Stepping
  never unfolds: the folded box holding the stepped node is highlighted and
  names it. Graphs without such names are drawn as they are.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from flow_xray.autodiff.debugger import backward_steps
from flow_xray.autodiff.export import format_number, node_lines, op_name
from flow_xray.autodiff.value import Value, as_float, export_ids, topological_order
from flow_xray.files import write_text_atomic

if TYPE_CHECKING:
    from flow_xray.render import Graph, GraphNode, Step

#: Graphs larger than this get no stepping frames: each frame repeats the labels
#: of every node reached so far, so frames grow with the square of the size.
MAX_STEP_NODES = 500


def standalone_viewer_html(dot: str, title: str = "flow-xray graph") -> str:
    """A self-contained, offline HTML page showing DOT text as an interactive graph.

    flow-xray's own DOT and plain ``a -> b`` digraphs are drawn, with the DOT
    text kept in the page (a "DOT source" section with a copy button);
    anything else is shown as text.
    """
    from flow_xray import render  # noqa: PLC0415 (loaded on first use: see above)

    return render.dot_viewer_html(dot, title=title)


def write_standalone_viewer_html(
    path: str | os.PathLike[str], dot: str, title: str = "flow-xray graph"
) -> None:
    """Write `standalone_viewer_html` to ``path`` (UTF-8, atomically)."""
    write_text_atomic(path, standalone_viewer_html(dot, title=title))


def value_viewer_html(
    root: Value,
    title: str = "flow-xray autodiff graph",
    seed: float = 1.0,
    *,
    max_step_nodes: int = MAX_STEP_NODES,
) -> str:
    """A self-contained HTML page of ``root``'s graph with a backward-pass stepper.

    Runs a clean backward pass (see `backward_from`). Each frame shows the
    gradients after one more node's step, nodes not reached yet at 0; the last
    frame, and a graph too large for frames, show the final gradients.

    Args:
        root: the output node.
        title: the page title.
        seed: the gradient of the output.
        max_step_nodes: above this many nodes no frames are made (the page
            still shows the graph with its final gradients).
    """
    from flow_xray import render  # noqa: PLC0415 (loaded on first use: see above)

    graph, steps = value_graph_frames(root, seed, max_step_nodes=max_step_nodes)
    return render.graph_to_html(graph, title=title, steps=steps)


def write_value_viewer_html(
    path: str | os.PathLike[str],
    root: Value,
    title: str = "flow-xray autodiff graph",
    seed: float = 1.0,
) -> None:
    """Write `value_viewer_html` to ``path`` (UTF-8, atomically)."""
    write_text_atomic(path, value_viewer_html(root, title=title, seed=seed))


def value_graph_frames(
    root: Value, seed: float = 1.0, *, max_step_nodes: int = MAX_STEP_NODES
) -> tuple[Graph, list[Step]]:
    """The render graph of ``root`` after a backward pass, and its stepping frames.

    A frame lists only the labels of the nodes the pass has reached; the viewer
    shows every other node with its graph label. So when there are frames, graph
    labels show the state before the pass (gradient 0) and a node's gradient
    appears in the frame that fills it. Without frames, graph labels show the
    final gradients. Node details always hold the final gradients.
    """
    from flow_xray.render import Graph, GraphEdge, Step  # noqa: PLC0415 (loaded on first use: see above)

    order = topological_order(root)
    ids = export_ids(order)
    make_frames = len(order) <= max_step_nodes
    # With frames, graph labels show the state before the pass: every gradient 0.
    before = [_label(node, ids[node], True, grad=0.0) for node in order] if make_frames else []
    steps: list[Step] = []
    reached: dict[str, Value] = {}  # insertion-ordered: frames list nodes in a fixed order
    for k, node in enumerate(backward_steps(order, as_float(seed))):
        if not make_frames:
            continue
        reached.setdefault(ids[node], node)
        for operand in node._prev:
            reached.setdefault(ids[operand], operand)
        labels = {nid: _label(v, nid, show_grad=True) for nid, v in reached.items()}
        caption = (
            f"step {k + 1}/{len(order)}: {node.label or ids[node]} ({op_name(node)}, "
            f"grad {format_number(node.grad)}) pushes its gradient to "
            f"{len(node._prev)} operand(s)"
        )
        steps.append(Step(active=ids[node], caption=caption, labels=labels))
    edges = [
        GraphEdge(source=ids[operand], target=ids[node], label=node._op)
        for node in order
        for operand in node._prev
    ]
    nodes = [
        _graph_node(node, ids, before[k] if make_frames else _label(node, ids[node], True))
        for k, node in enumerate(order)
    ]
    return Graph(nodes=tuple(nodes), edges=tuple(edges), rankdir="BT"), steps


def _label(node: Value, nid: str, show_grad: bool, grad: float | None = None) -> str:
    """A node's box text, one row per line (``grad`` replaces the node's gradient)."""
    rows = node_lines(node, node.label or nid, show_grad)
    if grad is not None and show_grad:
        rows[-1] = f"grad: {format_number(grad)}"
    return "\n".join(rows)


def _graph_node(node: Value, ids: dict[Value, str], label: str) -> GraphNode:
    """The render node of a Value, with its final numbers in the detail panel."""
    from flow_xray.render import GraphNode  # noqa: PLC0415 (loaded on first use: see above)

    detail = {
        "name": node.label or ids[node],
        "op": op_name(node),
        "data": node.data,
        "grad": node.grad,
        "operands": [operand.label or ids[operand] for operand in node._prev],
    }
    return GraphNode(id=ids[node], label=label, detail=detail)
