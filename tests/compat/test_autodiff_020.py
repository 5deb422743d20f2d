"""0.2.0's autodiff API, used the way 0.2.0's code and docstrings show it.

Each test is a snippet a 0.2.0 user could have written against the published
``flow_xray.value``, ``export_dot``, ``ir``, ``debugger`` and ``export_html``
modules; it must run unchanged and give the same or better results.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from flow_xray import (
    GraphDebugger,
    TwoStepDebugger,
    Value,
    backward_from,
    graph_to_ir,
    ir_to_json,
    iter_backward_steps,
    standalone_viewer_html,
    topological_order,
    value_graph_to_dot,
    write_dot,
    write_standalone_viewer_html,
    zero_grad,
)


@pytest.fixture
def restore_counter() -> Iterator[None]:
    """Tests that reset ``Value._next_seq`` leave it past every id handed out."""
    saved = Value._next_seq
    yield
    Value._next_seq = max(saved, Value._next_seq)


def demo_root() -> Value:
    """0.2.0's ``cli._demo_root``, verbatim."""
    a = Value(2.0, label="a")
    b = Value(-3.0, label="b")
    c = Value(10.0, label="c")
    L = ((a * b) + c).relu().tanh()
    L.label = "L"
    return L


def test_value_constructor_keywords_of_0_2_0() -> None:
    """``Value(data, _children=(), _op="", label="")`` with every argument by keyword."""
    x = Value(data=1.5, label="x")
    y = Value(data=3.0, _children=(x,), _op="double", label="y")
    assert (y.data, y._op, y.label, list(y._prev)) == (3.0, "double", "y", [x])


def test_micrograd_custom_op_pattern() -> None:
    """A custom op built as micrograd (and 0.2.0's own ops) do: children, op, ``_backward``."""
    x = Value(3.0, label="x")
    out = Value(x.data**2, (x,), "square")

    def _backward() -> None:
        x.grad += 2 * x.data * out.grad

    out._backward = _backward
    out.backward()
    assert x.grad == 6.0


def test_data_goes_through_float() -> None:
    """0.2.0 stored ``float(data)``: strings of numbers work, for data and operands."""
    v = Value("2.5")
    assert (v.data, (v + "1").data, (v * "2").data) == (2.5, 3.5, 5.0)


def test_relu_op_name_is_ReLU() -> None:
    """0.2.0 (like micrograd) names the relu op ``ReLU``; IR and DOT show that name."""
    y = Value(1.0).relu()
    assert y._op == "ReLU"
    assert graph_to_ir(y)["nodes"][-1]["op"] == "ReLU"
    assert "op: ReLU" in value_graph_to_dot(y)


def test_node_id_and_display_name() -> None:
    """``node_id`` is ``v<k>``; ``display_name`` is the label, else the node id."""
    a = Value(1.0)
    named = Value(1.0, label="w")
    assert a.node_id.startswith("v") and a.node_id[1:].isdigit()
    assert (a.display_name, named.display_name) == (a.node_id, "w")


def test_backward_sets_root_grad_and_accumulates() -> None:
    """``backward()`` sets the root's grad to 1 and adds upstream; ``zero_grad`` cleans first."""
    a = Value(2.0, label="a")
    y = a * a
    y.backward()
    y.backward()
    assert (y.grad, a.grad) == (1.0, 8.0)
    zero_grad(y)
    y.backward()
    assert a.grad == 4.0


def test_backward_from_keywords() -> None:
    """``backward_from(root, seed=..., zero_first=...)`` as 0.2.0 documents it."""
    a = Value(2.0)
    y = a * 3
    backward_from(y, seed=2.0)
    assert a.grad == 6.0
    backward_from(y, seed=1.0, zero_first=False)
    assert a.grad == 9.0


def test_topological_order_parents_first_root_last() -> None:
    """``topological_order``: every node once, operands before results, root last."""
    root = demo_root()
    order = topological_order(root)
    assert order[-1] is root and len(order) == len(set(order)) == 7


