"""`TraceNode` trees from their plain form: the nested mappings ``TraceNode.to_dict()`` gives.

One walk serves both readers of that form: the flow-xray JSON file reader
(`flow_xray.formats.flow_xray_json`), which checks every node with its rules
(a `PlainCheck`), and the renderers of a trace's JSON form
(`flow_xray.render.trace_page.trace_to_html`), which draw whatever it holds
(`nodes_from_plain`). The rules of the form: keys `TraceNode` has no field for
go to ``attributes``; a node without an ``id`` gets one from its position
(``n0_2_1``), so ids stay stable across loads; a node with no ``status`` and an
``error`` (0.2.0's nodes had no status) failed. Iterative: any depth.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import fields
from typing import Any, Protocol

from flow_xray import jsontext
from flow_xray.tree.model import TraceNode, new_node


class PlainCheck(Protocol):
    """A reader's rules for the nodes it builds (raising refuses the whole tree)."""

    def node(self, item: Any, where: str) -> bool:
        """Whether ``item`` (at position ``where``) is a node to build."""

    def fields(self, values: Mapping[str, Any], where: str) -> None:
        """Check the fields a node is about to be built with."""

    def children(self, value: Any, where: str) -> Sequence[Any]:
        """The items to read as the children of the node at ``where`` (``value`` or ``[]``)."""


class _AsGiven:
    """No rules: every mapping is a node, its values taken as they are."""

    def node(self, item: Any, where: str) -> bool:
        return isinstance(item, Mapping)

    def fields(self, values: Mapping[str, Any], where: str) -> None:
        return None

    def children(self, value: Any, where: str) -> Sequence[Any]:
        return value if isinstance(value, (list, tuple)) else ()


def nodes_from_plain(items: Iterable[Any]) -> list[TraceNode]:
    """The roots of a trace's plain form (its ``nodes`` list), taken as given.

    For drawing whatever a JSON form holds: items that are not mappings are
    left out, values are not checked (a null ``name`` stays None). Example::

        roots = nodes_from_plain(json.load(fh)["nodes"])
    """
    check = _AsGiven()
    with jsontext.gc_paused():  # many nodes and no cycles (about 2x faster)
        return [
            build_plain(item, str(i), new_node, check)
            for i, item in enumerate(items)
            if check.node(item, str(i))
        ]


def build_plain(
    data: Mapping[str, Any],
    path: str,
    make: Callable[..., TraceNode],
    check: PlainCheck,
) -> TraceNode:
    """The subtree of ``data`` (at position ``path``), each node made by ``make(**fields)``.

    Nodes are read in pre-order: ``check.node`` is asked about each item as it
    is reached (``data`` has been asked already), then ``check.fields`` about the
    fields it is made with, then ``check.children`` for what to read below it.
    """
    known = _KNOWN.get(make)
    if known is None:
        owner = make if isinstance(make, type) else TraceNode
        known = _KNOWN[make] = frozenset(f.name for f in fields(owner)) - {"children"}
    root, kids = _node(data, path, known, make, check)
    stack: list[tuple[Any, TraceNode, str]] = []
    pop, push = stack.pop, stack.extend
    parent, where = root, path
    while True:
        if kids:
            push([(kids[i], parent, f"{where}_{i}") for i in range(len(kids) - 1, -1, -1)])
        if not stack:
            return root
        item, parent, where = pop()
        if check.node(item, where):
            node, kids = _node(item, where, known, make, check)
            parent.children.append(node)
            parent = node
        else:
            kids = ()


def _node(
    item: Mapping[str, Any],
    where: str,
    known: frozenset[str],
    make: Callable[..., TraceNode],
    check: PlainCheck,
) -> tuple[TraceNode, Sequence[Any]]:
    """The childless node of ``item`` (at position ``where``), and the items of its children."""
    kwargs = dict(item)
    children = kwargs.pop("children", None)
    if not known.issuperset(kwargs):
        extra = {k: kwargs.pop(k) for k in [k for k in kwargs if k not in known]}
        kwargs["attributes"] = {**extra, **(kwargs.get("attributes") or {})}
    if "id" not in kwargs:
        kwargs["id"] = f"n{where}"
    if "name" not in kwargs:
        kwargs["name"] = None  # only a reader that takes values as given lets one by
    if "status" not in kwargs and isinstance(kwargs.get("error"), str):
        kwargs["status"] = "error"  # 0.2.0's nodes had no status: an error is one
    check.fields(kwargs, where)
    kids = check.children(children or [], where)
    return make(**kwargs), kids


# The field names of each node maker seen (`TraceNode` and its subclasses).
_KNOWN: dict[Callable[..., TraceNode], frozenset[str]] = {}
