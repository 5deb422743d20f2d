"""The timeline in headless Chromium: zoom, pan, ruler, minimap, flame chart, panes, 800x600."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from typing import Any

import pytest
from viewer_page import LABELS_JS, Loaded, overlapping
from viewer_traces import agent_trace

from flow_xray.render.trace_page import trace_to_html

pytestmark = pytest.mark.e2e

# The visible time window, read off the ruler the user sees: two ticks fix it.
WINDOW_JS = """(sel) => {
  const axis = [...document.querySelectorAll(sel)].find(a => a.offsetParent !== null);
  const ticks = [...axis.querySelectorAll('.fx-tick')];
  const r = axis.getBoundingClientRect();
  const pts = ticks.map(t => ({ms: parseFloat(t.dataset.ms), x: parseFloat(t.style.left)}));
  const a = pts[0], b = pts[pts.length - 1];
  const msPerPx = (b.ms - a.ms) / (b.x - a.x);
  return {v0: a.ms - a.x * msPerPx, v1: a.ms + (r.width - a.x) * msPerPx,
          labels: ticks.map(t => t.textContent), values: pts.map(p => p.ms), width: r.width};
}"""
HEAD_AXIS = ".fx-table-head .fx-axis"
FLAME_AXIS = ".fx-flame-axis"


def settle(loaded: Loaded) -> None:
    """Wait for the frame the viewer redraws in after an input."""
    loaded.page.evaluate("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")


def window(loaded: Loaded, axis: str = HEAD_AXIS) -> dict[str, Any]:
    """The time window [v0, v1] (ms) the ruler shows, its tick labels and values."""
    settle(loaded)
    return dict(loaded.page.evaluate(WINDOW_JS, axis))


def box(loaded: Loaded, selector: str) -> dict[str, float]:
    """The bounding box of the first element matching ``selector``."""
    settle(loaded)
    found = loaded.page.locator(selector).first.bounding_box()
    assert found is not None, selector
    return dict(found)


def bar_of(loaded: Loaded, name: str) -> dict[str, float]:
    """The waterfall bar of the first row named ``name``."""
    return box(loaded, f".fx-trace-row:has(.fx-name:text-is('{name}')) .fx-bar")


def wall_ms() -> float:
    """The agent trace's run length on its own clock (first start to last end)."""
    nodes, stack = [], list(agent_trace()["nodes"])
    while stack:
        node = stack.pop()
        nodes.append(node)
        stack.extend(node["children"])
    return max(n["start_ms"] + n["latency_ms"] for n in nodes) - min(n["start_ms"] for n in nodes)


@pytest.fixture
def agent(open_page: Callable[..., Loaded]) -> Loaded:
    """The agent trace's page, opened."""
    return open_page(trace_to_html(agent_trace()), "agent")


def is_round_step(step: float) -> bool:
    """1, 2 or 5 times a power of ten."""
    mantissa = step / 10 ** math.floor(math.log10(step) + 1e-9)
    return any(abs(mantissa - m) < 1e-6 for m in (1, 2, 5))


def test_ruler_ticks_are_round_and_evenly_spaced(agent: Loaded) -> None:
    """At every zoom the ruler's ticks are multiples of one 1/2/5 x 10^k ms step, labelled so."""
    for _ in range(4):
        w = window(agent)
        values = w["values"]
        assert len(values) >= 2, w
        steps = {round(b - a, 9) for a, b in itertools.pairwise(values)}
        assert len(steps) == 1, w
        step = steps.pop()
        assert is_round_step(step), w
        assert all(abs(v / step - round(v / step)) < 1e-6 for v in values), w
        assert all(label.split()[-1] in ("s", "ms", "\u00b5s") for label in w["labels"]), w
        agent.page.keyboard.press("+")
        agent.page.keyboard.press("+")
        agent.page.keyboard.press("+")


