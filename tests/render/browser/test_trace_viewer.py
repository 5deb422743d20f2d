"""The trace viewer in a real browser: offline, safe, searchable, navigable."""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from viewer_page import Loaded
from viewer_traces import HOSTILE, agent_trace, hostile_trace, node, wide_trace

from flow_xray.render.trace_page import trace_to_html

pytestmark = pytest.mark.e2e
OpenPage = Callable[..., Loaded]
MATCHES_SHOWN = "() => document.querySelector('.fx-match-info').textContent !== ''"
SCREENSHOT = Path(__file__).resolve().parents[3] / ".assets" / "viewer.png"


@pytest.fixture
def agent(open_page: OpenPage) -> Loaded:
    return open_page(trace_to_html(agent_trace(), title="travel_agent run"), "agent")


def test_page_logs_no_console_errors(agent: Loaded) -> None:
    """Loading the viewer logs no error (a CSP hash mismatch would log one)."""
    assert agent.console_errors == []


def test_no_request_leaves_the_page(agent: Loaded) -> None:
    """Every request the page makes is the file itself or a data: URL."""
    agent.page.locator(".fx-node", has_text="plan").click()
    agent.page.keyboard.press("j")
    assert agent.requests
    assert [u for u in agent.requests if not u.startswith(("file://", "data:"))] == []


def test_clicking_a_graph_node_shows_its_inputs(agent: Loaded) -> None:
    """Clicking a box in the graph shows that call's inputs in the detail panel."""
    agent.page.locator(".fx-node", has_text="get_exhibits").click()
    detail = agent.page.locator(".fx-detail").inner_text()
    assert agent.selected_name() == "get_exhibits"
    assert "museum" in detail and "Louvre" in detail and "2025-06-14" in detail


def test_first_error_is_selected_on_open(agent: Loaded) -> None:
    """The page opens on the first failing call, with its error and traceback."""
    detail = agent.page.locator(".fx-detail").inner_text()
    assert agent.selected_name() == "get_weather"
    assert "TimeoutError: weather API did not answer" in detail
    assert 'File "tools/weather.py", line 18' in detail


def test_header_shows_totals(agent: Loaded) -> None:
    """The header shows node count, wall time, failures, tokens and cost; the failed tool was
    handled by its caller (the run went on), so it is counted as handled, not as an error."""
    chips = agent.page.locator(".fx-chips").inner_text().split()
    assert " ".join(chips) == "9 calls 2.92 s wall time 1 handled 2,442 tokens $0.0071 est. cost"


def test_hostile_text_is_shown_literally_and_runs_nothing(open_page: OpenPage) -> None:
    """Markup in a name, input key and value, output, error and attribute is plain text."""
    loaded = open_page(trace_to_html(hostile_trace()), "hostile")
    loaded.page.locator(".fx-trace-row", has_text="script").click()
    loaded.page.locator(".fx-section summary", has_text="Attributes").click()
    detail = loaded.page.locator(".fx-detail")
    texts = [
        detail.locator(".fx-detail-name").text_content(),
        detail.locator(".fx-k", has_text="</script>").text_content(),
        detail.locator(".fx-error").text_content(),
        detail.locator(".fx-kv-row", has_text="x.hostile").locator(".fx-v").text_content(),
    ]
    assert texts == [HOSTILE] * 4
    assert detail.inner_text().count(HOSTILE) >= 6  # key, value, output, error, traceback, attr
    assert loaded.page.evaluate("document.querySelectorAll('img').length") == 0
    assert loaded.dialogs == []
    assert loaded.console_errors == []


def test_search_keeps_matches_and_their_ancestors(agent: Loaded) -> None:
    """Typing a name shows only matching calls and the path to them."""
    agent.page.keyboard.press("/")
    agent.page.keyboard.type("retriev")
    agent.page.wait_for_function(MATCHES_SHOWN)
    assert agent.visible_rows() == ["travel_agent", "gather_context"] + ["retrieve"] * 3
    assert agent.page.locator(".fx-match-info").text_content() == "3 matches"


def test_errors_only_filter_keeps_failed_calls(agent: Loaded) -> None:
    """The errors-only toggle shows failing calls and their ancestors only."""
    agent.page.locator(".fx-toggle").click()
    assert agent.visible_rows() == ["travel_agent", "get_weather"]
    agent.page.locator(".fx-toggle").click()
    assert len(agent.visible_rows()) == 9


