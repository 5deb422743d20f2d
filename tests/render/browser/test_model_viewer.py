"""The autodiff viewer on a real model, in headless Chromium: a 3-layer MLP's loss (358 nodes).

Stepping follows the stepped node (centred at a readable scale), gradients read as
signed 4-significant-digit numbers with a colour mark, and the model folds per neuron
(the default above 150 nodes) or per layer, each folded box opening with a click.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from viewer_page import LABELS_JS, Loaded, overlapping

from flow_xray.autodiff import Value, demo_graph, topological_order, value_graph_to_dot
from flow_xray.autodiff.nn import MLP
from flow_xray.autodiff.viewer import value_viewer_html
from flow_xray.render import dot_viewer_html

pytestmark = pytest.mark.e2e
OpenPage = Callable[..., Loaded]

XS = [[2.0, 3.0, -1.0], [3.0, -1.0, 0.5], [0.5, 1.0, 1.0], [1.0, 1.0, -1.0]]
YS = [1.0, -1.0, -1.0, 1.0]
NEURONS = ["L1.N0", "L1.N1", "L1.N2", "L1.N3", "L2.N0", "L2.N1", "L2.N2", "L2.N3", "L3.N0"]
# A "grad:" row as the viewer shows it: 0, or signed with at most 4 significant digits.
SHOWN_GRAD = re.compile(r"grad: (0|[+-](?:\d+(?:\.\d+)?|\d(?:\.\d+)?e-?\d+))")


def mlp_loss() -> Value:
    """Sum of squared errors of ``MLP(3, [4, 4, 1])`` over four samples (358 nodes)."""
    model = MLP(3, [4, 4, 1], seed=0)
    total = Value(0.0, label="loss0")
    for x, y in zip(XS, YS, strict=True):
        prediction = model(x)
        assert isinstance(prediction, Value)
        total = total + (prediction - y) ** 2
    total.label = "loss"
    return total


@pytest.fixture(scope="module")
def mlp_html() -> str:
    return value_viewer_html(mlp_loss(), title="MLP(3, [4, 4, 1]) loss")


@pytest.fixture
def mlp(open_page: OpenPage, mlp_html: str) -> Loaded:
    return open_page(mlp_html, "mlp")


def drawn(loaded: Loaded) -> int:
    return int(loaded.page.locator(".fx-node").count())


def group_box(loaded: Loaded, key: str) -> Any:
    """The folded box of group ``key`` (its first line is the key)."""
    title = loaded.page.locator(".fx-l1", has_text=re.compile(rf"^{re.escape(key)}$"))
    return loaded.page.locator(".fx-node.fx-group", has=title)


def active_view(loaded: Loaded) -> dict[str, Any]:
    """Where the highlighted box is: inside the graph pane?, the drawing's scale, its lines."""
    return dict(
        loaded.page.evaluate(
            """() => {
          const pane = document.querySelector('.fx-graph').getBoundingClientRect();
          const node = document.querySelector('.fx-node.active');
          const rect = node.querySelector('rect');
          const r = rect.getBoundingClientRect();
          return {
            inside: r.left >= pane.left && r.right <= pane.right &&
                    r.top >= pane.top && r.bottom <= pane.bottom,
            scale: r.height / Number(rect.getAttribute('height')),
            lines: [...node.querySelectorAll('text')].map(t => t.textContent),
            group: node.classList.contains('fx-group'),
          };
        }"""
        )
    )


def stepped_name(loaded: Loaded) -> str:
    """The node the caption says this step runs (``step k/n: NAME (op, ...``)."""
    caption = str(loaded.page.locator(".fx-caption").text_content())
    match = re.match(r"step \d+/\d+: (\S+) \(", caption)
    assert match, caption
    return match.group(1)


def test_mlp_page_opens_folded_per_neuron(mlp: Loaded) -> None:
    """Over 150 nodes the page opens with one box per neuron: 9 neuron boxes plus the
    ungrouped inputs and loss nodes, far fewer than the 358 nodes; no errors, no requests."""
    groups = mlp.page.locator(".fx-node.fx-group .fx-l1").all_text_contents()
    assert sorted(groups) == NEURONS
    assert drawn(mlp) < 45
    pressed = mlp.page.locator(".fx-fold .fx-btn[aria-pressed='true']").text_content()
    assert pressed == "Collapse neurons"
    assert mlp.console_errors == []
    assert [u for u in mlp.requests if not u.startswith(("file://", "data:"))] == []


def test_stepping_follows_the_stepped_node(mlp: Loaded) -> None:
    """With every node drawn and the view zoomed out to the whole graph, each step centres
    its node at a readable scale: after every one of 12 steps, a slider jump and End, the
    highlighted box is the one the caption names, inside the graph pane, at scale >= 0.75."""
    page = mlp.page
    page.locator(".fx-fold .fx-btn[data-fold='none']").click()
    assert drawn(mlp) == 358
    page.keyboard.press("f")  # fit everything: far too small to read
    assert active_view(mlp)["scale"] < 0.3
    seen = []
    for _ in range(12):
        page.keyboard.press("j")
        seen.append((stepped_name(mlp), active_view(mlp)))
    page.locator(".fx-slider").fill("200")
    seen.append((stepped_name(mlp), active_view(mlp)))
    page.keyboard.press("End")
    seen.append((stepped_name(mlp), active_view(mlp)))
    for name, view in seen:
        assert view["lines"][0] == name
        assert view["inside"], (name, view)
        assert view["scale"] >= 0.75, (name, view)
    assert mlp.console_errors == []


