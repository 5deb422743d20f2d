"""The record of an opened viewer page, shared by the viewer tests and their fixtures.

Kept out of ``conftest.py``: test modules importing ``conftest`` by name get
whichever ``conftest`` module was imported first when several test folders
are collected together (``pytest tests/autodiff tests/viewer``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# Debian's Chromium; these flags keep it headless and off the (closed) network.
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@dataclass
class Loaded:
    """An opened viewer page and everything it did."""

    page: Any
    console_errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)

    def visible_rows(self) -> list[str]:
        """Names in the tree rows currently rendered, top to bottom."""
        return list(
            self.page.evaluate(
                """() => [...document.querySelectorAll('.fx-trace-row')]
                .filter(r => r.style.display !== 'none' && r._fxItem !== undefined)
                .sort((a, b) => a._fxItem - b._fxItem === 0 ? 0 :
                    new DOMMatrix(getComputedStyle(a).transform).m42 -
                    new DOMMatrix(getComputedStyle(b).transform).m42)
                .map(r => r.querySelector('.fx-name').textContent)"""
            )
        )

    def selected_name(self) -> str:
        """The name shown at the top of the detail panel."""
        return str(self.page.locator(".fx-detail-name").text_content())