def test_dot_shape() -> None:
    """``value_graph_to_dot``: ``digraph G``, ``rankdir="BT"``, boxes labelled name/op/data/grad."""
    root = demo_root()
    root.backward()
    dot = value_graph_to_dot(root, show_grad=True)
    assert dot.startswith("digraph G {") and dot.rstrip().endswith("}")
    assert 'rankdir="BT";' in dot and "shape=box" in dot
    assert 'label="L\\nop: tanh\\ndata: 0.999329\\ngrad: 1"' in dot
    assert dot.count("->") == 6
    assert "grad:" not in value_graph_to_dot(root, show_grad=False)


def test_write_dot_takes_a_str_path(tmp_path: Path) -> None:
    """``write_dot(path: str, dot)`` writes the text as given."""
    dot = value_graph_to_dot(demo_root())
    path = str(tmp_path / "g.dot")
    write_dot(path, dot)
    assert Path(path).read_text(encoding="utf-8") == dot


def test_ir_schema_version_1() -> None:
    """``graph_to_ir``: version, root_id, nodes[{id, op, label, data, grad?, parents}]."""
    root = demo_root()
    ir = graph_to_ir(root)
    assert (ir["version"], ir["root_id"]) == (1, ir["nodes"][-1]["id"])
    assert set(ir["nodes"][0]) == {"id", "op", "label", "data", "grad", "parents"}
    assert "grad" not in graph_to_ir(root, include_grad=False)["nodes"][0]
    assert [n["op"] for n in ir["nodes"]][-3:] == ["+", "ReLU", "tanh"]


def test_ir_to_json_indent() -> None:
    """``ir_to_json(root, include_grad=..., indent=...)`` is the IR as JSON text."""
    root = demo_root()
    assert json.loads(ir_to_json(root)) == graph_to_ir(root)
    assert "\n" not in ir_to_json(root, include_grad=False, indent=None)


def test_two_step_debugger_usage_from_its_docstring() -> None:
    """dbg = TwoStepDebugger(y); dot1 = dbg.step_forward_dot(); y.backward(); dot2 = ..."""
    y = demo_root()
    dbg = TwoStepDebugger(y)
    dot1 = dbg.step_forward_dot()
    y.backward()
    dot2 = dbg.step_backward_dot()
    assert "grad:" not in dot1
    assert dot2 == value_graph_to_dot(y, show_grad=True)


def test_backward_views_do_not_touch_the_users_gradients() -> None:
    """0.2.0's views only export: gradients from the user's own seed survive them."""
    y = demo_root()
    backward_from(y, seed=3.0)
    grads = [v.grad for v in topological_order(y)]
    dbg = GraphDebugger(y)
    dbg.dot_backward()
    dbg.ir_backward()
    TwoStepDebugger(y).step_backward_dot()
    assert [v.grad for v in topological_order(y)] == grads
    assert dbg.ir_backward()["nodes"][-1]["grad"] == 3.0


def test_graph_debugger_views() -> None:
    """``dot_forward``/``ir_forward`` have no grads; ``dot_backward``/``ir_backward`` do."""
    dbg = GraphDebugger(demo_root())
    assert "grad:" not in dbg.dot_forward() and "grad:" in dbg.dot_backward()
    assert "grad" not in dbg.ir_forward()["nodes"][0] and "grad" in dbg.ir_backward()["nodes"][0]
    assert dbg.root is not None


def test_named_snapshots_keys_and_final_gradients(restore_counter: None) -> None:
    """Keys forward, backward_step_0..n-1, after_backward; grads left as after a backward.
    Each graph is built after ``Value._next_seq = 0``, 0.2.0's way to comparable ids."""
    Value._next_seq = 0
    root = demo_root()
    snapshots = GraphDebugger(root).named_snapshots(seed=1.0, include_step_dots=True)
    n = len(topological_order(root))
    assert list(snapshots) == [
        "forward",
        *[f"backward_step_{k}" for k in range(n)],
        "after_backward",
    ]
    Value._next_seq = 0
    reference = demo_root()
    reference.backward()
    assert snapshots["after_backward"] == value_graph_to_dot(reference, show_grad=True)
    assert list(GraphDebugger(demo_root()).named_snapshots(include_step_dots=False)) == [
        "forward",
        "after_backward",
    ]