def test_ctrl_wheel_zooms_around_the_pointer(agent: Loaded) -> None:
    """Ctrl + wheel (a pinch) over the bars narrows the window, keeps the time under the
    pointer where it was, and widens the bars; a plain wheel over the rows does not zoom."""
    page = agent.page
    before = window(agent)
    assert before["v0"] == pytest.approx(0, abs=1) and before["v1"] == pytest.approx(
        wall_ms(), rel=0.02
    )
    bar = bar_of(agent, "get_weather")
    x, y = bar["x"] + bar["width"] / 2, bar["y"] + bar["height"] / 2
    page.mouse.move(x, y)
    page.mouse.wheel(0, 200)  # plain wheel: scrolls rows, the window stays
    page.wait_for_timeout(100)
    assert window(agent)["v0"] == pytest.approx(before["v0"], abs=0.5)
    axis = box(agent, HEAD_AXIS)
    at = before["v0"] + (x - axis["x"]) / axis["width"] * (before["v1"] - before["v0"])
    page.keyboard.down("Control")
    page.mouse.wheel(0, -60)
    page.keyboard.up("Control")
    page.wait_for_timeout(100)
    after = window(agent)
    assert after["v1"] - after["v0"] < 0.7 * (before["v1"] - before["v0"])
    still = after["v0"] + (x - axis["x"]) / axis["width"] * (after["v1"] - after["v0"])
    assert still == pytest.approx(at, rel=0.03)
    assert bar_of(agent, "get_weather")["width"] > 1.3 * bar["width"]


def test_plain_wheel_over_the_ruler_zooms(agent: Loaded) -> None:
    """Over the time axis a plain wheel zooms in (up) and back out (down)."""
    axis = box(agent, HEAD_AXIS)
    agent.page.mouse.move(axis["x"] + axis["width"] * 0.3, axis["y"] + axis["height"] / 2)
    agent.page.mouse.wheel(0, -300)
    agent.page.wait_for_timeout(100)
    zoomed = window(agent)
    assert zoomed["v1"] - zoomed["v0"] < 0.6 * wall_ms()
    agent.page.mouse.wheel(0, 2000)
    agent.page.wait_for_timeout(100)
    assert window(agent)["v1"] - window(agent)["v0"] == pytest.approx(wall_ms(), rel=0.02)


def test_drag_pans_without_selecting(agent: Loaded) -> None:
    """Dragging the bars left moves the window later in time; the drag is not a row click."""
    page = agent.page
    for _ in range(3):
        page.keyboard.press("+")
    before = window(agent)
    selected = agent.selected_name()
    axis = box(agent, HEAD_AXIS)
    row = box(agent, ".fx-trace-row:has(.fx-name:text-is('plan'))")
    y = row["y"] + row["height"] / 2
    page.mouse.move(axis["x"] + 200, y)
    page.mouse.down()
    page.mouse.move(axis["x"] + 150, y, steps=4)
    page.mouse.move(axis["x"] + 100, y, steps=4)
    page.mouse.up()
    page.wait_for_timeout(100)
    after = window(agent)
    moved = (after["v0"] - before["v0"]) / (before["v1"] - before["v0"]) * axis["width"]
    assert moved == pytest.approx(100, abs=4)
    assert after["v1"] - after["v0"] == pytest.approx(before["v1"] - before["v0"], rel=1e-4)
    assert agent.selected_name() == selected


