"""The JSON IR: golden files, round trips, replay and validation errors."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from flow_xray.autodiff import (
    Value,
    backward_from,
    demo_graph,
    graph_from_ir,
    graph_to_ir,
    ir_from_json,
    ir_to_json,
    topological_order,
)
from flow_xray.errors import GraphError


def _same_ir(actual: Any, expected: Any) -> bool:
    """Equal structure and strings; floats equal to 12 significant digits (libm may differ)."""
    if isinstance(expected, float):
        return isinstance(actual, float) and math.isclose(actual, expected, rel_tol=1e-12)
    if isinstance(expected, dict):
        return (
            isinstance(actual, dict)
            and list(actual) == list(expected)
            and all(_same_ir(actual[k], expected[k]) for k in expected)
        )
    if isinstance(expected, list):
        return (
            isinstance(actual, list)
            and len(actual) == len(expected)
            and all(_same_ir(a, e) for a, e in zip(actual, expected, strict=True))
        )
    return bool(actual == expected)


@pytest.mark.parametrize("name", ["demo", "ops"])
def test_ir_matches_golden(
    name: str, ops_graph: Callable[[], Value], golden_dir: Path, fresh_ids: None
) -> None:
    """The IR after backward, built after 0.2.0's counter reset, matches the golden file
    (ids ``v<k>``, ops, labels, parents, numbers)."""
    root = demo_graph() if name == "demo" else ops_graph()
    backward_from(root)
    golden = json.loads((golden_dir / f"{name}_backward.ir.json").read_text(encoding="utf-8"))
    assert _same_ir(graph_to_ir(root), golden)


def test_ir_shape() -> None:
    """Version 1, root id, and nodes in topological order with parents by id, the ids being
    ``Value.node_id`` as in 0.2.0 (``graph_to_ir(y)["root_id"] == y.node_id``)."""
    a = Value(2.0, "a")
    square = a * a
    y = square.tanh()
    ids = a.node_id, square.node_id, y.node_id
    assert graph_to_ir(y, include_grad=False) == {
        "version": 1,
        "root_id": y.node_id,
        "nodes": [
            {"id": ids[0], "op": "", "label": "a", "data": 2.0, "parents": []},
            {"id": ids[1], "op": "*", "label": "", "data": 4.0, "parents": [ids[0], ids[0]]},
            {"id": ids[2], "op": "tanh", "label": "", "data": math.tanh(4.0), "parents": [ids[1]]},
        ],
    }


def test_ir_position_ids_are_an_explicit_option() -> None:
    """``ids="position"`` gives ``n<k>`` ids, in ``root_id`` and ``parents`` too."""
    a = Value(2.0, "a")
    ir = graph_to_ir((a * a).tanh(), include_grad=False, ids="position")
    assert (ir["root_id"], [(n["id"], n["parents"]) for n in ir["nodes"]]) == (
        "n2",
        [("n0", []), ("n1", ["n0", "n0"]), ("n2", ["n1"])],
    )
    assert json.loads(ir_to_json(a * 2, ids="position"))["root_id"] == "n2"


def test_include_grad_adds_grad_fields() -> None:
    """``include_grad=True`` (the default) writes every node's grad."""
    a = Value(2.0, "a")
    y = a * 3
    y.backward()
    assert [node["grad"] for node in graph_to_ir(y)["nodes"]] == [3.0, 2.0, 1.0]


def test_ir_to_json_is_the_ir_as_json(ops_graph: Callable[[], Value]) -> None:
    """``ir_to_json`` is ``graph_to_ir`` dumped with the given indent."""
    root = ops_graph()
    assert json.loads(ir_to_json(root)) == graph_to_ir(root)
    assert "\n" not in ir_to_json(root, indent=None)


def test_ir_from_json_round_trips(ops_graph: Callable[[], Value]) -> None:
    """Loading the JSON text gives back the same IR dict."""
    root = ops_graph()
    backward_from(root)
    assert ir_from_json(ir_to_json(root)) == graph_to_ir(root)


def test_graph_from_ir_replays_the_graph_exactly(ops_graph: Callable[[], Value]) -> None:
    """Rebuilding Values from the IR recomputes every node to the same bits."""
    root = ops_graph()
    backward_from(root)
    ir = graph_to_ir(root)
    rebuilt = graph_from_ir(ir_from_json(ir_to_json(root)))
    # The rebuilt Values are new ones, with node ids of their own: compare by position.
    assert graph_to_ir(rebuilt, ids="position") == graph_to_ir(root, ids="position")
    assert [n["id"] for n in ir["nodes"]] == [v.node_id for v in topological_order(root)]


def test_replayed_graph_can_be_differentiated_again(ops_graph: Callable[[], Value]) -> None:
    """A graph rebuilt from a forward-only IR backpropagates to the original gradients."""
    root = ops_graph()
    forward = graph_to_ir(root, include_grad=False)
    backward_from(root)
    rebuilt = graph_from_ir(forward)
    backward_from(rebuilt)
    assert graph_to_ir(rebuilt, ids="position") == graph_to_ir(root, ids="position")


def _valid() -> dict[str, Any]:
    a = Value(2.0, "a")
    return graph_to_ir(a * 3, ids="position")


def _set(path: str, value: object) -> dict[str, Any]:
    """A valid IR with one field replaced (``path`` like ``nodes.2.op``)."""
    ir = _valid()
    target: Any = ir
    *parts, last = path.split(".")
    for part in parts:
        target = target[int(part)] if part.isdigit() else target[part]
    target[int(last) if last.isdigit() else last] = value
    return ir


@pytest.mark.parametrize(
    ("ir", "message"),
    [
        (_set("version", 2), "version"),
        (_set("root_id", "n0"), "root_id"),
        (_set("nodes", []), "non-empty"),
        (_set("nodes.2.op", "sqrt"), "unknown op"),
        (_set("nodes.2.op", "**x"), "bad exponent"),
        (_set("nodes.2.parents", ["n0"]), "takes 2 parents"),
        (_set("nodes.2.parents", ["n0", "n9"]), "earlier node"),
        (_set("nodes.1.id", "n0"), "duplicate"),
        (_set("nodes.1.id", "1 bad"), "identifier"),
        (_set("nodes.0.data", True), "number"),
        (_set("nodes.0.data", "2"), "number"),
        (_set("nodes.0.grad", None), "number"),
        (_set("nodes.0.label", 3), "'label'"),
        (_set("nodes.0", []), "object"),
    ],
    ids=lambda value: value if isinstance(value, str) else "",
)
def test_invalid_ir_is_a_graph_error(ir: dict[str, Any], message: str) -> None:
    """Each kind of broken IR raises GraphError saying what is wrong."""
    with pytest.raises(GraphError, match=message):
        ir_from_json(json.dumps(ir))


@pytest.mark.parametrize("text", ["", "{", "[1, 2]", "null", '"text"'])
def test_non_ir_json_is_a_graph_error(text: str) -> None:
    """Text that is not JSON, or not an object, raises GraphError."""
    with pytest.raises(GraphError):
        ir_from_json(text)


def test_replay_failure_is_a_graph_error() -> None:
    """An IR whose data makes an operation fail (log of -1) raises GraphError on replay."""
    ir = graph_to_ir(Value(2.0).log())
    ir["nodes"][0]["data"] = -1.0
    with pytest.raises(GraphError, match="log"):
        graph_from_ir(ir)
