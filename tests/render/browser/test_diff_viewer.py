"""The diff viewer in a real browser: offline, aligned, filterable, navigable by change."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from viewer_page import Loaded

from flow_xray import TraceResult
from flow_xray.render.trace_graph import flatten_trace

pytestmark = pytest.mark.e2e
OpenPage = Callable[..., Loaded]
SCREENSHOT = Path(__file__).resolve().parents[3] / ".assets" / "diff.png"
PIPELINE = Path(__file__).resolve().parents[2] / "analysis"


def in_thread(fn: Callable[[], Any]) -> Any:
    # Playwright's sync API keeps an event loop in this thread; the demo runs its own.
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(fn).result()


@pytest.fixture(scope="module")
def demo_pages() -> tuple[str, dict[str, Any]]:
    """The diff of the demo agent's seeds 4 (no retry) and 5 (a timeout, then rainy)."""
    from flow_xray.examples.demo_agent import run_demo

    good, bad = in_thread(lambda: (run_demo(seed=4), run_demo(seed=5)))
    diff = good.diff(bad, "good.json", "bad.json")
    return diff.to_html(title="good vs bad"), diff.to_dict()


@pytest.fixture
def demo(open_page: OpenPage, demo_pages: tuple[str, dict[str, Any]]) -> Loaded:
    return open_page(demo_pages[0], "demo-diff")


def pipeline_diff(**changes: Any) -> Any:
    sys.path.insert(0, str(PIPELINE))
    try:
        from diff_pipeline import run_pipeline
    finally:
        sys.path.remove(str(PIPELINE))
    return run_pipeline().diff(run_pipeline(**changes))


def detail(loaded: Loaded) -> str:
    return str(loaded.page.locator(".fx-diff-detail").inner_text())


def selected_path(loaded: Loaded) -> str:
    return str(loaded.page.locator(".fx-pair-top .fx-path").inner_text()).replace("\n", "")


def rows(loaded: Loaded) -> list[dict[str, Any]]:
    """The rendered rows, top to bottom: change, both names, and whether it is dimmed."""
    return list(
        loaded.page.evaluate(
            """() => [...document.querySelectorAll('.fx-diff-rows .fx-diff-row')]
            .filter(r => r.style.display !== 'none' && r.fxItem !== undefined)
            .sort((a, b) => new DOMMatrix(getComputedStyle(a).transform).m42 -
                            new DOMMatrix(getComputedStyle(b).transform).m42)
            .map(r => ({
                change: [...r.classList].find(c => c.startsWith('fx-change-')).slice(10),
                a: r.querySelector('.fx-side-a .fx-name').textContent,
                b: r.querySelector('.fx-side-b .fx-name').textContent,
                context: r.classList.contains('fx-context'),
            }))"""
        )
    )


def test_page_is_offline_and_logs_no_error(demo: Loaded) -> None:
    """The page loads with no console error (a CSP mismatch would log one) and no request
    beyond its own file."""
    demo.page.keyboard.press("n")
    assert demo.console_errors == []
    assert [u for u in demo.requests if not u.startswith(("file://", "data:"))] == []


def test_copy_json_gives_the_selected_call_whole(
    demo: Loaded, demo_pages: tuple[str, dict[str, Any]]
) -> None:
    """The page's runs are packed as a trace page's calls; "Copy JSON" still gives the
    call's fields (a packed row's fields are getters on its prototype)."""
    demo.page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    button = demo.page.locator(".fx-diff-detail .fx-copy").get_by_text("Copy JSON", exact=True)
    button.first.click()
    demo.page.wait_for_function(
        "() => [...document.querySelectorAll('.fx-copy')].some(b => b.textContent === 'Copied')"
    )
    call = json.loads(demo.page.evaluate("() => navigator.clipboard.readText()"))
    first_change = next(c for c in demo_pages[1]["calls"] if c["change"] != "same")
    side = "before" if first_change["a"] >= 0 else "after"
    nodes = {n["span_id"]: n for n in flatten_trace(demo_pages[1][side])}
    assert call["span_id"] in nodes and call["name"] == first_change["name"]
    assert call["inputs"] == nodes[call["span_id"]]["inputs"]


def test_the_extra_retry_is_an_added_row_beside_a_blank(demo: Loaded) -> None:
    """The second run's failed weather attempt has its own row: blank on the first run's
    side, the failed call on the second's, right above the attempt both runs made."""
    shown = rows(demo)
    k = next(i for i, r in enumerate(shown) if r["change"] == "added")
    assert shown[k] == {"change": "added", "a": "", "b": "weather_api", "context": False}
    assert (shown[k + 1]["a"], shown[k + 1]["b"]) == ("weather_api", "weather_api")
    assert demo.page.locator(".fx-change-added .fx-side-a.fx-absent").count() == 1


def test_n_walks_the_changes_and_shows_each_pair_side_by_side(
    demo: Loaded, demo_pages: tuple[str, dict[str, Any]]
) -> None:
    """The page opens on the first change; n goes to each next one in order, N back."""
    expected = [" \u203a ".join(c["path"]) for c in demo_pages[1]["calls"] if c["change"] != "same"]
    seen = [selected_path(demo)]
    for _ in expected[1:]:
        demo.page.keyboard.press("n")
        seen.append(selected_path(demo))
    assert [s.replace("  ", " ") for s in seen] == expected
    demo.page.keyboard.press("N")
    assert selected_path(demo).replace("  ", " ") == expected[-2]


