"""The record of an opened viewer page, shared by the viewer tests and their fixtures.

Kept out of ``conftest.py``: test modules importing ``conftest`` by name get
whichever ``conftest`` module was imported first when several test folders
are collected together (``pytest tests/autodiff tests/render``).
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


# Visible text boxes, clipped to every scrolling / clipping ancestor, for the 800 x 600
# overlap checks; drawing text under the graph's toolbar buttons (opaque, on top of
# the drawing) is hidden by them, so not counted.
LABELS_JS = """() => {
  const out = [];
  const tools = [...document.querySelectorAll('.fx-graph-tools .fx-btn')]
    .map(b => b.getBoundingClientRect());
  const under = (r) => tools.some(b =>
    r.left < b.right && b.left < r.right && r.top < b.bottom && b.top < r.bottom);
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let t = walker.nextNode(); t; t = walker.nextNode()) {
    if (!t.textContent.trim()) continue;
    const el = t.parentElement;
    if (el.closest('script, noscript, title')) continue;
    const range = document.createRange();
    range.selectNodeContents(t);
    const r = range.getBoundingClientRect();
    if (el.closest('svg') && under(r)) continue;
    let box = {x0: r.left, y0: r.top, x1: r.right, y1: r.bottom};
    for (let a = el; a && box; a = a.parentElement) {
      const s = getComputedStyle(a);
      if (s.visibility === 'hidden' || s.display === 'none' || s.opacity === '0') {
        box = null; break;
      }
      const clips = s.overflow !== 'visible' || s.overflowX !== 'visible' || a.tagName === 'svg';
      if (!clips) continue;
      const c = a.getBoundingClientRect();
      box = {x0: Math.max(box.x0, c.left), y0: Math.max(box.y0, c.top),
             x1: Math.min(box.x1, c.right), y1: Math.min(box.y1, c.bottom)};
      if (box.x1 - box.x0 < 1 || box.y1 - box.y0 < 1) box = null;
    }
    if (box && box.x1 > 0 && box.y1 > 0 && box.x0 < innerWidth && box.y0 < innerHeight) {
      out.push(Object.assign(box, {text: t.textContent.trim().slice(0, 40)}));
    }
  }
  return out;
}"""


def overlapping(labels: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """Pairs of text boxes that cover each other by more than a pixel each way."""
    pairs = []
    for i, a in enumerate(labels):
        for b in labels[i + 1 :]:
            dx = min(a["x1"], b["x1"]) - max(a["x0"], b["x0"])
            dy = min(a["y1"], b["y1"]) - max(a["y0"], b["y0"])
            if dx > 1 and dy > 1:
                pairs.append((a["text"], b["text"]))
    return pairs