def test_iter_backward_steps_with_seed_keyword() -> None:
    """``iter_backward_steps(root, seed=...)`` yields every node, root first, from a clean slate."""
    root = demo_root()
    root.grad = 99.0
    steps = list(iter_backward_steps(root, seed=1.0))
    assert steps[0] is root and steps == topological_order(root)[::-1]
    reference = demo_root()
    reference.backward()
    assert [v.grad for v in steps] == [v.grad for v in topological_order(reference)[::-1]]


def test_standalone_viewer_keeps_the_dot_in_the_page_and_title() -> None:
    """``standalone_viewer_html(dot, title=...)``: one offline page that carries the DOT text."""
    dot = value_graph_to_dot(demo_root())
    page = standalone_viewer_html(dot, title="my graph")
    data = page.split('id="fx-data">', 1)[1].split("</script>", 1)[0]
    assert json.loads(data)["source"] == dot
    assert "<title>my graph</title>" in page
    assert "https://" not in page and "cdn.jsdelivr" not in page


def test_write_standalone_viewer_html(tmp_path: Path) -> None:
    """``write_standalone_viewer_html(path, dot, title=...)`` writes the same page."""
    dot = "digraph { a -> b; }"
    path = tmp_path / "v.html"
    write_standalone_viewer_html(str(path), dot, title="t")
    assert path.read_text(encoding="utf-8") == standalone_viewer_html(dot, title="t")


@pytest.mark.parametrize("op", ["+", "*", "**2", "ReLU", "tanh"])
def test_every_0_2_0_op_has_its_0_2_0_name(op: str) -> None:
    """The five 0.2.0 operations keep their op strings."""
    a, b = Value(0.5), Value(2.0)
    made = {"+": a + b, "*": a * b, "**2": a**2, "ReLU": a.relu(), "tanh": a.tanh()}
    assert made[op]._op == op


def test_ir_ids_are_node_ids_as_0_2_0_wrote_them() -> None:
    """0.2.0 users look nodes up by ``node_id``: the IR's ``root_id``, ``id`` and ``parents``."""
    a = Value(2.0, label="a")
    b = Value(-3.0, label="b")
    y = a * b
    ir = graph_to_ir(y)
    assert ir["root_id"] == y.node_id
    by_id = {node["id"]: node for node in ir["nodes"]}
    assert by_id[a.node_id]["label"] == "a"
    assert by_id[y.node_id]["parents"] == [a.node_id, b.node_id]
    assert json.loads(ir_to_json(y))["root_id"] == y.node_id


def test_dot_names_nodes_by_node_id_as_0_2_0_did() -> None:
    """Each box's DOT id is its ``node_id``; an unlabelled node is named by it too; edges join
    the operands' ids to the result's."""
    a = Value(2.0, label="a")
    y = a * 3
    dot = value_graph_to_dot(y)
    three = y._prev[1].node_id
    assert f'  {a.node_id} [label="a\\nop: leaf\\ndata: 2"];' in dot.splitlines()
    assert f'  {three} [label="{three}\\nop: leaf\\ndata: 3"];' in dot.splitlines()
    assert f'  {a.node_id} -> {y.node_id} [label="*"];' in dot.splitlines()


def test_next_seq_reset_makes_exports_repeatable(restore_counter: None) -> None:
    """0.2.0's determinism: ``Value._next_seq = 0`` before building gives v0, v1, ... and the
    same DOT and IR every time."""
    exports = []
    for _ in range(2):
        Value._next_seq = 0
        root = demo_root()
        root.backward()
        exports.append((value_graph_to_dot(root, show_grad=True), ir_to_json(root)))
    assert exports[0] == exports[1]
    assert json.loads(exports[0][1])["root_id"] == root.node_id == "v6"
