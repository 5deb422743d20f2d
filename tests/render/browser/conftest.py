"""Browser fixtures: headless Chromium driven by Playwright's sync API.

Every page is opened from a ``file://`` URL with every request, console
message, page error and dialog recorded, so tests can assert that nothing
left the page and nothing ran.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from viewer_page import CHROMIUM, CHROMIUM_ARGS, Loaded

VIEWPORT = {"width": 1400, "height": 900}


@pytest.fixture(scope="module")
def browser(e2e_missing: Callable[[str], Any]) -> Iterator[Any]:
    """One headless Chromium per test module (skips, or fails under FLOW_XRAY_E2E=1, if absent).

    Closed after the module: Playwright's sync API keeps an event loop running in this
    thread while it is open, and tests collected after these ones call ``asyncio.run``.
    """
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        e2e_missing("playwright is not installed")
    if not os.access(CHROMIUM, os.X_OK):
        e2e_missing(f"chromium not found at {CHROMIUM}")
    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield instance
        instance.close()


@pytest.fixture
def open_page(browser: Any, tmp_path: Path) -> Iterator[Callable[..., Loaded]]:
    """Return ``open(html, name, timeout_ms) -> Loaded``: write, load, wait until ready."""
    contexts: list[Any] = []

    def open_html(html: str, name: str = "page", timeout_ms: float = 30000) -> Loaded:
        path = tmp_path / f"{name}.html"
        path.write_text(html, encoding="utf-8")
        context = browser.new_context(viewport=VIEWPORT)
        contexts.append(context)
        page = context.new_page()
        loaded = Loaded(page)
        page.on(
            "console",
            lambda msg: loaded.console_errors.append(msg.text) if msg.type == "error" else None,
        )
        page.on("pageerror", lambda exc: loaded.console_errors.append(str(exc)))
        page.on("request", lambda request: loaded.requests.append(request.url))

        def on_dialog(dialog: Any) -> None:
            loaded.dialogs.append(dialog.message)
            dialog.dismiss()

        page.on("dialog", on_dialog)
        page.goto(path.as_uri())
        page.wait_for_selector("body[data-ready='1']", state="attached", timeout=timeout_ms)
        return loaded

    yield open_html
    for context in contexts:
        context.close()