def test_keyboard_moves_the_selection(agent: Loaded) -> None:
    """j / k and the arrow keys move the selection through the visible rows."""
    names = []
    for key in ["j", "ArrowDown", "k", "ArrowUp", "ArrowUp"]:
        agent.page.keyboard.press(key)
        names.append(agent.selected_name())
    assert names == ["answer", "answer", "get_weather", "get_exhibits", "retrieve"]


def test_enter_collapses_and_expands(agent: Loaded) -> None:
    """Enter on a selected call collapses its subtree; Enter again expands it."""
    agent.page.locator(".fx-trace-row", has_text="gather_context").click()
    agent.page.keyboard.press("Enter")
    collapsed = len(agent.visible_rows())
    agent.page.keyboard.press("Enter")
    assert (collapsed, len(agent.visible_rows())) == (6, 9)


def test_escape_clears_the_search(agent: Loaded) -> None:
    """Esc in the search box clears the query and shows every row again."""
    agent.page.keyboard.press("/")
    agent.page.keyboard.type("plan")
    agent.page.wait_for_function(MATCHES_SHOWN)
    agent.page.keyboard.press("Escape")
    assert len(agent.visible_rows()) == 9


def test_clearing_a_search_keeps_the_found_call_selected(open_page: OpenPage) -> None:
    """After Esc clears a search, the call it found stays selected, on screen, and j moves on
    from it (it used to sit inside a collapsed subtree, and j jumped to the first row)."""
    loaded = open_page(trace_to_html(wide_trace(3000)), "clear")
    loaded.page.keyboard.press("/")
    loaded.page.keyboard.type("llm_2505")
    # The whole query applied (typing under load can outlast the search's debounce).
    loaded.page.wait_for_function(
        "() => document.querySelector('.fx-match-info').textContent === '1 match'"
    )
    loaded.page.keyboard.press("Escape")
    shown = loaded.page.locator(".fx-trace-row.selected:visible .fx-name").all_text_contents()
    loaded.page.keyboard.press("j")
    assert (shown, loaded.selected_name()) == (["llm_2505"], "tool_2506")


def test_a_ten_thousand_character_name_leaves_the_facts_on_screen(open_page: OpenPage) -> None:
    """A huge name scrolls inside its heading; latency and inputs stay in the viewport."""
    trace = {"version": 1, "nodes": [node(0, "x" * 10_000, "chain", 0.0, 5.0, None)]}
    loaded = open_page(trace_to_html(trace), "longname")
    box = loaded.page.locator(".fx-facts dt", has_text="Latency").bounding_box()
    assert box is not None and box["y"] < 400


def test_wide_glyph_names_stay_inside_their_graph_box(open_page: OpenPage) -> None:
    """A name of wide letters is cut to the box's measured width, not drawn past its edge."""
    trace = {"version": 1, "nodes": [node(0, "W" * 30, "chain", 0.0, 5.0, None)]}
    loaded = open_page(trace_to_html(trace), "wide-glyphs")
    text = loaded.page.evaluate("() => document.querySelector('.fx-node .fx-l1').getBBox().width")
    rect = loaded.page.evaluate("() => document.querySelector('.fx-node rect').getBBox().width")
    assert text < rect


def test_ancestor_path_keeps_its_order_with_right_to_left_names(open_page: OpenPage) -> None:
    """Each ancestor in the path is isolated, so Arabic/Hebrew names or U+202E cannot
    reorder the path (it used to be one text run)."""
    leaf = node(2, "leaf", "tool", 2.0, 1.0, 1)
    middle = node(1, "\u202eevil", "chain", 1.0, 3.0, 0, children=[leaf])
    root = node(0, "\u0645\u0631\u062d\u0628\u0627", "agent", 0.0, 5.0, None, children=[middle])
    loaded = open_page(trace_to_html({"version": 1, "nodes": [root]}), "rtl")
    loaded.page.locator(".fx-trace-row", has_text="leaf").click()
    xs = loaded.page.evaluate(
        "() => [...document.querySelectorAll('.fx-path bdi')]"
        ".map(b => b.getBoundingClientRect().left)"
    )
    assert len(xs) == 2 and xs[0] < xs[1]


def test_a_call_without_a_name_reads_the_same_everywhere(open_page: OpenPage) -> None:
    """A null name shows as ``?`` in the row, the graph box and the detail panel, and a
    search for "null" or "undefined" finds nothing."""
    trace = {"version": 1, "nodes": [node(0, None, "chain", 0.0, 5.0, None)]}
    loaded = open_page(trace_to_html(trace), "noname")
    shown = [
        loaded.page.locator(".fx-trace-row .fx-name").first.text_content(),
        loaded.page.locator(".fx-node .fx-l1").first.text_content(),
        loaded.selected_name(),
    ]
    loaded.page.keyboard.press("/")
    loaded.page.keyboard.type("undefined")
    loaded.page.wait_for_function(MATCHES_SHOWN)
    assert (shown, loaded.page.locator(".fx-match-info").text_content()) == (["?"] * 3, "no match")


