"""The DOT viewer keeps its DOT text in the page: shown on demand and copyable, offline."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from viewer_page import Loaded

from flow_xray import Value, standalone_viewer_html, value_graph_to_dot

pytestmark = pytest.mark.e2e
OpenPage = Callable[..., Loaded]


def _dot() -> str:
    a, b = Value(2.0, label="a"), Value(-3.0, label="b")
    y = ((a * b) + 10).relu().tanh()
    y.label = "L"
    return value_graph_to_dot(y)


def test_dot_source_is_shown_verbatim(open_page: OpenPage) -> None:
    """Opening "DOT source" under the drawn graph shows the exact DOT text."""
    dot = _dot()
    loaded = open_page(standalone_viewer_html(dot, title="demo"), "source")
    assert loaded.page.locator(".fx-node").count() == 7
    loaded.page.locator(".fx-dot-source > summary").click()
    assert loaded.page.locator(".fx-dot-source pre").text_content() == dot
    assert loaded.console_errors == []
    assert [u for u in loaded.requests if not u.startswith(("file://", "data:"))] == []


def test_copy_button_puts_the_dot_on_the_clipboard(open_page: OpenPage) -> None:
    """ "Copy DOT" copies the DOT text exactly and says so."""
    dot = _dot()
    loaded = open_page(standalone_viewer_html(dot), "copy")
    loaded.page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    loaded.page.locator(".fx-dot-source > summary").click()
    loaded.page.locator(".fx-copy-dot").click()
    loaded.page.wait_for_function(
        "() => document.querySelector('.fx-copy-dot').textContent === 'Copied'"
    )
    assert loaded.page.evaluate("() => navigator.clipboard.readText()") == dot
