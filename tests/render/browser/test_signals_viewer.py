"""Run-level signals that mean what they say, and the page at 800 x 600, in a real browser:
handled failures apart from unhandled ones, the critical path as a chain, the `?` help,
the diff page's URL state, nothing overlapping and every pane reachable at 800 x 600."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from viewer_page import LABELS_JS, Loaded, overlapping
from viewer_traces import agent_trace, node

from flow_xray import TraceResult
from flow_xray.render.trace_page import trace_to_html

pytestmark = pytest.mark.e2e
OpenPage = Callable[..., Loaded]


def retried_run(*, recovered: bool) -> dict[str, Any]:
    """fetch fails (handled by its caller, which retries); the retry succeeds, or fails too
    and the failure reaches the root."""
    first = node(1, "fetch", "tool", 1.0, 5.0, 0, status="error", error="TimeoutError: slow")
    second = node(2, "fetch", "tool", 7.0, 5.0, 0)
    if not recovered:
        second.update(status="error", error="KeyError: 'page'")
    root = node(0, "job", "chain", 0.0, 20.0, None, children=[first, second])
    if not recovered:
        root.update(status="error", error="KeyError: 'page'")
    return TraceResult.from_dict({"version": 1, "nodes": [root]}).to_dict()


def chips(loaded: Loaded) -> list[tuple[str, bool]]:
    """Each header chip's text and whether it is drawn as a failure (red)."""
    return [
        (c.inner_text().replace("\n", " "), "bad" in str(c.get_attribute("class")))
        for c in loaded.page.locator(".fx-chip").all()
    ]


def test_a_run_that_recovered_is_not_red(open_page: OpenPage) -> None:
    """A handled failure that was retried successfully: "1 handled", no red error chip."""
    loaded = open_page(trace_to_html(retried_run(recovered=True)), "recovered")
    shown = chips(loaded)
    assert ("1 handled", False) in shown
    assert not any(bad for _, bad in shown)
    assert not any("error" in text for text, _ in shown)


def test_an_unhandled_failure_is_red_and_the_handled_one_apart(open_page: OpenPage) -> None:
    """The run failed: a red "1 unhandled error" chip, and the handled attempt beside it."""
    loaded = open_page(trace_to_html(retried_run(recovered=False)), "failed")
    shown = chips(loaded)
    assert ("1 unhandled error", True) in shown
    assert ("1 handled", False) in shown
    loaded.page.locator(".fx-chip", has_text="unhandled error").click()
    assert loaded.page.locator(".fx-detail").inner_text().count("KeyError") >= 1


def test_a_run_without_failures_says_0_errors(open_page: OpenPage) -> None:
    """Nothing failed: one neutral "0 errors" chip."""
    trace = {"version": 1, "nodes": [node(0, "job", "chain", 0.0, 5.0, None)]}
    shown = chips(open_page(trace_to_html(trace), "clean"))
    assert ("0 errors", False) in shown


def test_the_critical_path_of_a_loop_is_a_chain_of_two(open_page: OpenPage) -> None:
    """200 sequential steps: the path is the loop and its last step, listed root first."""
    steps = [node(k + 1, f"step_{k}", "tool", k * 1.0, 1.0, 0) for k in range(200)]
    trace = {"version": 1, "nodes": [node(0, "loop", "chain", 0.0, 200.0, None, children=steps)]}
    loaded = open_page(trace_to_html(trace), "loop")
    section = loaded.page.locator(".fx-ov-section[data-section=critical]")
    assert section.locator(".fx-ov-count").inner_text() == "2 calls"
    names = section.locator(".fx-ov-name").all_inner_texts()
    assert names == ["loop", "\u21b3 step_199"]


def test_question_mark_opens_the_keyboard_help(open_page: OpenPage) -> None:
    """`?` opens the help (keys and the search syntax, with the model: forms); Esc closes it;
    a `?` typed into the search box is text."""
    loaded = open_page(trace_to_html(agent_trace()), "help")
    overlay = loaded.page.locator(".fx-help-overlay")
    assert not overlay.is_visible()
    loaded.page.keyboard.press("?")
    assert overlay.is_visible()
    text = overlay.inner_text()
    assert "model:gpt-4o*" in text and "exactly that model" in text and "next failure" in text
    loaded.page.keyboard.press("j")  # modal: moves nothing
    loaded.page.keyboard.press("Escape")
    assert not overlay.is_visible()
    loaded.page.keyboard.press("/")
    loaded.page.keyboard.type("what?")
    assert not overlay.is_visible()
    assert loaded.page.locator(".fx-search").input_value() == "what?"


def test_800x600_nothing_overlaps_and_every_pane_is_reachable(browser: Any, tmp_path: Path) -> None:
    """At 800 x 600 no text covers another (the graph's buttons stay in the graph's pane), and
    overview, graph, tree and detail each get room on screen."""
    path = tmp_path / "narrow.html"
    path.write_text(trace_to_html(agent_trace(), title="travel_agent run"), encoding="utf-8")
    context = browser.new_context(viewport={"width": 800, "height": 600})
    try:
        page = context.new_page()
        page.goto(path.as_uri())
        page.wait_for_selector("body[data-ready='1']", state="attached")
        assert overlapping(page.evaluate(LABELS_JS)) == []
        sizes = page.evaluate(
            """() => Object.fromEntries(['.fx-ov-pane', '.fx-graph-pane', '.fx-rows', '.fx-detail']
              .map(s => { const r = document.querySelector(s).getBoundingClientRect();
                return [s, [Math.round(r.width), Math.round(r.height), r.right <= innerWidth,
                            r.bottom <= innerHeight]]; }))"""
        )
        for selector, (width, height, right_in, bottom_in) in sizes.items():
            assert width >= 150 and height >= 80 and right_in and bottom_in, (selector, sizes)
        tools = page.locator(".fx-graph-tools").bounding_box()
        pane = page.locator(".fx-graph-pane").bounding_box()
        assert tools is not None and pane is not None
        assert tools["x"] >= pane["x"] and tools["x"] + tools["width"] <= pane["x"] + pane["width"]
    finally:
        context.close()