def test_ten_thousand_nodes_become_interactive(open_page: OpenPage) -> None:
    """A 10k-node trace loads, draws and answers a click (time printed, not asserted)."""
    html = trace_to_html(wide_trace(10_000))
    started = time.perf_counter()
    loaded = open_page(html, "wide10k")
    print(f"\n10k nodes: ready in {time.perf_counter() - started:.2f} s (from navigation)")
    loaded.page.keyboard.press("Home")
    loaded.page.keyboard.press("j")
    assert loaded.selected_name() == "batch_1"
    assert loaded.console_errors == []


def test_hundred_thousand_nodes_open(open_page: OpenPage) -> None:
    """A 100k-node trace still opens; the header counts every node."""
    loaded = open_page(trace_to_html(wide_trace(100_000)), "wide100k", timeout_ms=120_000)
    assert loaded.page.locator(".fx-chip").first.inner_text().split() == ["100,000", "calls"]
    assert loaded.console_errors == []


@pytest.mark.slow
def test_a_captured_hundred_thousand_call_page_opens_scrolls_and_shows_details(
    open_page: OpenPage,
) -> None:
    """A real 100k-call capture makes a page under 12 MB that opens, scrolls to the last
    call and shows that call's inputs, decoded when it is selected."""
    from flow_xray import trace

    @trace
    def leaf(stage: int, item: int) -> int:
        return stage * item

    @trace
    def stage(index: int) -> int:
        return sum(leaf(index, item) for item in range(99))

    @trace
    def pipeline() -> None:
        for index in range(1000):
            stage(index)

    with trace.capture() as result:
        pipeline()
    html = result.to_html()
    assert len(html.encode("utf-8")) < 12_000_000
    loaded = open_page(html, "captured100k", timeout_ms=120_000)
    assert loaded.page.locator(".fx-chip").first.inner_text().split() == ["100,001", "calls"]
    loaded.page.locator(".fx-rows").hover()
    loaded.page.keyboard.press("Home")
    loaded.page.keyboard.press("ArrowRight")  # expand the root: its 1,000 stages
    loaded.page.mouse.wheel(0, 50_000)
    loaded.page.keyboard.press("End")
    assert loaded.selected_name().split(".")[-1] in ("stage", "leaf")
    detail = loaded.page.locator(".fx-detail").inner_text()
    assert "999" in detail  # the last stage's inputs, decoded on selection
    assert loaded.console_errors == []


def test_screenshot_of_the_demo_trace(open_page: OpenPage, tmp_path: Path) -> None:
    """The README picture: the built-in demo, an LLM call selected, 1400x900, a real PNG.

    Set FLOW_XRAY_UPDATE_SCREENSHOT=1 to write it to .assets/viewer.png.
    """
    from flow_xray.examples.demo_agent import run_demo

    # Playwright's sync API keeps an event loop in this thread; the demo runs its own.
    with ThreadPoolExecutor(max_workers=1) as pool:
        result = pool.submit(run_demo).result()
    demo = open_page(result.to_html(title="flow-xray demo: research agent"), "demo")
    demo.page.locator(".fx-row", has_text="chat.completions.create").first.click()
    assert "gpt-4o-mini" in demo.page.locator(".fx-detail").inner_text()
    demo.page.keyboard.press("f")  # fit the whole graph in its pane
    data = demo.screenshot(SCREENSHOT, tmp_path / "viewer.png")
    assert len(data) > 40_000
    assert demo.console_errors == []


def test_invisible_direction_marks_are_shown_not_obeyed(open_page: OpenPage) -> None:
    """A name or input with U+202E (right-to-left override) shows the mark instead of
    silently reversing the text, in the row and in the detail panel."""
    trace = {"version": 1, "nodes": [node(0, "\u202eevil", "chain", 0.0, 5.0, None)]}
    trace["nodes"][0]["inputs"] = {"path": "report\u202efdp.exe"}
    loaded = open_page(trace_to_html(trace), "bidi")
    assert loaded.page.locator(".fx-trace-row .fx-name").first.text_content() == "<U+202E>evil"
    assert "report<U+202E>fdp.exe" in loaded.page.locator(".fx-detail").inner_text()
