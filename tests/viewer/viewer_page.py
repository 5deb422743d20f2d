"""The record of an opened viewer page, shared by the viewer tests and their fixtures.

Kept out of ``conftest.py``: test modules importing ``conftest`` by name get
whichever ``conftest`` module was imported first when several test folders
are collected together (``pytest tests/autodiff tests/viewer``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
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

    def screenshot(self, readme: Path, scratch: Path) -> bytes:
        """Screenshot the page (the viewport) and return the PNG, checked to be 1400x900.

        Written to ``readme`` (a README picture) when FLOW_XRAY_UPDATE_SCREENSHOT=1,
        else to ``scratch``.
        """
        target = readme if os.environ.get("FLOW_XRAY_UPDATE_SCREENSHOT") == "1" else scratch
        target.parent.mkdir(parents=True, exist_ok=True)
        self.page.screenshot(path=str(target))
        data = target.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n"
        size = (int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big"))
        assert size == (1400, 900)
        return data
