"""The diff viewer: two runs aligned call by call in one offline HTML page.

The page follows the trace viewer's safety rules (see `flow_xray.render.html`):
one file, no network (a Content-Security-Policy allowing only its own inline
script and style, by hash), data only as escaped JSON read with ``JSON.parse``
and shown with ``textContent``. It reuses the trace viewer's scripts (DOM helpers,
number formats, the detail panel; everything but its start-up) and adds
``diff_view.js`` (rows and the side-by-side detail) and ``diff_app.js``
(header, filters, keyboard), styled by ``viewer.css`` plus ``diff_view.css``.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from functools import lru_cache
from importlib import resources
from typing import Any

from flow_xray.render.html import SCRIPT_FILES, csp_hash, embed_json
from flow_xray.render.trace_graph import SLOW_SHARE, flatten_trace

# The trace viewer's scripts (so the detail panel has everything it uses), without its
# start-up, then the diff's own; `diff_app.js` starts the page.
DIFF_SCRIPT_FILES = (
    *(name for name in SCRIPT_FILES if name != "main.js"),
    "diff_view.js",
    "diff_app.js",
)
DIFF_STYLE_FILES = ("viewer.css", "diff_view.css")


def diff_to_html(data: Mapping[str, Any], title: str = "flow-xray diff") -> str:
    """Return the diff viewer page for a diff's JSON form (``TraceDiff.to_dict()``).

    Example::

        page = diff_to_html(TraceResult.load("a.json").diff(TraceResult.load("b.json")).to_dict())
    """
    payload: dict[str, Any] = {
        "mode": "diff",
        "title": title,
        "summary": data.get("summary"),
        "equal": data.get("equal"),
        "counts": data.get("counts"),
        "slow_share": SLOW_SHARE,
        "before": _side(data.get("before")),
        "after": _side(data.get("after")),
        "calls": data.get("calls") if isinstance(data.get("calls"), list) else [],
    }
    return _page(title, payload)


def _side(side: Any) -> dict[str, Any]:
    """One run: its label, totals and nodes flattened in pre-order (as the trace viewer has
    them), so the rows' ``a`` / ``b`` indices point straight into the list."""
    side = side if isinstance(side, Mapping) else {}
    totals = side.get("totals")
    trace = {"nodes": side.get("nodes") or [], "totals": totals}
    return {
        "label": str(side.get("label", "")),
        "totals": dict(totals) if isinstance(totals, Mapping) else None,
        "nodes": flatten_trace(trace),
    }


@lru_cache(maxsize=1)
def diff_script() -> str:
    """The diff page's script: `DIFF_SCRIPT_FILES` inside one strict-mode function."""
    body = "\n".join(_asset(name) for name in DIFF_SCRIPT_FILES)
    if "</script" in body.lower():  # would end the inline block early
        raise RuntimeError("a viewer script contains '</script'")
    return (
        f'(function () {{\n"use strict";\nconst FX = {{}};\n{body}\nFX.diffApp.start();\n}}());\n'
    )


@lru_cache(maxsize=1)
def diff_style() -> str:
    """The diff page's style sheet: the trace viewer's, then the diff's own rules."""
    return "\n".join(_asset(name) for name in DIFF_STYLE_FILES)


def _page(title: str, payload: Mapping[str, Any]) -> str:
    script, style = diff_script(), diff_style()
    policy = "; ".join(
        [
            "default-src 'none'",
            f"script-src {csp_hash(script)}",
            f"style-src {csp_hash(style)}",
            "img-src data:",
            "connect-src 'none'",
            "font-src 'none'",
            "base-uri 'none'",
            "form-action 'none'",
        ]
    )
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{policy}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<meta name="color-scheme" content="light dark">\n'
        '<link rel="icon" href="data:,">\n'
        f"<title>{html.escape(title)}</title>\n"
        f"<style>{style}</style>\n"
        "</head>\n<body>\n"
        "<noscript>This flow-xray viewer needs JavaScript.</noscript>\n"
        f'<script type="application/json" id="fx-data">{embed_json(payload)}</script>\n'
        f"<script>{script}</script>\n"
        "</body>\n</html>\n"
    )


def _asset(name: str) -> str:
    return resources.files("flow_xray.render").joinpath("static").joinpath(name).read_text("utf-8")
