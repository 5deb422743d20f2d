"""0.3.x's viewer features in a real browser: ``trace.tag`` badges, the page ``a.diff(b)``
is, ``to_html(static_index=...)``'s ghosts."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from viewer_page import Loaded

from flow_xray import TraceResult, trace
from flow_xray.static_index import build_index

pytestmark = pytest.mark.e2e
OpenPage = Callable[..., Loaded]
HOSTILE = "</script><img src=x onerror=alert(1)>"


@trace
def fetch(city: str) -> str:
    trace.tag("cache-miss", region="eu", attempt=2)
    return "sunny" if city == "Paris" else "rainy"


@trace
def plan(city: str) -> str:
    return f"walk: {fetch(city)}"


@trace
def agent(city: str) -> str:
    trace.tag(HOSTILE, note=HOSTILE)
    return plan(city)


@pytest.fixture(scope="module")
def run() -> TraceResult:
    return trace.run(agent, "Paris")


def badges(loaded: Loaded, selector: str) -> list[str]:
    return [t.strip() for t in loaded.page.locator(selector).all_text_contents()]


def test_tags_are_badges_on_their_row(open_page: OpenPage, run: TraceResult) -> None:
    """The tagged call's row carries one badge per tag; untagged rows none."""
    loaded = open_page(run.to_html(title="tags"), "tags")
    row = loaded.page.locator(".fx-trace-row", has_text="fetch")
    assert badges(loaded, ".fx-trace-row:has(.fx-name:text-is('fetch')) .fx-tag") == [
        "cache-miss",
        "region=eu",
        "attempt=2",
    ]
    assert row.locator(".fx-tag").first.is_visible()
    assert loaded.page.locator(".fx-trace-row:has(.fx-name:text-is('plan')) .fx-tag").count() == 0
    assert loaded.console_errors == []
    assert [u for u in loaded.requests if not u.startswith(("file://", "data:"))] == []


def test_selected_call_shows_its_tags_under_its_name(open_page: OpenPage, run: TraceResult) -> None:
    """Selecting the call: its badges under the name in the detail panel."""
    loaded = open_page(run.to_html(title="tags"), "tags-detail")
    loaded.page.locator(".fx-trace-row", has_text="fetch").click()
    assert loaded.selected_name() == "fetch"
    assert badges(loaded, ".fx-detail .fx-detail-tags .fx-tag") == [
        "cache-miss",
        "region=eu",
        "attempt=2",
    ]


def test_hostile_tags_are_text_and_run_nothing(open_page: OpenPage, run: TraceResult) -> None:
    """A label and a key-value tag made of markup are shown as text; no element, no dialog."""
    loaded = open_page(run.to_html(title="tags"), "tags-hostile")
    loaded.page.locator(".fx-trace-row", has_text="agent").first.click()
    shown = loaded.page.locator(".fx-detail .fx-detail-tags .fx-tag")
    assert shown.first.get_attribute("title") == HOSTILE
    assert shown.nth(1).get_attribute("title") == f"note={HOSTILE}"
    assert loaded.page.evaluate("document.querySelectorAll('img').length") == 0
    assert loaded.dialogs == [] and loaded.console_errors == []


def test_a_diff_written_with_write_text_opens(open_page: OpenPage, tmp_path: Path) -> None:
    """``Path("d.html").write_text(a.diff(b))``, 0.3.x's way: the diff viewer opens from it,
    showing the changed calls."""
    path = tmp_path / "d.html"
    path.write_text(trace.run(plan, "Paris").diff(trace.run(plan, "Lyon")), encoding="utf-8")
    loaded = open_page(path.read_text(encoding="utf-8"), "diff-from-str")
    verdict = loaded.page.locator(".fx-diff-verdict").inner_text()
    assert verdict == "The runs differ"
    assert loaded.console_errors == []


ROUTER = """
from flow_xray import trace


@trace
def call_search(query):
    return "results"


@trace
def call_database(query):
    return "rows"


@trace
def choose_tool(kind, query):
    if kind == "search":
        return call_search(query)
    return call_database(query)
"""


def test_static_index_page_draws_the_branch_not_taken(open_page: OpenPage, tmp_path: Path) -> None:
    """``result.to_html(path, static_index=build_index([file]))``: the search branch that
    did not run is a dashed ghost box under choose_tool."""
    source = tmp_path / "router03.py"
    source.write_text(ROUTER, encoding="utf-8")
    namespace: dict[str, object] = {"__name__": "router03"}
    exec(compile(ROUTER, str(source), "exec"), namespace)
    result = trace.run(namespace["choose_tool"], "database", "q")  # type: ignore[arg-type]
    out = tmp_path / "static.html"
    result.to_html(str(out), title="static", static_index=build_index([source]))
    loaded = open_page(out.read_text(encoding="utf-8"), "static-03")
    ghosts = loaded.page.locator(".fx-node.ghost .fx-l1").all_text_contents()
    assert ghosts == ["call_search"]
    assert loaded.console_errors == []
