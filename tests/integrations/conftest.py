"""Fixtures of the integration tests: a notebook executed by a real kernel, and Chromium.

The browser is Debian's Chromium driven by Playwright (as in ``tests/render/browser``),
every request outside the page (``file:``, ``blob:``, ``data:``, ``about:``)
refused and recorded, since the pages must work offline.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from chromium_page import CHROMIUM, CHROMIUM_ARGS, LOCAL, Opened
from notebook_sample import execute_notebook


@pytest.fixture(scope="session")
def executed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    """The sample notebook after a real kernel ran it: its folder and the notebook."""
    pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    folder = tmp_path_factory.mktemp("notebook")
    return folder, execute_notebook(folder)


@pytest.fixture(scope="module")
def browser(e2e_missing: Callable[[str], Any]) -> Iterator[Any]:
    """One headless Chromium per module (skips, or fails under FLOW_XRAY_E2E=1, if absent).

    Not for the session: Playwright's sync API keeps an event loop running in this
    thread while it is started, and later tests (``asyncio.run``, another folder's
    browser) must not find one.
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
def open_file(browser: Any) -> Iterator[Callable[[Path], Opened]]:
    """Return ``open(path) -> Opened``: load a local file in a fresh 1400x900 context."""
    contexts: list[Any] = []

    def open_path(path: Path) -> Opened:
        context = browser.new_context(
            viewport={"width": 1400, "height": 900}, accept_downloads=True
        )
        contexts.append(context)
        page = context.new_page()
        opened = Opened(page)

        def route(request_route: Any) -> None:
            request = request_route.request
            if request.url.startswith(LOCAL):
                request_route.continue_()
            else:
                opened.refused.append((request.url, request.frame.parent_frame is None))
                request_route.abort()

        def console(message: Any) -> None:
            if message.type == "error":
                from_page = message.location.get("url", "") != "about:srcdoc"
                opened.errors.append((message.text, from_page))

        context.route("**/*", route)
        page.on("console", console)
        page.on("pageerror", lambda exc: opened.errors.append((str(exc), True)))
        page.goto(path.as_uri())
        return opened

    yield open_path
    for context in contexts:
        context.close()
