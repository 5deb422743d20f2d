"""The graph model shared by the trace viewer and the autodiff viewer, and its DOT form.

A `Graph` is plain, immutable data: boxes (`GraphNode`) joined by arrows
(`GraphEdge`). `graph_to_dot` writes it as deterministic Graphviz DOT text and
`parse_dot` reads that text back, as well as plain ``a -> b;`` digraphs. The
``detail`` mapping of a node is for the HTML detail panel only and is not
written to DOT, so ``parse_dot(graph_to_dot(g)) == g`` holds for graphs whose
nodes carry no detail.

Example::

    g = Graph(nodes=(GraphNode("a", "load"), GraphNode("b", "fit", "slow")),
              edges=(GraphEdge("a", "b"),))
    print(graph_to_dot(g))
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

from flow_xray.render._dotlex import DotSyntaxError, parse_statements

STATUSES = ("ok", "slow", "error", "plain")
RANKDIRS = ("TB", "BT", "LR")

# fill, border: the same palette as the HTML viewer's light scheme.
_COLOURS: dict[str, tuple[str, str]] = {
    "ok": ("#ecfdf3", "#16a34a"),
    "slow": ("#fff7e6", "#d97706"),
    "error": ("#fef2f2", "#dc2626"),
    "plain": ("#f1f5f9", "#64748b"),
}
_CONTROL = re.compile(r"[\x00-\x1f]")
_SAFE_ID = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
# Words Graphviz reserves; they cannot be bare node ids.
_KEYWORDS = frozenset({"node", "edge", "graph", "digraph", "subgraph", "strict"})


@dataclass(frozen=True, slots=True)
class GraphNode:
    """One box: a DOT-safe ``id``, a ``label`` (one line per ``\\n``), a status colour, detail."""

    id: str
    label: str
    status: str = "plain"
    detail: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class GraphEdge:
    """An arrow from node ``source`` to node ``target``, optionally labelled."""

    source: str
    target: str
    label: str = ""


@dataclass(frozen=True, slots=True)
class Graph:
    """Nodes and edges in a fixed order; ``rankdir`` is ``"TB"``, ``"BT"`` or ``"LR"``."""

    nodes: tuple[GraphNode, ...]
    edges: tuple[GraphEdge, ...]
    rankdir: str = "TB"


@dataclass(frozen=True, slots=True)
class Step:
    """One frame of a stepping view: the node to highlight, a caption, per-node labels."""

    active: str
    caption: str
    labels: Mapping[str, str] = field(default_factory=dict)


def dot_id(name: str) -> str:
    """Return ``name`` as a DOT identifier: bare when safe, otherwise a quoted string."""
    if _SAFE_ID.match(name) and name.lower() not in _KEYWORDS:
        return name
    return dot_string(name)


def dot_string(text: str) -> str:
    """Return ``text`` as a quoted DOT string: the one DOT escaper of the package.

    Backslashes and quotes are escaped, line breaks become Graphviz's ``\\n``
    and other control characters spaces, so no text can end the string early.
    """
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    escaped = escaped.replace("\r\n", "\n").replace("\r", "\n").replace("\n", "\\n")
    return f'"{_CONTROL.sub(" ", escaped)}"'


def graph_to_dot(graph: Graph, name: str = "G") -> str:
    """Return ``graph`` as Graphviz DOT text; the same graph always gives the same text.

    Node colours follow ``status``; the status itself is kept in the ``class``
    attribute so `parse_dot` can read it back. Unknown statuses draw as plain.
    """
    rankdir = graph.rankdir if graph.rankdir in RANKDIRS else "TB"
    lines = [
        f"digraph {dot_id(name)} {{",
        f'  rankdir="{rankdir}";',
        '  node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=11];',
        '  edge [fontname="Helvetica", fontsize=9, color="#94a3b8"];',
    ]
    for node in graph.nodes:
        status = node.status if node.status in STATUSES else "plain"
        fill, border = _COLOURS[status]
        attrs = [f"label={dot_string(node.label)}"]
        if status != "plain":
            attrs.append(f'class="{status}"')
        attrs += [f'fillcolor="{fill}"', f'color="{border}"']
        lines.append(f"  {dot_id(node.id)} [{', '.join(attrs)}];")
    for edge in graph.edges:
        label = f" [label={dot_string(edge.label)}]" if edge.label else ""
        lines.append(f"  {dot_id(edge.source)} -> {dot_id(edge.target)}{label};")
    lines.append("}")
    return "\n".join(lines) + "\n"


def parse_dot(text: str) -> Graph | None:
    """Read a digraph written by `graph_to_dot`, or a plain ``a -> b;`` digraph.

    Understood: ``digraph``, node statements with attributes (``label``,
    ``class``), edge chains (``a -> b -> c``) with an optional ``label``,
    ``rankdir`` and ``graph``/``node``/``edge`` defaults (ignored). Node ids
    that are not DOT-safe are renamed ``n1``, ``n2``, ... and keep their name
    as label. Returns None for anything else (undirected graphs, subgraphs,
    ports, HTML labels, syntax errors).
    """
    try:
        statements, rankdir = parse_statements(text)
    except DotSyntaxError:
        return None
    ids: dict[str, str] = {}
    attrs: dict[str, dict[str, str]] = {}
    edges: list[GraphEdge] = []
    for kind, names, stmt_attrs in statements:
        for raw in names:
            if raw not in ids:
                ids[raw] = raw
                attrs[raw] = {}
        if kind == "node":
            attrs[names[0]].update(stmt_attrs)
        else:
            label = stmt_attrs.get("label", "")
            edges += [GraphEdge(a, b, label) for a, b in pairwise(names)]
    _rename_unsafe(ids)
    nodes = tuple(
        GraphNode(
            ids[raw],
            attrs[raw].get("label", raw),
            _status(attrs[raw].get("class", "plain")),
        )
        for raw in ids
    )
    renamed = tuple(GraphEdge(ids[e.source], ids[e.target], e.label) for e in edges)
    direction = {"RL": "LR"}.get(rankdir.upper(), rankdir.upper())
    return Graph(nodes, renamed, direction if direction in RANKDIRS else "TB")


def _status(value: str) -> str:
    return value if value in STATUSES else "plain"


def _rename_unsafe(ids: dict[str, str]) -> None:
    """Give every id that is not DOT-safe a fresh ``nK`` name that no other node uses."""
    taken = {raw for raw in ids if _SAFE_ID.match(raw)}
    counter = 0
    for raw in ids:
        if raw in taken:
            continue
        counter += 1
        while f"n{counter}" in taken:
            counter += 1
        ids[raw] = f"n{counter}"
        taken.add(ids[raw])