def test_the_added_attempt_shows_its_error_against_nothing(demo: Loaded) -> None:
    """Selecting the added call: the second run's error on its side, "Not in this run" on
    the other."""
    demo.page.locator(".fx-change-added").first.click()
    text = detail(demo)
    assert "ADDED" in text
    assert "TimeoutError: weather service did not answer for 'Tokyo' within 50 ms" in text
    assert "Not in this run." in text


def test_the_changed_llm_answer_is_a_text_diff(demo: Loaded) -> None:
    """The final LLM answer changed with the weather: the old words struck out, the new
    ones inserted, as text."""
    demo.page.locator(".fx-diff-row", has_text="chat.completions.create").nth(1).click()
    assert selected_path(demo).endswith("chat.completions.create #2")
    deleted = demo.page.locator(".fx-textdiff del").all_text_contents()
    inserted = demo.page.locator(".fx-textdiff ins").all_text_contents()
    assert "21" in deleted and "23" in inserted
    assert "rainy" in "".join(inserted) and "clear" in "".join(deleted)


def test_only_changed_keeps_changes_and_their_context(
    demo: Loaded, demo_pages: tuple[str, dict[str, Any]]
) -> None:
    """ "Only changed" shows the calls that differ, and their parents dimmed for context."""
    demo.page.locator(".fx-only-changed input").check()
    demo.page.wait_for_function("() => document.querySelector('.fx-match-info').textContent")
    changed = [c for c in demo_pages[1]["calls"] if c["change"] != "same"]
    shown = rows(demo)
    assert [r["change"] for r in shown if not r["context"]] == [c["change"] for c in changed]
    assert all(r["change"] == "same" for r in shown if r["context"])
    info = demo.page.locator(".fx-match-info").text_content()
    assert info == f"{len(changed)} of {len(demo_pages[1]['calls'])} calls"


def test_only_errors_keeps_calls_that_failed_in_either_run(demo: Loaded) -> None:
    """ "Only errors" leaves the failed attempt (and its parents as context)."""
    demo.page.locator(".fx-only-errors input").check()
    demo.page.wait_for_function("() => document.querySelector('.fx-match-info').textContent")
    assert [(r["a"], r["b"]) for r in rows(demo) if not r["context"]] == [("", "weather_api")]


def test_slower_than_keeps_calls_slower_by_that_much(open_page: OpenPage) -> None:
    """ "Slower by >= 50%" leaves the search call that took 150 ms longer, and nothing else."""
    diff = in_thread(lambda: pipeline_diff(search_ms=150))
    loaded = open_page(diff.to_html(), "slower")
    loaded.page.locator(".fx-slower-input").fill("50")
    loaded.page.wait_for_function("() => document.querySelector('.fx-match-info').textContent")
    matched = [r["b"] for r in rows(loaded) if not r["context"]]
    assert matched == ["agent", "search"]


def test_search_filters_by_name_and_escape_clears(demo: Loaded) -> None:
    """Typing in the search box keeps matching names; Escape brings every row back."""
    before = len(rows(demo))
    demo.page.keyboard.press("/")
    demo.page.keyboard.type("fetch")
    demo.page.wait_for_function("() => document.querySelector('.fx-match-info').textContent")
    assert {r["b"] for r in rows(demo) if not r["context"]} == {"fetch_source"}
    demo.page.keyboard.press("Escape")
    demo.page.wait_for_function("() => !document.querySelector('.fx-match-info').textContent")
    assert len(rows(demo)) == before


def test_equal_runs_say_so(open_page: OpenPage) -> None:
    """Two equal runs: the verdict says there is no difference, and nothing is marked."""
    diff = in_thread(lambda: pipeline_diff())
    loaded = open_page(diff.to_html(), "equal")
    assert loaded.page.locator(".fx-diff-verdict").text_content() == "No differences"
    assert {r["change"] for r in rows(loaded)} == {"same"}


def test_hostile_text_is_shown_not_run(open_page: OpenPage) -> None:
    """Markup in names and outputs is shown as text: no dialog, no element made from it."""
    hostile = "</script><img src=x onerror=alert(1)><b>bold</b>"
    tree = {"name": hostile, "output": hostile, "latency_ms": 1.0}
    other = {**tree, "output": hostile + " <script>alert(2)</script>"}
    a = TraceResult.from_dict({"nodes": [tree]})
    b = TraceResult.from_dict({"nodes": [other]})
    loaded = open_page(a.diff(b).to_html(title=hostile), "hostile")
    assert loaded.dialogs == [] and loaded.console_errors == []
    assert loaded.page.locator("img").count() == 0
    assert loaded.page.locator("b", has_text="bold").count() == 0
    assert hostile in detail(loaded)
    assert "<script>alert(2)</script>" in "".join(
        loaded.page.locator(".fx-textdiff ins").all_text_contents()
    )


def test_screenshot_of_the_changed_answer(demo: Loaded, tmp_path: Path) -> None:
    """A 1400x900 screenshot of the diff of the demo's two seeds, on the changed LLM answer
    (the README's picture). Set FLOW_XRAY_UPDATE_SCREENSHOT=1 to write .assets/diff.png."""
    demo.page.locator(".fx-change-added").first.click()
    demo.page.locator(".fx-diff-row", has_text="chat.completions.create").nth(1).click()
    answer = demo.page.locator(".fx-change-path", has_text="choices[0].message.content")
    answer.evaluate("el => el.scrollIntoView({block: 'start'})")
    demo.screenshot(SCREENSHOT, tmp_path / "diff.png")
    assert demo.console_errors == []