def test_the_diff_page_keeps_its_selection_and_filters_in_the_url(open_page: OpenPage) -> None:
    """Select a pair and filter: the fragment says so, and a reload comes back to both."""
    before = TraceResult.from_dict(retried_run(recovered=True))
    after = TraceResult.from_dict(retried_run(recovered=False))
    loaded = open_page(before.diff(after, "a.json", "b.json").to_html(title="a vs b"), "diff")
    page = loaded.page
    page.locator(".fx-only-errors").check()
    first = page.locator(".fx-pair-top .fx-path").inner_text()
    page.keyboard.press("n")
    chosen = page.locator(".fx-pair-top .fx-path").inner_text()
    assert chosen != first  # not the row the page would open on anyway
    fragment = page.evaluate("() => location.hash")
    assert "errors=1" in fragment and "row=" in fragment
    page.reload()
    page.wait_for_selector("body[data-ready='1']", state="attached")
    assert page.locator(".fx-only-errors").is_checked()
    assert page.locator(".fx-pair-top .fx-path").inner_text() == chosen
    assert page.evaluate("() => location.hash") == fragment
    assert loaded.console_errors == []


GRAPH_JS = """() => ({
  scale: document.querySelector('.fx-svg > g').transform.baseVal.consolidate().matrix.a,
  boxes: [...document.querySelectorAll('.fx-node .fx-l1')].map(t => t.textContent),
  selected: [...document.querySelectorAll('.fx-node.selected .fx-l1')].map(t => t.textContent),
})"""


def repeated_trace() -> dict[str, Any]:
    """An agent fetching 60 pages (the 8th fails) between a plan and an answer."""
    fetches = [
        node(k + 2, "fetch", "retriever", 10.0 + k, 1.0, 0)
        | ({"status": "error", "error": "IOError: gone"} if k == 7 else {})
        for k in range(60)
    ]
    plan = node(1, "plan", "llm", 0.0, 10.0, 0)
    answer = node(62, "answer", "llm", 70.0, 10.0, 0)
    root = node(0, "agent", "agent", 0.0, 80.0, None, children=[plan, *fetches, answer])
    return {"version": 1, "nodes": [root]}


def test_past_30_calls_the_graph_is_a_readable_summary(browser: Any, tmp_path: Path) -> None:
    """3,000 calls: a few boxes around the selection, drawn at a readable scale, not specks."""
    from viewer_traces import wide_trace

    path = tmp_path / "wide.html"
    path.write_text(trace_to_html(wide_trace(3000)), encoding="utf-8")
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    try:
        page = context.new_page()
        page.goto(path.as_uri())
        page.wait_for_selector("body[data-ready='1']", state="attached")
        graph = page.evaluate(GRAPH_JS)
        assert len(graph["boxes"]) <= 16 and graph["scale"] >= 0.5, graph
        assert graph["selected"] == [page.locator(".fx-detail-name").inner_text()]
        page.keyboard.press("j")  # the neighbourhood follows the selection
        graph = page.evaluate(GRAPH_JS)
        assert graph["selected"] == [page.locator(".fx-detail-name").inner_text()]
    finally:
        context.close()


def test_repeated_siblings_are_one_box_that_opens_on_its_failure(open_page: OpenPage) -> None:
    """60 fetches under one call read "fetch x60"; clicking it selects the one that failed,
    drawn beside the 59 others."""
    loaded = open_page(trace_to_html(repeated_trace()), "repeated")
    loaded.page.locator(".fx-trace-row", has_text="agent").first.click()
    graph = loaded.page.evaluate(GRAPH_JS)
    assert graph["boxes"] == ["agent", "plan", "fetch \u00d760", "answer"]
    loaded.page.locator(".fx-node", has_text="fetch \u00d760").click()
    assert loaded.selected_name() == "fetch"
    assert "IOError: gone" in loaded.page.locator(".fx-detail").inner_text()
    graph = loaded.page.evaluate(GRAPH_JS)
    assert "fetch \u00d759" in graph["boxes"] and graph["selected"] == ["fetch"]


def test_question_mark_opens_the_diff_pages_help(open_page: OpenPage) -> None:
    """The diff page has its own help: its keys and filters; Esc closes it."""
    before = TraceResult.from_dict(retried_run(recovered=True))
    after = TraceResult.from_dict(retried_run(recovered=False))
    loaded = open_page(before.diff(after).to_html(title="a vs b"), "diff-help")
    overlay = loaded.page.locator(".fx-help-overlay")
    loaded.page.keyboard.press("?")
    assert overlay.is_visible() and "next / previous change" in overlay.inner_text()
    loaded.page.keyboard.press("Escape")
    assert not overlay.is_visible()
    assert loaded.console_errors == []


def test_the_diff_header_separates_handled_from_unhandled_failures(open_page: OpenPage) -> None:
    """Both runs retried a handled failure; only the second failed: its unhandled count rises
    (red), the handled one stays apart and is not red."""
    before = TraceResult.from_dict(retried_run(recovered=True))
    after = TraceResult.from_dict(retried_run(recovered=False))
    loaded = open_page(before.diff(after).to_html(title="a vs b"), "diff-chips")
    shown = chips(loaded)
    assert ("0 \u2192 1 unhandled errors", True) in shown
    assert ("1 \u2192 1 handled", False) in shown
