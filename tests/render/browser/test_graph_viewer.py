"""The graph viewer in a real browser: stepping, DOT drawing and the text fallback."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner
from viewer_page import Loaded

from flow_xray.cli import cli
from flow_xray.render import Graph, GraphEdge, GraphNode, Step, dot_viewer_html, graph_to_html

pytestmark = pytest.mark.e2e
OpenPage = Callable[..., Loaded]

GRAPH = Graph(
    nodes=(
        GraphNode("a", "a\ndata: 2.0", "plain", {"op": "", "data": 2.0}),
        GraphNode("b", "b\ndata: -3.0", "plain"),
        GraphNode("c", "c\nop: *\ndata: -6.0", "ok"),
    ),
    edges=(GraphEdge("a", "c", "*"), GraphEdge("b", "c", "*")),
    rankdir="BT",
)
STEPS = (
    Step("c", "seed the output gradient", {"c": "c\nop: *\ngrad: 1.0"}),
    Step("a", "d c / d a = b", {"a": "a\ngrad: -3.0"}),
    Step("b", "d c / d b = a", {"b": "b\ngrad: 2.0"}),
)


@pytest.fixture
def stepping(open_page: OpenPage) -> Loaded:
    return open_page(graph_to_html(GRAPH, title="backward", steps=STEPS), "steps")


def active(loaded: Loaded) -> str:
    return str(loaded.page.locator(".fx-node.active .fx-l1").text_content())


def test_graph_page_logs_no_console_errors(stepping: Loaded) -> None:
    """The graph page loads without errors and makes no request beyond its file."""
    assert stepping.console_errors == []
    assert [u for u in stepping.requests if not u.startswith(("file://", "data:"))] == []


def test_next_key_and_slider_move_the_highlight(stepping: Loaded) -> None:
    """The first frame highlights its node; j, the next button and the slider move it."""
    seen = [active(stepping)]
    stepping.page.keyboard.press("j")
    seen.append(active(stepping))
    stepping.page.locator(".fx-btn[title='Next step']").click()
    seen.append(active(stepping))
    stepping.page.locator(".fx-slider").fill("0")
    seen.append(active(stepping))
    assert seen == ["c", "a", "b", "c"]


def test_frame_labels_and_caption_are_shown(stepping: Loaded) -> None:
    """Each frame shows its caption and replaces the labels it lists (a ``grad:`` row shown in
    the viewer's signed, 4-significant-digit form: ``-3.0`` reads ``-3``)."""
    stepping.page.keyboard.press("ArrowRight")
    caption = stepping.page.locator(".fx-caption").text_content()
    label = stepping.page.locator(".fx-node.active").text_content()
    assert (caption, label) == ("d c / d a = b", "agrad: -3")


def test_clicking_a_node_shows_its_detail(stepping: Loaded) -> None:
    """Clicking a graph node shows its label and detail mapping."""
    stepping.page.locator(".fx-node", has_text="data: 2.0").click()
    detail = stepping.page.locator(".fx-detail").inner_text()
    assert "data: 2.0" in detail and "op" in detail


def test_plain_dot_draws_its_nodes(open_page: OpenPage) -> None:
    """``a -> b`` DOT is drawn as two boxes joined by one edge."""
    loaded = open_page(dot_viewer_html("digraph { a -> b; }"), "dot")
    texts = loaded.page.locator(".fx-node .fx-l1").all_text_contents()
    assert (texts, loaded.page.locator(".fx-edge").count()) == (["a", "b"], 1)


def test_garbage_dot_is_shown_as_text(open_page: OpenPage) -> None:
    """DOT the viewer cannot draw is shown verbatim, markup included, and runs nothing."""
    text = "graph { a -- b } <img src=x onerror=alert(1)>"
    loaded = open_page(dot_viewer_html(text), "garbage")
    assert loaded.page.locator(".fx-dot-text").text_content() == text
    assert loaded.page.locator(".fx-node").count() == 0
    assert loaded.dialogs == []


def test_long_label_lines_stay_inside_their_box(open_page: OpenPage) -> None:
    """A 3,000-character label is cut with an ellipsis to its box's width, not drawn across
    its neighbours; the detail panel still has it whole."""
    dot = 'digraph { a [label="%s"]; a -> b; }' % ("y" * 3000)
    loaded = open_page(dot_viewer_html(dot), "longlabel")
    overflow = loaded.page.evaluate(
        """() => [...document.querySelectorAll('.fx-node')].map(g =>
            Math.max(...[...g.querySelectorAll('text')].map(t => t.getBBox().width))
            - g.querySelector('rect').getBBox().width)"""
    )
    loaded.page.locator(".fx-node").first.click()
    assert max(overflow) < 0
    assert "y" * 3000 in loaded.page.locator(".fx-detail").inner_text()


def test_cli_backward_viewer_steps_gradients_in(open_page: OpenPage, tmp_path: Path) -> None:
    """`flow-xray dot demo backward --graph neuron --html` opens offline; stepping fills x1's grad:
    0 at the first step, -1.5 at the last (the demo neuron's known value)."""
    out = tmp_path / "demo.html"
    result = CliRunner().invoke(
        cli,
        ["dot", "demo", "backward", "--graph", "neuron", "--html", str(out)],
    )
    assert result.exit_code == 0, result.output
    loaded = open_page(out.read_text(encoding="utf-8"), "cli-backward")
    title = loaded.page.locator(".fx-l1", has_text=re.compile(r"^x1$"))
    x1 = loaded.page.locator(".fx-node", has=title)
    assert x1.count() == 1

    def x1_grad() -> str:
        text = str(x1.text_content())
        return text[text.index("grad:") :].split()[1]

    first = x1_grad()
    loaded.page.keyboard.press("End")
    last = x1_grad()
    assert (float(first), float(last)) == (0.0, pytest.approx(-1.5))
    assert loaded.console_errors == []
    assert [u for u in loaded.requests if not u.startswith(("file://", "data:"))] == []
