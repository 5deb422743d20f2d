"""The offline HTML pages: self-contained, CSP-locked, data only as inert JSON text."""

from __future__ import annotations

import json
import re
from importlib import resources
from typing import Any

import pytest

from flow_xray import TraceResult
from flow_xray.render import Graph, GraphNode, dot_viewer_html, graph_to_html
from flow_xray.render.page import SCRIPT_FILES, STYLE_FILE, csp_hash, embed_json
from flow_xray.render.payload import read_page
from flow_xray.render.trace_page import trace_to_html

HOSTILE = "</script><img src=x onerror=alert(1)>"


def hostile_trace() -> dict[str, Any]:
    return {
        "version": 1,
        "nodes": [
            {
                "name": HOSTILE,
                "inputs": {HOSTILE: "\u2028 & \u2029"},
                "output": HOSTILE,
                "latency_ms": 1.0,
                "start_ms": 0.0,
                "children": [],
            }
        ],
    }


def payload(page: str) -> Any:
    return read_page(page)


def test_csp_allows_exactly_the_inline_script_and_style() -> None:
    """The CSP forbids network access and names the sha256 of the inline script and style."""
    page = trace_to_html(hostile_trace())
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]*)"', page)
    script = re.search(r"<script>(.*?)</script>", page, re.S)
    style = re.search(r"<style>(.*?)</style>", page, re.S)
    assert policy and script and style
    assert policy.group(1).split("; ") == [
        "default-src 'none'",
        f"script-src {csp_hash(script.group(1))}",
        f"style-src {csp_hash(style.group(1))}",
        "img-src data:",
        "connect-src 'none'",
        "font-src 'none'",
        "base-uri 'none'",
        "form-action 'none'",
    ]


def test_hostile_text_never_appears_as_markup() -> None:
    """Markup in trace data is escaped inside the JSON block and parses back unchanged."""
    page = trace_to_html(hostile_trace())
    assert HOSTILE not in page and "<img" not in page
    node = payload(page)["nodes"][0]
    assert (node["name"], node["output"], node["inputs"]) == (
        HOSTILE,
        HOSTILE,
        {HOSTILE: "\u2028 & \u2029"},
    )


def test_embed_json_escapes_separators_and_ampersand() -> None:
    """``<``, ``>``, ``&``, U+2028 and U+2029 are written as \\u escapes."""
    assert embed_json(["<>&\u2028\u2029"]) == '["\\u003c\\u003e\\u0026\\u2028\\u2029"]'


def test_embed_json_writes_non_finite_floats_as_text() -> None:
    """NaN and infinity (not valid JSON) become strings instead of breaking the page."""
    assert json.loads(embed_json({"a": [float("nan"), float("inf"), 1.5]})) == {
        "a": ["nan", "inf", 1.5]
    }


def test_embed_json_turns_non_json_keys_into_text() -> None:
    """A mapping key JSON cannot hold (a tuple) is written as its text, not a TypeError."""
    assert json.loads(embed_json({(1, 2): "pair"})) == {"(1, 2)": "pair"}


def test_embed_json_rejects_circular_data_instead_of_hanging() -> None:
    """Data that contains itself raises ValueError at once (it used to loop forever)."""
    loop: list[Any] = [float("nan")]
    loop.append(loop)
    with pytest.raises(ValueError, match="Circular"):
        embed_json(loop)


def test_page_references_nothing_outside_itself() -> None:
    """No src= or href= except data: URLs: no CDN, no external font, no file."""
    page = trace_to_html(hostile_trace())
    assert re.findall(r'(?:src|href)="([^"]*)"', page) == ["data:,"]
    assert "@import" not in page and "url(http" not in page


def test_title_is_escaped() -> None:
    """The page title is HTML-escaped in <title> and passed as JSON text to the app."""
    page = graph_to_html(Graph((GraphNode("a", "a"),), ()), title="<b>&")
    assert "<title>&lt;b&gt;&amp;</title>" in page
    assert payload(page)["title"] == "<b>&"


def test_dot_viewer_draws_understood_dot_and_shows_the_rest_as_text() -> None:
    """Parsable DOT becomes a graph payload; anything else a text payload with the DOT."""
    drawn = payload(dot_viewer_html("digraph { a -> b }"))
    text = payload(dot_viewer_html("graph { a -- b }"))
    assert ([n["id"] for n in drawn["nodes"]], drawn["mode"]) == (["a", "b"], "graph")
    assert (text["mode"], text["text"]) == ("text", "graph { a -- b }")


def test_assets_are_readable_hand_written_files() -> None:
    """Every asset line is under 2,000 characters (no minified code)."""
    folder = resources.files("flow_xray.render").joinpath("static")
    for name in (*SCRIPT_FILES, STYLE_FILE):
        lines = folder.joinpath(name).read_text("utf-8").splitlines()
        assert max(len(line) for line in lines) < 2000, name


def selectable_trace() -> dict[str, Any]:
    """A failure raised in ``b`` (the overview's first row) and a call ``c`` to select."""

    def call(name: str, span: str, error: str | None = None) -> dict[str, Any]:
        return {"name": name, "span_id": span, "error": error, "status": "error" if error else "ok"}

    return {
        "version": 1,
        "nodes": [
            {**call("a", "a1"), "children": [call("b", "b1", "ValueError: x"), call("c", "c1")]}
        ],
    }


def test_select_names_the_call_the_page_opens_on() -> None:
    """``select`` (a span id, or an id) becomes the overview's first row; the rest is kept."""
    plain = payload(trace_to_html(selectable_trace()))
    chosen = payload(trace_to_html(selectable_trace(), select="c1"))
    assert plain["nodes"][plain["overview"]["first"]]["name"] == "b"
    assert chosen["nodes"][chosen["overview"]["first"]]["name"] == "c"
    assert {**chosen["overview"], "first": plain["overview"]["first"]} == plain["overview"]


def test_an_unknown_selection_changes_nothing() -> None:
    """A span id the trace does not have leaves the overview's own choice."""
    assert payload(trace_to_html(selectable_trace(), select="nope")) == payload(
        trace_to_html(selectable_trace())
    )


def test_to_html_selects_a_node_of_the_trace() -> None:
    """``TraceResult.to_html(select=node)`` opens on that node (by its span id)."""
    result = TraceResult.from_dict(selectable_trace())
    chosen = payload(result.to_html(select=result.find("c")))
    assert chosen["nodes"][chosen["overview"]["first"]]["name"] == "c"
