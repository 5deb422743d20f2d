"""Offline HTML viewers of Value graphs (drawn by flow_xray.render)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from flow_xray.autodiff import (
    Value,
    backward_from,
    demo_graph,
    export_ids,
    standalone_viewer_html,
    topological_order,
    value_graph_to_dot,
    value_viewer_html,
    write_standalone_viewer_html,
    write_value_viewer_html,
)
from flow_xray.autodiff.nn import MLP
from flow_xray.autodiff.viewer import value_graph_frames

# A URL the browser would fetch: in src/href/action attributes, CSS url() or @import.
_NETWORK = re.compile(
    r"""(?:\b(?:src|href|action)\s*=\s*["']?\s*|url\(\s*["']?|@import\s+["']?)"""
    r"""(?:https?:|ftp:|wss?:)?//""",
    re.IGNORECASE,
)


def _embedded(text: str) -> str:
    """How a string appears inside the page's embedded JSON (quotes stripped)."""
    escaped = json.dumps(text, ensure_ascii=False)[1:-1]
    return escaped.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def test_frames_have_one_step_per_node() -> None:
    """The stepper gets one frame per backward step, each highlighting the stepped node."""
    root = demo_graph()
    graph, steps = value_graph_frames(root)
    order = topological_order(root)
    ids = export_ids(order)
    assert [step.active for step in steps] == [ids[v] for v in reversed(order)]
    assert len(graph.nodes) == len(order)
    assert graph.rankdir == "BT"


def test_frame_labels_carry_the_gradients_filled_so_far() -> None:
    """Frame k labels the nodes reached so far with their gradients at that moment."""
    root = demo_graph()
    _, steps = value_graph_frames(root)
    ids = [export_ids(topological_order(root))[v] for v in topological_order(root)]
    first = steps[0].labels
    assert sorted(first) == sorted(ids[8:10])
    assert first[ids[9]].endswith("grad: 1")
    assert first[ids[8]].endswith("grad: 0.5")
    assert steps[-1].labels[ids[0]].endswith("grad: -1.5")


def test_nodes_not_reached_yet_show_no_gradient_in_a_frame() -> None:
    """In the first frame, a leaf the pass has not reached shows grad 0, not its final grad.

    The viewer shows a node missing from a frame with its graph label, so that
    label must be the state before the backward pass.
    """
    root = demo_graph()
    graph, steps = value_graph_frames(root)
    x1 = export_ids(topological_order(root))[topological_order(root)[0]]
    shown = {node.id: steps[0].labels.get(node.id, node.label) for node in graph.nodes}
    assert shown[x1].endswith("grad: 0")
    assert steps[-1].labels[x1].endswith("grad: -1.5")


def test_graph_nodes_show_final_gradients_and_details() -> None:
    """Base labels and the detail panel carry op, data and the final gradient."""
    root = demo_graph()
    graph, _ = value_graph_frames(root)
    reference = demo_graph()
    backward_from(reference)
    by_id = {node.id: node for node in graph.nodes}
    ids = export_ids(topological_order(root))
    order = list(zip(topological_order(root), topological_order(reference), strict=True))
    for built, v in order:
        node = by_id[ids[built]]
        assert node.detail["data"] == v.data
        assert node.detail["grad"] == v.grad
        assert node.detail["op"] == (v._op or "leaf")
    last_edge = (ids[order[8][0]], ids[order[9][0]], "tanh")
    assert [(e.source, e.target, e.label) for e in graph.edges][-1] == last_edge


def test_large_graphs_get_no_frames_but_final_gradients() -> None:
    """Above ``max_step_nodes`` no frames are built, and the pass still completes."""
    x = Value(1.0, "x")
    y = x * 2 + 1
    _, steps = value_graph_frames(y, max_step_nodes=2)
    assert (steps, x.grad) == ([], 2.0)


def test_value_viewer_html_embeds_the_graph_and_steps() -> None:
    """The page contains every node label, edge op and step caption of the graph."""
    root = demo_graph()
    page = value_viewer_html(root, title="neuron")
    graph, steps = value_graph_frames(demo_graph())
    for node in graph.nodes:
        assert _embedded(node.label) in page
    for step in steps:
        assert _embedded(step.caption) in page
    assert "<title>neuron</title>" in page


def test_viewer_pages_make_no_network_requests() -> None:
    """Neither viewer page refers to anything a browser would fetch over the network."""
    root = demo_graph()
    pages = [value_viewer_html(root), standalone_viewer_html(value_graph_to_dot(root))]
    for page in pages:
        assert _NETWORK.search(page) is None
        assert "Content-Security-Policy" in page


def test_hostile_label_stays_inert() -> None:
    """A label that looks like markup is embedded as escaped text, never as markup."""
    page = value_viewer_html(Value(1.0, "</script><img src=x onerror=alert(1)>") * 2)
    assert "<img src=x" not in page
    assert _embedded("</script><img src=x onerror=alert(1)>") in page


def test_standalone_viewer_draws_flow_xray_dot() -> None:
    """The DOT viewer page carries the labels of a flow-xray DOT graph."""
    root = demo_graph()
    backward_from(root)
    page = standalone_viewer_html(value_graph_to_dot(root, show_grad=True), title="dot")
    assert _embedded("x1*w1 + x2*w2") in page
    assert _embedded("grad: -1.5") in page


def test_write_functions_write_the_pages(tmp_path: Path) -> None:
    """The write_* helpers store exactly what the *_html functions return."""
    root = demo_graph()
    dot = value_graph_to_dot(root)
    write_standalone_viewer_html(tmp_path / "dot.html", dot, title="t")
    write_value_viewer_html(tmp_path / "value.html", root, title="t")
    assert (tmp_path / "dot.html").read_text(encoding="utf-8") == standalone_viewer_html(
        dot, title="t"
    )
    assert (tmp_path / "value.html").read_text(encoding="utf-8") == value_viewer_html(
        root, title="t"
    )


def test_model_nodes_lead_their_labels_with_layer_and_neuron() -> None:
    """The viewer folds boxes by the first line of their labels (``L<k>.N<j>.<part>``): an
    MLP's every model node leads its graph label and each frame label with that name, and
    the page carries the labels whole."""
    model = MLP(3, [4, 4, 1], seed=0)
    out = model([2.0, 3.0, -1.0])
    assert isinstance(out, Value)
    graph, steps = value_graph_frames(out)
    names = {node.id: node.label.split("\n")[0] for node in graph.nodes}
    model_names = {nid: name for nid, name in names.items() if not name.startswith("x")}
    assert all(re.fullmatch(r"L[123]\.N[0-3]\.\S+", name) for name in model_names.values())
    assert len({name.rsplit(".", 1)[0] for name in model_names.values()}) == 9  # neurons
    for step in steps:
        assert all(label.split("\n")[0] == names[nid] for nid, label in step.labels.items())
    page = value_viewer_html(out)
    assert _embedded(graph.nodes[-1].label) in page