def test_minimap_shows_the_window_and_drags_it(agent: Loaded) -> None:
    """The minimap's window covers the visible share of the run, and dragging it pans."""
    page = agent.page
    lens, whole = box(agent, ".fx-minimap-window"), box(agent, ".fx-minimap")
    assert lens["width"] == pytest.approx(whole["width"], abs=2)
    for _ in range(3):
        page.keyboard.press("+")
    page.keyboard.press("Shift+ArrowRight")
    page.wait_for_timeout(100)
    w = window(agent)
    lens, whole = box(agent, ".fx-minimap-window"), box(agent, ".fx-minimap")
    assert (lens["x"] - whole["x"]) / whole["width"] == pytest.approx(w["v0"] / wall_ms(), abs=0.01)
    assert lens["width"] / whole["width"] == pytest.approx(
        (w["v1"] - w["v0"]) / wall_ms(), abs=0.01
    )
    cx, cy = lens["x"] + lens["width"] / 2, lens["y"] + lens["height"] / 2
    page.mouse.move(cx, cy)
    page.mouse.down()
    page.mouse.move(cx - 40, cy, steps=5)
    page.mouse.up()
    page.wait_for_timeout(100)
    panned = window(agent)
    assert panned["v0"] == pytest.approx(w["v0"] - 40 / whole["width"] * wall_ms(), rel=0.05)


def test_keys_zoom_pan_and_reset_without_moving_the_selection(agent: Loaded) -> None:
    """+ and - zoom, Shift + arrows pan, 0 shows the whole run again; the tree selection stays."""
    page = agent.page
    selected = agent.selected_name()
    full = window(agent)["v1"]
    page.keyboard.press("+")
    page.keyboard.press("+")
    zoomed = window(agent)
    assert zoomed["v1"] - zoomed["v0"] == pytest.approx(full / 1.6**2, rel=0.02)
    page.keyboard.press("Shift+ArrowRight")
    panned = window(agent)
    assert panned["v0"] - zoomed["v0"] == pytest.approx((zoomed["v1"] - zoomed["v0"]) / 5, rel=0.02)
    page.keyboard.press("-")
    assert window(agent)["v1"] - window(agent)["v0"] == pytest.approx(full / 1.6, rel=0.02)
    assert agent.selected_name() == selected
    page.keyboard.press("0")
    assert window(agent)["v1"] == pytest.approx(full, rel=1e-3)
    assert "whole run" in str(page.locator(".fx-window-label").text_content())


def test_z_zooms_to_the_selected_call(agent: Loaded) -> None:
    """``z`` fits the window to the selected call (get_weather: 298 ms + 2.00 s)."""
    agent.page.keyboard.press("z")
    w = window(agent)
    assert w["v0"] == pytest.approx(298 - 100, abs=15)
    assert w["v1"] == pytest.approx(2298 + 100, abs=15)


def test_flame_chart_click_selects_the_call_everywhere(agent: Loaded) -> None:
    """The flame chart draws every call by depth; clicking one selects it in the detail panel,
    the graph and, back in the waterfall, the tree."""
    page = agent.page
    page.click("button[data-mode=flame]")
    page.wait_for_selector(".fx-flame-box", state="attached")  # drawn on the next frame
    settle(agent)
    boxes = page.locator(".fx-flame-box:not(.fx-flame-dense)")
    assert boxes.count() == 9
    depth = {
        str(b.text_content()): round((b.bounding_box() or {"y": 0})["y"])
        for b in boxes.all()
        if b.text_content()
    }
    assert depth["retrieve"] > depth["gather_context"] > depth["travel_agent"]
    # The three retrievers run at once: each gets a row of its own under gather_context.
    rows = {
        round((b.bounding_box() or {"y": 0})["y"])
        for b in page.locator(".fx-flame-box", has_text="retrieve").all()
    }
    assert len(rows) == 3
    page.locator(".fx-flame-box", has_text="gather_context").click()
    assert agent.selected_name() == "gather_context"
    settle(agent)
    assert page.locator(".fx-flame-box.selected").text_content() == "gather_context"
    assert "gather_context" in str(page.locator(".fx-node.selected").text_content())
    page.keyboard.press("j")  # moving in the tree moves the flame's selection too
    assert agent.selected_name() == "retrieve"
    settle(agent)
    assert page.locator(".fx-flame-box.selected").text_content() == "retrieve"
    # The flame chart shares the window: zooming in widens its boxes.
    before = box(agent, ".fx-flame-box.selected")["width"]
    page.keyboard.press("z")
    assert box(agent, ".fx-flame-box.selected")["width"] > 3 * before
    page.click("button[data-mode=waterfall]")
    assert page.locator(".fx-trace-row.selected .fx-name").text_content() == "retrieve"


