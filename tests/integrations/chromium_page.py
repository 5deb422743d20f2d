"""The record of a page opened in Chromium, shared by the browser tests and their fixtures.

Kept out of ``conftest.py`` so test modules can import it by name.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

# Debian's Chromium, headless; every request outside these schemes is refused.
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"]
LOCAL = ("file:", "blob:", "data:", "about:")


class Opened:
    """A page opened from a file, with what it tried to reach and what it logged.

    ``refused`` and ``errors`` pair each request / error with whether it came from
    the page itself (True) or from a frame inside it (False).
    """

    def __init__(self, page: Any) -> None:
        self.page = page
        self.refused: list[tuple[str, bool]] = []
        self.errors: list[tuple[str, bool]] = []

    def screenshot(self, readme: Path, scratch: Path) -> bytes:
        """Screenshot the viewport; to ``readme`` (a README picture) when
        FLOW_XRAY_UPDATE_SCREENSHOT=1, else to ``scratch``. Returns the PNG."""
        target = readme if os.environ.get("FLOW_XRAY_UPDATE_SCREENSHOT") == "1" else scratch
        target.parent.mkdir(parents=True, exist_ok=True)
        self.page.screenshot(path=str(target))
        return target.read_bytes()