def test_stepping_moves_the_view_only_when_needed(mlp: Loaded) -> None:
    """A step whose node is already in view at a readable scale leaves the view alone; one
    whose node is too small to read moves it; with Follow unticked nothing moves."""
    page = mlp.page
    page.locator(".fx-fold .fx-btn[data-fold='none']").click()

    def transform() -> str:
        return str(page.locator(".fx-svg > g").get_attribute("transform"))

    page.keyboard.press("j")
    before = transform()
    page.keyboard.press("k")  # back to the output, next to the node just followed
    assert transform() == before
    page.keyboard.press("f")  # everything in view, far too small to read
    zoomed_out = transform()
    page.keyboard.press("j")
    assert transform() != zoomed_out
    page.locator(".fx-follow input").uncheck()
    page.keyboard.press("f")
    frozen = transform()
    page.locator(".fx-slider").fill("100")
    page.keyboard.press("End")
    assert transform() == frozen


def test_a_folded_box_holding_the_stepped_node_is_highlighted_and_followed(mlp: Loaded) -> None:
    """Stepping never unfolds: when the stepped node is inside a folded neuron, that box is
    highlighted, names the node on its second line, and is brought into view."""
    page = mlp.page
    page.keyboard.press("f")
    page.keyboard.press("End")  # the last steps run through the first layer's parameters
    kinds = set()
    for _ in range(8):
        page.keyboard.press("k")
        name = stepped_name(mlp)
        view = active_view(mlp)
        kinds.add(view["group"])
        if name.startswith("L"):
            neuron = ".".join(name.split(".")[:2])
            assert view["group"] and view["lines"][:2] == [neuron, "\u25b6 " + name]
        else:
            assert not view["group"] and view["lines"][0] == name
        assert view["inside"] and view["scale"] >= 0.75
    assert kinds == {True, False}  # folded members and an ungrouped input (x0) both came up


def test_gradients_are_signed_four_digit_text_with_a_colour_mark(mlp: Loaded) -> None:
    """At the last step every box's grad row reads 0 or a signed number of at most 4
    significant digits; each parameter shows its final gradient to that precision, with a
    red (+) or blue (-) mark; its detail panel keeps the full-precision number."""
    page = mlp.page
    page.locator(".fx-fold .fx-btn[data-fold='none']").click()
    page.keyboard.press("End")
    rows = page.eval_on_selector_all(
        ".fx-node",
        """nodes => nodes.map(n => ({
          lines: [...n.querySelectorAll('text')].map(t => t.textContent),
          mark: n.querySelector('.fx-gmark rect').getAttribute('class')}))""",
    )
    assert len(rows) == 358
    for row in rows:
        shown_rows = [line for line in row["lines"] if line.startswith("grad: ")]
        assert len(shown_rows) == 1 and SHOWN_GRAD.fullmatch(shown_rows[0]), row
        digits = re.sub(r"e.*|[^0-9]", "", shown_rows[0]).lstrip("0")
        assert len(digits) <= 4, row
    loss = mlp_loss()
    loss.backward()
    params = {v.label: v.grad for v in topological_order(loss) if v._op == "" and "." in v.label}
    assert len(params) == 41
    by_name = {row["lines"][0]: row for row in rows}
    for name, grad in params.items():
        shown = float(by_name[name]["lines"][3].removeprefix("grad: "))
        assert shown == pytest.approx(grad, rel=6e-4, abs=1e-12), name
        if grad:
            assert ("fx-gpos" if grad > 0 else "fx-gneg") in by_name[name]["mark"], name
    name, grad = "L1.N0.w0", params["L1.N0.w0"]
    page.keyboard.press("f")  # everything in view, so any box can be clicked
    page.locator(".fx-node", has=page.locator(".fx-l1", has_text=re.compile(f"^{name}$"))).click()
    assert repr(grad) in page.locator(".fx-detail").inner_text()


