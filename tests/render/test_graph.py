"""The shared graph model: deterministic DOT out, DOT back in."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from flow_xray.render import Graph, GraphEdge, GraphNode, graph_to_dot, parse_dot

GOLDEN = Path(__file__).parent / "golden"

SAMPLE = Graph(
    nodes=(
        GraphNode("x", "x\ndata: 2.0", "plain"),
        GraphNode("w", 'w "weight"\ndata: -3.0', "ok"),
        GraphNode("node", "node\\path", "slow"),
        GraphNode("y", "y = x*w\nop: *", "error"),
    ),
    edges=(GraphEdge("x", "y", "*"), GraphEdge("w", "y", "*"), GraphEdge("node", "y")),
    rankdir="BT",
)


def check_golden(name: str, text: str) -> None:
    """Compare with golden/<name>; FLOW_XRAY_UPDATE_GOLDEN=1 rewrites it."""
    path = GOLDEN / name
    if os.environ.get("FLOW_XRAY_UPDATE_GOLDEN") == "1":
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8")


def test_graph_to_dot_matches_golden() -> None:
    """DOT output is exactly the golden file: colours by status, escaped labels, quoted keywords."""
    check_golden("graph.dot", graph_to_dot(SAMPLE, name="value"))


def test_graph_to_dot_is_deterministic() -> None:
    """The same graph always gives the same text."""
    assert graph_to_dot(SAMPLE) == graph_to_dot(Graph(SAMPLE.nodes, SAMPLE.edges, "BT"))


def test_parse_dot_round_trips_graph_to_dot() -> None:
    """``parse_dot(graph_to_dot(g)) == g`` for graphs without detail."""
    assert parse_dot(graph_to_dot(SAMPLE)) == SAMPLE


def test_parse_dot_reads_a_plain_digraph() -> None:
    """A bare ``a -> b -> c`` chain gives three plain nodes labelled by id and two edges."""
    graph = parse_dot("digraph {\n  a -> b -> c // comment\n  rankdir=LR\n}")
    assert graph == Graph(
        nodes=(GraphNode("a", "a"), GraphNode("b", "b"), GraphNode("c", "c")),
        edges=(GraphEdge("a", "b"), GraphEdge("b", "c")),
        rankdir="LR",
    )


def test_parse_dot_renames_unsafe_ids() -> None:
    """Quoted or numeric ids become ``n1``, ``n2``... and keep their text as the label."""
    graph = parse_dot('digraph G { "two words" -> 1; }')
    assert graph is not None
    assert [(n.id, n.label) for n in graph.nodes] == [("n1", "two words"), ("n2", "1")]
    assert graph.edges == (GraphEdge("n1", "n2"),)


@pytest.mark.parametrize(
    "text",
    [
        "graph { a -- b }",
        "digraph { subgraph cluster_0 { a } }",
        "digraph { a:port -> b }",
        "digraph { a [label=<b>bold</b>] }",
        "digraph { a -> }",
        "not dot at all",
        "",
    ],
)
def test_parse_dot_returns_none_when_not_understood(text: str) -> None:
    """Undirected graphs, subgraphs, ports, HTML labels and garbage give None."""
    assert parse_dot(text) is None


def test_graphviz_accepts_the_dot() -> None:
    """Graphviz ``dot -Tsvg`` reads the DOT we write without a warning."""
    dot = shutil.which("dot")
    if dot is None:
        pytest.skip("graphviz 'dot' is not installed")
    done = subprocess.run(
        [dot, "-Tsvg"], input=graph_to_dot(SAMPLE), capture_output=True, text=True, check=False
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert "<svg" in done.stdout
