"""The one HTML page shell: every viewer page (trace, diff, graph) is built by `page`.

Every page is one file with no network access at all: the app script and
style sheet (hand-written, shipped in ``static/``) are inlined, and a
Content-Security-Policy meta tag allows exactly those two blocks by their
sha256 hash, ``img-src data:`` and nothing else. Data enters the page only as
JSON text inside ``<script type="application/json">`` with ``<``, ``>``,
``&``, U+2028 and U+2029 escaped (`embed_json`), which the app reads with
``JSON.parse`` and puts on screen with ``textContent`` -- so a name such as
``</script><img src=x onerror=alert(1)>`` is shown literally and runs nothing.
The trace and graph pages run `app_script`; the diff page runs `diff_script`
(the trace viewer's scripts without their start-up, then its own).
"""

from __future__ import annotations

import base64
import hashlib
import html
from collections.abc import Mapping
from functools import lru_cache
from importlib import resources
from typing import Any

from flow_xray.render.payload import dumps

# Concatenated in this order into one script; later files use earlier ones. Each file
# publishes one namespace on the page's ``FX`` object (named on its first line, e.g.
# ``// util.js -> FX.util``) and nothing else; tests/render/js checks that with Node.
SCRIPT_FILES = (
    "util.js",
    "payload.js",
    "layout.js",
    "graph_view.js",
    "graph_groups.js",
    "rows.js",
    "detail.js",
    "chat.js",
    "ruler.js",
    "panes.js",
    "timeline.js",
    "search.js",
    "state.js",
    "help.js",
    "trace_summary.js",
    "overview.js",
    "trace_actions.js",
    "trace_app.js",
    "graph_app.js",
    "static_context.js",
    "main.js",
)
STYLE_FILE = "viewer.css"
OVERVIEW_STYLE = "overview.css"  # the trace viewer's overview pane, row facts, copy buttons
STATIC_CONTEXT_STYLE = "static_context.css"  # ghost nodes and the static-context section
GRAPH_STYLE = "graph_page.css"  # the graph page's folded boxes, gradient marks, fold buttons
# The diff page: the trace viewer's scripts (so the detail panel has everything it uses),
# without its start-up, then the diff's own; `diff_app.js` starts the page.
DIFF_SCRIPT_FILES = (
    *(name for name in SCRIPT_FILES if name != "main.js"),
    "diff_view.js",
    "diff_app.js",
)
DIFF_STYLE_FILES = ("viewer.css", "diff_view.css")
# str.replace per character, not str.translate: it is ~50x faster on a 50 MB page.
_JSON_ESCAPES = (
    ("<", "\\u003c"),
    (">", "\\u003e"),
    ("&", "\\u0026"),
    ("\u2028", "\\u2028"),
    ("\u2029", "\\u2029"),
)


def page(title: str, payload: Mapping[str, Any], script: str, style: str) -> str:
    """The page: ``title``, ``payload`` embedded as inert JSON (`embed_json`), ``script``
    and ``style`` inlined and allowed by their hashes, nothing else allowed.

    Example::

        html = page("notes", {"mode": "text", "title": "notes", "text": dot},
                    app_script(), app_style())
    """
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


def embed_json(value: Any) -> str:
    """Return ``value`` as JSON that is inert inside a ``<script>`` element.

    Non-finite floats become strings, mapping keys that JSON cannot hold (a
    tuple, say) their ``str`` and other non-JSON values their ``repr``, so any
    trace renders.

    Raises:
        ValueError: ``value`` contains itself (a circular reference).
    """
    text = dumps(value)
    for char, escape in _JSON_ESCAPES:
        text = text.replace(char, escape)
    return text


def csp_hash(text: str) -> str:
    """Return the CSP source expression (``'sha256-...'``) allowing an inline block."""
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return f"'sha256-{base64.b64encode(digest).decode('ascii')}'"


@lru_cache(maxsize=1)
def app_script() -> str:
    """The viewer's script: every file of `SCRIPT_FILES` inside one strict-mode function."""
    return _bundle(SCRIPT_FILES, "FX.main();")


@lru_cache(maxsize=1)
def app_style() -> str:
    """The viewer's style sheet."""
    styles = (STYLE_FILE, OVERVIEW_STYLE, STATIC_CONTEXT_STYLE, GRAPH_STYLE)
    return "\n".join(_asset(name) for name in styles)


@lru_cache(maxsize=1)
def diff_script() -> str:
    """The diff page's script: `DIFF_SCRIPT_FILES` inside one strict-mode function."""
    return _bundle(DIFF_SCRIPT_FILES, "FX.diffApp.start();")


@lru_cache(maxsize=1)
def diff_style() -> str:
    """The diff page's style sheet: the trace viewer's, then the diff's own rules."""
    return "\n".join(_asset(name) for name in DIFF_STYLE_FILES)


def _bundle(names: tuple[str, ...], start: str) -> str:
    body = "\n".join(_asset(name) for name in names)
    if "</script" in body.lower():  # would end the inline block early
        raise RuntimeError("a viewer script contains '</script'")
    return f'(function () {{\n"use strict";\nconst FX = {{}};\n{body}\n{start}\n}}());\n'


def _asset(name: str) -> str:
    return resources.files("flow_xray.render").joinpath("static").joinpath(name).read_text("utf-8")
