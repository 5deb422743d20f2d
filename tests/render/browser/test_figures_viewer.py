"""No figure is ever drawn clipped, at any width from 800 px up, light and dark.

Every duration, token count, cost and header count on the trace page is
either fully visible or not drawn (see ``figures.py``); names give way first.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from figures import ROW_TOTALS_JS, big_trace, clipped_figures

from flow_xray.render.trace_page import trace_to_html

pytestmark = pytest.mark.e2e

SIZES = [(800, 600), (1280, 800), (1440, 900), (1920, 1080)]
SCHEMES = ["light", "dark"]
Open = Callable[[str, int, int, str], Any]


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The demo agent's page and the long-names / big-numbers page, written once."""
    from flow_xray.examples.demo_agent import run_demo

    folder = tmp_path_factory.mktemp("figures")
    # Playwright's sync API keeps an event loop in this thread; the demo runs its own.
    with ThreadPoolExecutor(max_workers=1) as pool:
        demo = pool.submit(run_demo).result()
    out = {"demo": folder / "demo.html", "big": folder / "big.html"}
    out["demo"].write_text(demo.to_html(title="flow-xray demo: research agent"), encoding="utf-8")
    out["big"].write_text(trace_to_html(big_trace(), title="b" * 200), encoding="utf-8")
    return out


@pytest.fixture
def open_at(browser: Any, pages: dict[str, Path]) -> Iterator[Open]:
    """Return ``open(page, width, height, scheme) -> page``, ready, with no console error."""
    contexts: list[Any] = []

    def open_page(name: str, width: int, height: int, scheme: str) -> Any:
        context = browser.new_context(
            viewport={"width": width, "height": height}, color_scheme=scheme
        )
        contexts.append(context)
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(pages[name].as_uri())
        page.wait_for_selector("body[data-ready='1']", state="attached")
        page.evaluate(
            "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))"
        )
        assert errors == []
        return page

    yield open_page
    for context in contexts:
        context.close()


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
@pytest.mark.parametrize("trace", ["demo", "big"])
def test_no_figure_is_clipped(
    open_at: Open, trace: str, size: tuple[int, int], scheme: str
) -> None:
    """Every visible duration, token count, cost and header count is drawn in full."""
    page = open_at(trace, size[0], size[1], scheme)
    assert clipped_figures(page) == []


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
@pytest.mark.parametrize("trace", ["demo", "big"])
def test_every_row_shows_its_total_latency(
    open_at: Open, trace: str, size: tuple[int, int]
) -> None:
    """The total latency of each tree row is never the figure that gives way."""
    page = open_at(trace, size[0], size[1], "light")
    rows = page.evaluate(ROW_TOTALS_JS)
    assert rows
    assert [r["text"] for r in rows if not r["shown"]] == []


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_llm_rows_keep_model_tokens_and_cost(open_at: Open, size: tuple[int, int]) -> None:
    """An LLM row shows its tokens and cost in full and at least the start of its model."""
    page = open_at("demo", size[0], size[1], "light")
    facts = page.evaluate(
        """() => [...document.querySelectorAll('.fx-trace-row')]
        .filter(r => r.style.display !== 'none' && r.querySelector('.fx-fact-cost').textContent)
        .map(r => ['model', 'tokens', 'cost'].map(k => {
          const el = r.querySelector('.fx-fact-' + k);
          const b = el.getBoundingClientRect();
          const cell = r.querySelector('.fx-cell-name').getBoundingClientRect();
          return b.width > 0 && b.top >= cell.top && b.bottom <= cell.bottom + 0.5 &&
            b.right <= cell.right + 0.5 ? el.textContent : '';
        }))"""
    )
    assert len(facts) == 2
    for model, tokens, cost in facts:
        assert model.startswith("gpt-4o-mini"[:4])
        assert tokens.endswith(" tok")
        assert cost.startswith("$0.0000")


def test_costs_are_plain_decimals_everywhere_on_the_page(open_at: Open) -> None:
    """A $0.00000064 embedding reads so in its row, the overview, the detail's figures and its
    raw attributes: no exponent form anywhere on the page."""
    page = open_at("big", 1920, 1080, "light")
    page.locator(".fx-trace-row", has_text="embeddings.create").first.click()
    page.evaluate(
        "() => document.querySelectorAll('.fx-detail details').forEach(d => d.open = true)"
    )
    text = page.locator("body").inner_text()
    assert re.findall(r"\d(?:\.\d+)?e[-+]\d", text) == []  # String(6.4e-7) is "6.4e-7"
    assert "$0.00000064" in page.locator(".fx-trace-row.selected").inner_text()
    detail = page.locator(".fx-detail").inner_text()
    assert "llm.cost.total" in detail and "0.00000064" in detail.split("llm.cost.total")[1]