def test_collapsing_and_expanding_changes_the_drawn_nodes(mlp: Loaded) -> None:
    """Collapse layers draws one box per layer; clicking a layer box opens it into its
    neurons, clicking a neuron box into its nodes; the detail's Collapse button folds it
    again; Expand all draws all 358 nodes and Collapse neurons returns to the first view."""
    page = mlp.page
    first = drawn(mlp)
    page.locator(".fx-fold .fx-btn[data-fold='layer']").click()
    layers = drawn(mlp)
    assert sorted(page.locator(".fx-node.fx-group .fx-l1").all_text_contents()) == [
        "L1",
        "L2",
        "L3",
    ]
    assert layers < first
    page.keyboard.press("f")  # everything in view, so any box can be clicked
    group_box(mlp, "L1").click()
    assert drawn(mlp) == layers - 1 + 4
    assert group_box(mlp, "L1.N0").count() == 1
    page.keyboard.press("f")
    group_box(mlp, "L1.N0").click()
    assert drawn(mlp) == layers - 1 + 3 + 32
    assert page.locator(".fx-detail-name").text_content() == "L1.N0"
    page.locator(".fx-group-toggle").click()  # "Collapse neuron"
    assert drawn(mlp) == layers - 1 + 4
    page.locator(".fx-fold .fx-btn[data-fold='none']").click()
    assert drawn(mlp) == 358
    page.locator(".fx-fold .fx-btn[data-fold='neuron']").click()
    assert drawn(mlp) == first
    assert mlp.console_errors == []


def test_a_node_detail_folds_its_neuron_and_layer(mlp: Loaded) -> None:
    """A grouped node's detail offers to collapse its neuron or its layer; either folds it."""
    page = mlp.page
    page.locator(".fx-fold .fx-btn[data-fold='none']").click()
    page.keyboard.press("f")
    title = page.locator(".fx-l1", has_text=re.compile(r"^L2\.N1\.b$"))
    page.locator(".fx-node", has=title).click()
    buttons = page.locator(".fx-group-actions .fx-btn").all_text_contents()
    assert buttons == ["Collapse neuron L2.N1", "Collapse layer L2"]
    page.locator(".fx-group-actions .fx-btn", has_text="Collapse layer L2").click()
    assert group_box(mlp, "L2").count() == 1
    assert drawn(mlp) == 358 - 164 + 1


def test_graph_without_grouped_labels_is_drawn_unfolded(open_page: OpenPage) -> None:
    """The tanh-neuron demo has no ``L<k>.N<j>.*`` names: no fold buttons, no folded boxes,
    every node drawn, and its gradients still in the readable form."""
    loaded = open_page(value_viewer_html(demo_graph()), "neuron")
    assert loaded.page.locator(".fx-fold").count() == 0
    assert loaded.page.locator(".fx-node.fx-group").count() == 0
    assert drawn(loaded) == len(topological_order(demo_graph())) == 10
    loaded.page.keyboard.press("End")
    x1 = loaded.page.locator(".fx-node", has=loaded.page.locator(".fx-l1", has_text="x1"))
    assert "grad: -1.5" in str(x1.first.text_content())
    assert loaded.console_errors == []


def test_dot_page_of_a_model_folds_too(open_page: OpenPage) -> None:
    """The DOT viewer of the model's backward DOT groups the same way (labels carry the
    names) and shows its gradients in the readable form."""
    loss = mlp_loss()
    loss.backward()
    loaded = open_page(dot_viewer_html(value_graph_to_dot(loss, show_grad=True)), "mlp-dot")
    assert loaded.page.locator(".fx-node.fx-group").count() == len(NEURONS)
    grads = loaded.page.locator(".fx-node .fx-grad").all_text_contents()
    assert grads and all(SHOWN_GRAD.fullmatch(g.removeprefix("peak ")) for g in grads), grads
    assert loaded.console_errors == []


def test_800x600_no_label_overlaps_another(browser: Any, tmp_path: Any, mlp_html: str) -> None:
    """At 800 x 600 every text on screen (header, fold buttons, stepper, boxes, edge labels,
    footer) has its own room: folded per neuron, after steps, per layer and unfolded."""
    path = tmp_path / "mlp800.html"
    path.write_text(mlp_html, encoding="utf-8")
    context = browser.new_context(viewport={"width": 800, "height": 600})
    try:
        page = context.new_page()
        page.goto(path.as_uri())
        page.wait_for_selector("body[data-ready='1']", state="attached")
        actions = ["", "j", "j", "j", "layer", "End", "none", "k"]
        for action in actions:
            if action in ("layer", "none"):
                page.locator(f".fx-fold .fx-btn[data-fold='{action}']").click()
            elif action:
                page.keyboard.press(action)
            page.wait_for_timeout(50)
            labels = page.evaluate(LABELS_JS)
            assert len(labels) > 20
            assert overlapping(labels) == [], action
        assert page.evaluate("document.documentElement.scrollWidth") <= 800
    finally:
        context.close()


def test_drawing_keeps_its_pane_size_when_the_window_resizes(mlp: Loaded) -> None:
    """The graph page sizes its drawing in pixels (so stepper text never re-lays it out);
    after the window shrinks and grows, the drawing still fills its pane exactly."""
    page = mlp.page
    sizes = """() => [document.querySelector('.fx-svg'), document.querySelector('.fx-graph')]
        .map(e => { const r = e.getBoundingClientRect(); return [r.width, r.height]; })"""
    for width, height in ((900, 640), (1400, 900)):
        page.set_viewport_size({"width": width, "height": height})
        page.wait_for_timeout(100)
        svg, pane = page.evaluate(sizes)
        assert svg == pytest.approx(pane, abs=0.5)
    assert page.locator(".fx-svg").evaluate("s => s.style.width").endswith("px")
