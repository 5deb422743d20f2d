"""Self-contained, offline HTML pages: the trace viewer and the graph viewer.

Every page is one file with no network access at all: the app script and
style sheet (hand-written, shipped in ``static/``) are inlined, and a
Content-Security-Policy meta tag allows exactly those two blocks by their
sha256 hash, ``img-src data:`` and nothing else. Data enters the page only as
JSON text inside ``<script type="application/json">`` with ``<``, ``>``,
``&``, U+2028 and U+2029 escaped, which the app reads with ``JSON.parse`` and
puts on screen with ``textContent`` -- so a name such as
``</script><img src=x onerror=alert(1)>`` is shown literally and runs nothing.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
from collections.abc import Mapping, Sequence
from functools import lru_cache
from importlib import resources
from typing import Any

from flow_xray.jsontext import JsonText
from flow_xray.render.graph import Graph, Step, parse_dot
from flow_xray.render.overview import overview
from flow_xray.render.payload import dumps, pack
from flow_xray.render.trace_graph import (
    SLOW_SHARE,
    Absent,
    Columns,
    finish_columns,
    trace_columns,
)

# Concatenated in this order into one script; later files use earlier ones. Each file
# publishes one namespace on the page's ``FX`` object (named on its first line, e.g.
# ``// util.js -> FX.util``) and nothing else; tests/viewer/js checks that with Node.
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
# str.replace per character, not str.translate: it is ~50x faster on a 50 MB page.
_JSON_ESCAPES = (
    ("<", "\\u003c"),
    (">", "\\u003e"),
    ("&", "\\u0026"),
    ("\u2028", "\\u2028"),
    ("\u2029", "\\u2029"),
)


def trace_to_html(
    data: Mapping[str, Any], title: str = "flow-xray trace", select: str | None = None
) -> str:
    """Return the offline viewer page for a trace in its JSON form (``TraceResult.to_dict()``).

    ``select`` names the call the page opens on (see `columns_to_html`).

    Example::

        with open("run_trace.json") as fh:
            page = trace_to_html(json.load(fh))
    """
    columns, absent = trace_columns(data)
    static = data.get("static")  # from `StaticContext.annotate`
    return columns_to_html(
        columns,
        data.get("totals"),
        title,
        absent=absent,
        static=static if isinstance(static, Mapping) else None,
        select=select,
    )


def columns_to_html(
    columns: Columns,
    totals: Mapping[str, Any] | None,
    title: str = "flow-xray trace",
    *,
    absent: Absent | None = None,
    static: Mapping[str, Any] | None = None,
    select: str | None = None,
) -> str:
    """Return the viewer page for a trace given as columns (every call in pre-order, one list
    per field plus ``parent``; ``absent`` lists per field the calls without it).

    ``select`` (a call's ``span_id``, or its ``id`` when it has none) is the call the
    page opens on instead of the overview's choice; a call named in the URL fragment
    still wins, and an unknown one changes nothing.

    This is what `TraceResult.to_html` hands over (`flow_xray.tree.flat.trace_columns`):
    no dict per call, so a million-call trace renders in seconds. The columns are
    completed in place (``self_ms``, ``view_status``, ``chat``).
    """
    absent = dict(absent or {})
    shape = finish_columns(columns, totals)
    _add_chat(columns, absent)
    summary = overview(columns, shape)
    row = _row_of(columns, select) if select else -1
    if row >= 0:
        summary["first"] = row  # the row the page opens on (trace_app.js restoreState)
    head: dict[str, Any] = {
        "mode": "trace",
        "title": title,
        "totals": dict(totals) if isinstance(totals, Mapping) else None,
        "slow_share": SLOW_SHARE,
        "overview": summary,
    }
    if static is not None:
        head["static"] = static
    return _page(title, pack(head, columns, absent))


def graph_to_html(
    graph: Graph,
    title: str = "flow-xray graph",
    steps: Sequence[Step] = (),
    source: str | None = None,
) -> str:
    """Return the offline viewer page for a `Graph`, with a stepping view when ``steps`` is given.

    The stepping view has a slider, previous/next buttons and arrow / j k keys;
    each frame highlights its ``active`` node and shows its ``labels``. The
    ``source`` text (the DOT the graph was read from) is kept in the page,
    shown on demand under the graph with a copy button.
    """
    payload: dict[str, Any] = {
        "mode": "graph",
        "title": title,
        "rankdir": graph.rankdir,
        "nodes": [
            {"id": n.id, "label": n.label, "status": n.status, "detail": dict(n.detail)}
            for n in graph.nodes
        ],
        "edges": [{"source": e.source, "target": e.target, "label": e.label} for e in graph.edges],
        "steps": [
            {"active": s.active, "caption": s.caption, "labels": dict(s.labels)} for s in steps
        ],
    }
    if source is not None:
        payload["source"] = source
    return _page(title, payload)


def dot_viewer_html(dot: str, title: str = "flow-xray graph") -> str:
    """Return the offline viewer page for DOT text: drawn when `parse_dot` understands it
    (the DOT text kept in the page, viewable and copyable), otherwise shown as text."""
    graph = parse_dot(dot)
    if graph is not None:
        return graph_to_html(graph, title=title, source=dot)
    return _page(title, {"mode": "text", "title": title, "text": dot})


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
    parts = [_asset(name) for name in SCRIPT_FILES]
    body = "\n".join(parts)
    if "</script" in body.lower():  # would end the inline block early
        raise RuntimeError("a viewer script contains '</script'")
    return f'(function () {{\n"use strict";\nconst FX = {{}};\n{body}\nFX.main();\n}}());\n'


@lru_cache(maxsize=1)
def app_style() -> str:
    """The viewer's style sheet."""
    styles = (STYLE_FILE, OVERVIEW_STYLE, STATIC_CONTEXT_STYLE, GRAPH_STYLE)
    return "\n".join(_asset(name) for name in styles)


def _page(title: str, payload: Mapping[str, Any]) -> str:
    script, style = app_script(), app_style()
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


def _add_chat(columns: Columns, absent: Absent) -> None:
    """Give each LLM call holding chat messages its conversation (``chat``, see `chat_view`)."""
    from flow_xray.llm.messages import chat_view  # here: DOT and graph pages never need llm/

    kinds = columns.get("kind") or ()
    llm = [i for i, kind in enumerate(kinds) if kind == "llm"]
    if not llm:
        return
    inputs, outputs, attributes = (
        columns.get(key) or [None] * len(kinds) for key in ("inputs", "output", "attributes")
    )
    chats: list[Any] = [None] * len(kinds)
    for i in llm:
        chats[i] = chat_view(_parsed(inputs[i]), _parsed(outputs[i]), _parsed(attributes[i]))
    if any(chat is not None for chat in chats):
        columns["chat"] = chats
        absent["chat"] = [i for i, chat in enumerate(chats) if chat is None]


def _row_of(columns: Columns, call: str) -> int:
    """The row of the call whose ``span_id`` (else ``id``) is ``call``; -1 when none is."""
    for key in ("span_id", "id"):
        values = columns.get(key) or ()
        for row, value in enumerate(values):
            if value == call:
                return row
    return -1


def _parsed(value: Any) -> Any:
    return json.loads(value) if type(value) is JsonText else value


def _asset(name: str) -> str:
    return resources.files("flow_xray.render").joinpath("static").joinpath(name).read_text("utf-8")