def test_view_mode_and_panes_persist_across_reload(agent: Loaded) -> None:
    """Dragging the splitters resizes the detail and graph panes, the footer buttons hide
    panes, and all of it (and the flame view) is there again after a reload."""
    page = agent.page
    detail, graph = box(agent, ".fx-detail"), box(agent, ".fx-graph-pane")
    split = box(agent, ".fx-split-v")
    page.mouse.move(split["x"] + 3, split["y"] + 200)
    page.mouse.down()
    page.mouse.move(split["x"] - 120, split["y"] + 200, steps=5)
    page.mouse.up()
    assert box(agent, ".fx-detail")["width"] == pytest.approx(detail["width"] + 123, abs=3)
    split = box(agent, ".fx-split-h")
    page.mouse.move(split["x"] + 300, split["y"] + 3)
    page.mouse.down()
    page.mouse.move(split["x"] + 300, split["y"] - 97, steps=5)
    page.mouse.up()
    assert box(agent, ".fx-graph-pane")["height"] == pytest.approx(graph["height"] - 100, abs=3)
    sizes = (box(agent, ".fx-detail")["width"], box(agent, ".fx-graph-pane")["height"])
    table = box(agent, ".fx-table")["height"]
    page.click(".fx-pane-toggle[data-pane=top]")
    assert not page.locator(".fx-graph-pane").is_visible()
    assert box(agent, ".fx-table")["height"] == pytest.approx(table + sizes[1] + 6, abs=2)
    page.click("button[data-mode=flame]")
    page.reload()
    page.wait_for_selector("body[data-ready='1']", state="attached")
    assert not page.locator(".fx-graph-pane").is_visible()
    assert page.locator(".fx-pane-toggle[data-pane=top]").get_attribute("aria-pressed") == "false"
    assert page.locator(".fx-flame-box").count() > 0 and not page.locator(".fx-rows").is_visible()
    assert box(agent, ".fx-detail")["width"] == pytest.approx(sizes[0], abs=1)
    page.click(".fx-pane-toggle[data-pane=top]")
    assert box(agent, ".fx-graph-pane")["height"] == pytest.approx(sizes[1], abs=1)
    page.click(".fx-pane-toggle[data-pane=side]")
    assert not page.locator(".fx-detail").is_visible()
    assert box(agent, ".fx-table")["width"] > 1300  # the left column takes the room
    page.dblclick(".fx-split-h")  # back to the default height
    assert box(agent, ".fx-graph-pane")["height"] == pytest.approx(graph["height"], abs=3)


@pytest.mark.parametrize("mode", ["waterfall", "flame"])
def test_800x600_no_label_overlaps_another(browser: Any, tmp_path: Any, mode: str) -> None:
    """At 800 x 600 every piece of text on screen (header, ruler, rows, graph boxes, detail,
    footer) has its own room, in both timeline views and zoomed in."""
    path = tmp_path / "small.html"
    path.write_text(trace_to_html(agent_trace()), encoding="utf-8")
    context = browser.new_context(viewport={"width": 800, "height": 600})
    try:
        page = context.new_page()
        page.goto(path.as_uri())
        page.wait_for_selector("body[data-ready='1']", state="attached")
        page.click(f"button[data-mode={mode}]")
        for zoom in ("", "+", "+"):
            if zoom:
                page.keyboard.press(zoom)
            page.wait_for_timeout(100)
            labels = page.evaluate(LABELS_JS)
            assert len(labels) > 30
            assert overlapping(labels) == []
        assert page.evaluate("document.documentElement.scrollWidth") <= 800
    finally:
        context.close()
