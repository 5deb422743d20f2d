"""Static context in the trace viewer, in a real browser: ghosts of what did not run."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from viewer_page import Loaded

from flow_xray import TraceResult, trace
from flow_xray.analysis import StaticIndex

pytestmark = pytest.mark.e2e
OpenPage = Callable[..., Loaded]
FIXTURES = Path(__file__).resolve().parents[2] / "analysis" / "fixtures"


@pytest.fixture(scope="module")
def shop_page() -> str:
    """The viewer of one run of the fixture shop (the primary model answered), with the
    static context of its source."""
    sys.path.insert(0, str(FIXTURES))
    try:
        import shop.cli

        with trace.capture() as result:
            shop.cli.main(["green tea"])
    finally:
        sys.path.remove(str(FIXTURES))
    return result.to_html(title="shop", static=StaticIndex.build([FIXTURES / "shop"]))


@pytest.fixture
def shop(open_page: OpenPage, shop_page: str) -> Loaded:
    return open_page(shop_page, "shop")


def test_page_with_static_context_is_clean_and_offline(shop: Loaded) -> None:
    """The page logs no error and requests nothing beyond its own file."""
    shop.page.locator(".fx-node", has_text="fallback").first.click()
    assert shop.console_errors == []
    assert [u for u in shop.requests if not u.startswith(("file://", "data:"))] == []


def test_the_fallback_that_did_not_run_is_drawn_dashed(shop: Loaded) -> None:
    """The fallback model (and what it would call) are ghost boxes with a dashed outline,
    hung under Agent.answer; the calls that ran are drawn solid."""
    ghosts = shop.page.locator(".fx-node.ghost .fx-l1").all_text_contents()
    assert ghosts == ["fallback", "record_fallback"]
    dash = shop.page.locator(".fx-node.ghost rect").first.evaluate(
        "r => getComputedStyle(r).strokeDasharray"
    )
    solid = shop.page.locator(".fx-node.ok rect").first.evaluate(
        "r => getComputedStyle(r).strokeDasharray"
    )
    assert dash not in ("none", "") and solid in ("none", "")


def test_a_ghost_says_why_it_is_there(shop: Loaded) -> None:
    """Selecting the ghost: where it would have been called from, and where it is defined."""
    shop.page.locator(".fx-node", has_text="fallback").first.click()
    text = shop.page.locator(".fx-detail").inner_text()
    assert "STATIC CONTEXT (NOT RUN)" in text.upper()
    assert "not run: Agent.answer calls it at line" in text
    assert "shop.models.fallback_model" in text and "shop/models.py:" in text
    assert "shop.agent.Agent.answer" in text  # its static caller


def test_a_call_that_ran_lists_its_static_callers_and_callees(shop: Loaded) -> None:
    """Agent.answer's static callees include the fallback it did not call this time."""
    shop.page.locator(".fx-node", has_text="Agent.answer").first.click()
    text = shop.page.locator(".fx-detail").inner_text()
    assert "shop.agent.Agent.run" in text  # caller
    callees = text.split("Static callees", 1)[1]
    assert "shop.models.primary_model" in callees and "shop.models.fallback_model" in callees


def test_dynamic_dispatch_is_marked_runtime_only(shop: Loaded) -> None:
    """search was reached through ``TOOLS[...]``: its call is marked runtime-only."""
    shop.page.locator(".fx-node", has_text="search").first.click()
    line = StaticIndex.build([FIXTURES / "shop"]).lookup("Agent.act").calls[0].line
    fact = shop.page.locator(".fx-detail .fx-runtime-only").text_content()
    assert fact == f"runtime-only: a dynamic call, e.g. TOOLS[step['tool']] (line {line})"


def test_a_trace_without_static_context_has_no_ghosts(open_page: OpenPage) -> None:
    """Without ``static=`` nothing changes: no ghost, no static section."""
    result = TraceResult.from_dict({"nodes": [{"name": "job", "latency_ms": 1.0}]})
    loaded = open_page(result.to_html(), "plain")
    assert loaded.page.locator(".fx-node.ghost").count() == 0
    assert "Static context" not in loaded.page.locator(".fx-detail").inner_text()


def test_a_ghost_reads_not_run_everywhere(shop: Loaded) -> None:
    """A ghost's row, box and latency fact say "not run", never "never ended"."""
    page = shop.page
    page.locator(".fx-node", has_text="fallback").first.click()
    rows = page.locator(".fx-trace-row", has=page.locator(".fx-dot.ghost"))
    assert rows.locator(".fx-lat-total").all_text_contents() == ["not run", "not run"]
    boxes = page.locator(".fx-node.ghost").all_text_contents()
    assert all("not run" in box and "never ended" not in box for box in boxes)
    assert "never ended" not in page.locator(".fx-detail").inner_text()
    assert "never ended" not in page.locator("body").inner_text()
