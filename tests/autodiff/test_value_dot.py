"""DOT export: the fixed format (golden files), escaping and determinism."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn

import pytest

from flow_xray.autodiff import (
    Value,
    backward_from,
    demo_graph,
    ir_to_json,
    value_graph_to_dot,
    write_dot,
)

HERE = Path(__file__).parent


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


@pytest.mark.parametrize("name", ["demo", "ops"])
def test_forward_dot_matches_golden(
    name: str, ops_graph: Callable[[], Value], golden_dir: Path, fresh_ids: None
) -> None:
    """The forward DOT of the demo and all-ops graphs, built after 0.2.0's counter reset, is
    byte-for-byte the golden file (node ids ``v<k>``)."""
    root = demo_graph() if name == "demo" else ops_graph()
    assert value_graph_to_dot(root) == _read(golden_dir / f"{name}_forward.dot")


@pytest.mark.parametrize("name", ["demo", "ops"])
def test_backward_dot_matches_golden(
    name: str, ops_graph: Callable[[], Value], golden_dir: Path, fresh_ids: None
) -> None:
    """After backward, the DOT with gradients is byte-for-byte the golden file."""
    root = demo_graph() if name == "demo" else ops_graph()
    backward_from(root)
    assert value_graph_to_dot(root, show_grad=True) == _read(golden_dir / f"{name}_backward.dot")


def test_dot_structure() -> None:
    """Header, box nodes with name/op/data rows, and operand -> result edges labelled by op;
    node ids are ``Value.node_id`` (an unlabelled node is named by it), as in 0.2.0."""
    a = Value(2.0, "a")
    y = a * 3
    y.label = "y"
    three = y._prev[1].node_id
    assert value_graph_to_dot(y).splitlines() == [
        "digraph G {",
        '  rankdir="BT";',
        '  node [shape=box, fontname="Helvetica"];',
        '  edge [fontname="Helvetica", fontsize=10];',
        f'  {a.node_id} [label="a\\nop: leaf\\ndata: 2"];',
        f'  {three} [label="{three}\\nop: leaf\\ndata: 3"];',
        f'  {y.node_id} [label="y\\nop: *\\ndata: 6"];',
        f'  {a.node_id} -> {y.node_id} [label="*"];',
        f'  {three} -> {y.node_id} [label="*"];',
        "}",
    ]


def test_position_ids_are_an_explicit_option() -> None:
    """``ids="position"`` names nodes ``n<k>`` by topological position instead."""
    a = Value(2.0, "a")
    y = a * 3
    y.label = "y"
    assert value_graph_to_dot(y, ids="position").splitlines()[4:9] == [
        '  n0 [label="a\\nop: leaf\\ndata: 2"];',
        '  n1 [label="n1\\nop: leaf\\ndata: 3"];',
        '  n2 [label="y\\nop: *\\ndata: 6"];',
        '  n0 -> n2 [label="*"];',
        '  n1 -> n2 [label="*"];',
    ]


def test_an_unknown_id_scheme_is_an_error() -> None:
    """``ids=`` takes "node_id" or "position"; anything else is a ValueError naming both."""
    with pytest.raises(ValueError, match="'node_id' or 'position'"):
        value_graph_to_dot(Value(1.0), ids="label")  # type: ignore[arg-type]


def test_show_grad_adds_a_grad_row() -> None:
    """``show_grad=True`` adds ``grad: G`` to each box, and only then."""
    a = Value(2.0, "a")
    y = a * a
    y.backward()
    assert 'label="a\\nop: leaf\\ndata: 2\\ngrad: 4"' in value_graph_to_dot(y, show_grad=True)
    assert "grad:" not in value_graph_to_dot(y)


@pytest.mark.parametrize(
    ("label", "escaped"),
    [
        ('say "hi"', 'say \\"hi\\"'),
        ("back\\slash", "back\\\\slash"),
        ("two\nlines", "two\\nlines"),
        ("cr\r\nlf", "cr\\nlf"),
        ("bell\x07tab\t", "bell tab "),
        ('"];\n  evil -> node [label="', '\\"];\\n  evil -> node [label=\\"'),
    ],
)
def test_labels_are_escaped(label: str, escaped: str) -> None:
    """Quotes, backslashes, line breaks and control characters cannot break out of a label."""
    node = Value(1.0, label)
    dot = value_graph_to_dot(node)
    assert f'  {node.node_id} [label="{escaped}\\nop: leaf\\ndata: 1"];' in dot.splitlines()


def test_graphviz_accepts_escaped_labels(
    ops_graph: Callable[[], Value], tmp_path: Path, e2e_missing: Callable[[str], NoReturn]
) -> None:
    """Graphviz ``dot`` parses the export of a graph with hostile labels."""
    if shutil.which("dot") is None:
        e2e_missing("graphviz `dot` not found")
    path = tmp_path / "g.dot"
    write_dot(path, value_graph_to_dot(ops_graph(), show_grad=True))
    done = subprocess.run(
        ["dot", "-Tsvg", str(path)], capture_output=True, text=True, check=False, timeout=60
    )
    assert (done.returncode, done.stderr) == (0, "")


def test_write_dot_writes_the_text(tmp_path: Path) -> None:
    """``write_dot`` writes exactly the given text as UTF-8."""
    dot = value_graph_to_dot(Value(1.0, "ünïcode"))
    path = tmp_path / "out.dot"
    write_dot(path, dot)
    assert path.read_bytes() == dot.encode("utf-8")


def test_two_builds_give_identical_dot(
    ops_graph: Callable[[], Value], built_fresh: Callable[[Callable[[], Value]], Value]
) -> None:
    """Building the same expression twice in one process, each after 0.2.0's counter reset,
    gives the same DOT."""
    first, second = built_fresh(ops_graph), built_fresh(ops_graph)
    assert value_graph_to_dot(first) == value_graph_to_dot(second)
    backward_from(first)
    backward_from(second)
    assert value_graph_to_dot(first, show_grad=True) == value_graph_to_dot(second, show_grad=True)


def test_export_does_not_depend_on_other_graphs_in_the_process(
    ops_graph: Callable[[], Value],
) -> None:
    """With ``ids="position"``, Values created in between (other graphs) do not change a
    graph's ids."""
    before = value_graph_to_dot(ops_graph(), ids="position")
    for _ in range(100):
        Value(1.0) * 2
    assert value_graph_to_dot(ops_graph(), ids="position") == before


_CHILD = """
import sys
sys.path.insert(0, sys.argv[1])
from conftest import _ops_graph
from flow_xray.autodiff import backward_from, ir_to_json, value_graph_to_dot
root = _ops_graph()
backward_from(root)
sys.stdout.write(value_graph_to_dot(root, show_grad=True) + ir_to_json(root))
"""


def test_dot_and_ir_are_identical_across_processes(
    ops_graph: Callable[[], Value], fresh_ids: None
) -> None:
    """Two fresh interpreters with different hash seeds write the same DOT and IR as this one
    after 0.2.0's counter reset."""
    root = ops_graph()
    backward_from(root)
    expected = value_graph_to_dot(root, show_grad=True) + ir_to_json(root)
    outputs = []
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run(
            [sys.executable, "-c", _CHILD, str(HERE)],
            capture_output=True,
            text=True,
            env=env,
            check=True,
            timeout=120,
        )
        outputs.append(done.stdout)
    assert outputs == [expected, expected]
