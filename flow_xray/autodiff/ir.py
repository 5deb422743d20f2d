"""The JSON intermediate representation (IR) of a `Value` graph, version 1.

Shape::

    {"version": 1, "root_id": "v4",
     "nodes": [{"id": "v0", "op": "", "label": "a", "data": 2.0, "grad": -3.0,
                "parents": []}, ...]}

Ids are each node's ``Value.node_id``, as 0.2.0 wrote them (``ids="position"``:
``n<k>`` by topological position; see `export_ids`); ``root_id`` and
``parents`` use the same ids.

``nodes`` is in topological order (operands first, the root last); ``op`` is
the raw operation (``""`` for an input, ``"**2"`` for a power); ``parents``
lists operand ids in operand order (repeated when an operand is used twice);
``grad`` is present when exported with gradients. Floats are written exactly
(``repr``), non-finite ones as JSON's usual ``NaN`` / ``Infinity`` extension.
`graph_from_ir` replays an IR into live Values, so a stored IR can be compared
with, or differentiated again as, a freshly built graph.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping
from typing import Any

from flow_xray.autodiff.value import IdScheme, Value, export_ids, topological_order
from flow_xray.errors import GraphError

IR_VERSION = 1
_ID = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")

_UNARY: dict[str, Callable[[Value], Value]] = {
    "neg": Value.__neg__,
    "ReLU": Value.relu,
    "tanh": Value.tanh,
    "exp": Value.exp,
    "log": Value.log,
    "sigmoid": Value.sigmoid,
}
_BINARY: dict[str, Callable[[Value, Value], Value]] = {
    "+": Value.__add__,
    "-": Value.__sub__,
    "*": Value.__mul__,
    "/": Value.__truediv__,
}


def graph_to_ir(
    root: Value, *, include_grad: bool = True, ids: IdScheme = "node_id"
) -> dict[str, Any]:
    """The IR dict of ``root``'s graph (shape in the module docstring), gradients as they are now.

    Args:
        root: the output node.
        include_grad: write each node's ``grad``.
        ids: ``"node_id"`` (``Value.node_id``, as 0.2.0) or ``"position"`` (``n<k>``).
    """
    order = topological_order(root)
    names = export_ids(order, ids)
    nodes: list[dict[str, Any]] = []
    for node in order:
        entry: dict[str, Any] = {
            "id": names[node],
            "op": node._op,
            "label": node.label,
            "data": node.data,
        }
        if include_grad:
            entry["grad"] = node.grad
        entry["parents"] = [names[operand] for operand in node._prev]
        nodes.append(entry)
    return {"version": IR_VERSION, "root_id": names[root], "nodes": nodes}


def ir_to_json(
    root: Value,
    *,
    include_grad: bool = True,
    indent: int | None = 2,
    ids: IdScheme = "node_id",
) -> str:
    """The IR of ``root``'s graph as JSON text (``indent=None``: one line)."""
    return json.dumps(graph_to_ir(root, include_grad=include_grad, ids=ids), indent=indent)


def ir_from_json(text: str | bytes) -> dict[str, Any]:
    """Parse and validate IR JSON text; the inverse of `ir_to_json`.

    Returns:
        The IR dict, numbers as floats.

    Raises:
        GraphError: the text is not JSON, or not a version-1 IR (the message says
            which node and field is wrong).
    """
    try:
        payload = json.loads(text)
    except (ValueError, UnicodeDecodeError) as exc:
        raise GraphError(f"IR is not valid JSON: {exc}") from None
    return validate_ir(payload)


def validate_ir(payload: object) -> dict[str, Any]:
    """Check that ``payload`` is a version-1 IR dict and return a normalized copy.

    Raises:
        GraphError: what is wrong, and where.
    """
    if not isinstance(payload, Mapping):
        raise GraphError(f"IR must be a JSON object, got {type(payload).__name__}")
    if payload.get("version") != IR_VERSION:
        raise GraphError(f"IR version must be {IR_VERSION}, got {payload.get('version')!r}")
    raw_nodes = payload.get("nodes")
    if not isinstance(raw_nodes, list) or not raw_nodes:
        raise GraphError("IR 'nodes' must be a non-empty list")
    seen: set[str] = set()
    nodes = [_validate_node(index, raw, seen) for index, raw in enumerate(raw_nodes)]
    root_id = payload.get("root_id")
    if root_id != nodes[-1]["id"]:
        raise GraphError(f"IR 'root_id' {root_id!r} must be the id of the last node")
    return {"version": IR_VERSION, "root_id": root_id, "nodes": nodes}


def _validate_node(index: int, raw: object, seen: set[str]) -> dict[str, Any]:
    """One checked node entry; ``seen`` holds the ids of the nodes before it."""
    where = f"IR node {index}"
    if not isinstance(raw, Mapping):
        raise GraphError(f"{where} must be an object")
    node_id = raw.get("id")
    if not isinstance(node_id, str) or not _ID.match(node_id):
        raise GraphError(f"{where}: 'id' must be an identifier string, got {node_id!r}")
    if node_id in seen:
        raise GraphError(f"{where}: duplicate id {node_id!r}")
    for key in ("op", "label"):
        if not isinstance(raw.get(key), str):
            raise GraphError(f"{where} ({node_id}): {key!r} must be a string")
    entry: dict[str, Any] = {"id": node_id, "op": raw["op"], "label": raw["label"]}
    entry["data"] = _number(raw.get("data"), f"{where} ({node_id}): 'data'")
    if "grad" in raw:
        entry["grad"] = _number(raw["grad"], f"{where} ({node_id}): 'grad'")
    parents = raw.get("parents")
    if not isinstance(parents, list):
        raise GraphError(f"{where} ({node_id}): 'parents' must be a list")
    for parent in parents:
        if parent not in seen:
            raise GraphError(
                f"{where} ({node_id}): parent {parent!r} is not an earlier node "
                "(nodes must be in topological order)"
            )
    _check_arity(entry["op"], len(parents), f"{where} ({node_id})")
    entry["parents"] = list(parents)
    seen.add(node_id)
    return entry


def _number(value: object, where: str) -> float:
    """A JSON number as a float; booleans and strings are rejected."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise GraphError(f"{where} must be a number, got {value!r}")
    return float(value)


def _check_arity(op: str, count: int, where: str) -> None:
    """Raise `GraphError` unless ``op`` is known and takes ``count`` operands."""
    if op == "":
        expected = 0
    elif op in _UNARY or op.startswith("**"):
        expected = 1
        if op.startswith("**"):
            _exponent(op, where)
    elif op in _BINARY:
        expected = 2
    else:
        raise GraphError(f"{where}: unknown op {op!r}")
    if count != expected:
        raise GraphError(f"{where}: op {op or 'leaf'!r} takes {expected} parents, got {count}")


def _exponent(op: str, where: str) -> float:
    """The exponent of a ``**k`` op, as the int or float it was written from."""
    text = op[2:]
    try:
        return int(text)
    except ValueError:
        pass
    try:
        k = float(text)
    except ValueError:
        raise GraphError(f"{where}: bad exponent in op {op!r}") from None
    if not math.isfinite(k):
        raise GraphError(f"{where}: bad exponent in op {op!r}")
    return k


def graph_from_ir(ir: Mapping[str, Any]) -> Value:
    """Rebuild live Values from an IR by replaying each operation.

    Leaves take their stored ``data``; every other node is recomputed from its
    parents, so ``graph_to_ir(graph_from_ir(ir))`` equals ``ir`` exactly when the
    IR came from this engine. Stored gradients are restored when present.

    Returns:
        The root Value.

    Raises:
        GraphError: the IR is invalid, or an operation fails on the stored data.
    """
    checked = validate_ir(ir)
    built: dict[str, Value] = {}
    for entry in checked["nodes"]:
        operands = [built[parent] for parent in entry["parents"]]
        node = _replay(entry, operands)
        node.label = entry["label"]
        if "grad" in entry:
            node.grad = entry["grad"]
        built[entry["id"]] = node
    return built[checked["root_id"]]


def _replay(entry: Mapping[str, Any], operands: list[Value]) -> Value:
    """Recompute one node from its operands."""
    op: str = entry["op"]
    try:
        if op == "":
            return Value(entry["data"])
        if op in _BINARY:
            return _BINARY[op](operands[0], operands[1])
        if op in _UNARY:
            return _UNARY[op](operands[0])
        return operands[0] ** _exponent(op, entry["id"])
    except (ArithmeticError, ValueError) as exc:
        raise GraphError(f"IR node {entry['id']}: replaying {op!r} failed: {exc}") from None
