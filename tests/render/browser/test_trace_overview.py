"""The trace viewer finds things, in a real browser: the overview, facts on rows, search
beyond names, state in the URL, copy and download -- on a real traced agent run."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from agent_run import ROOT_CAUSE, SLOWEST, agent_run_trace
from viewer_page import Loaded
from viewer_traces import agent_trace, node

from flow_xray import TraceResult
from flow_xray.analysis.overview import overview
from flow_xray.render.trace_graph import flatten_trace
from flow_xray.render.trace_page import trace_to_html

pytestmark = pytest.mark.e2e
OpenPage = Callable[..., Loaded]


@pytest.fixture(scope="module")
def run_data() -> dict[str, Any]:
    return agent_run_trace()


@pytest.fixture
def run(open_page: OpenPage, run_data: dict[str, Any]) -> Loaded:
    return open_page(trace_to_html(run_data, title="research agent"), "run")


def _costliest(data: dict[str, Any]) -> dict[str, Any]:
    rows = flatten_trace(data)
    return rows[overview(rows)["llm"][0]]


def detail(loaded: Loaded) -> str:
    return str(loaded.page.locator(".fx-detail").inner_text())


def test_the_page_opens_on_the_root_cause(run: Loaded) -> None:
    """Not on the handled 429 (retried) but where the run's failure was raised."""
    assert run.selected_name() == ROOT_CAUSE
    assert "raised here, not handled" in detail(run)
    assert "could not convert string to float" in detail(run)
    first = run.page.locator(".fx-ov-section[data-section=errors] .fx-ov-row")
    assert first.nth(0).locator(".fx-ov-name").inner_text() == "\u2716 " + ROOT_CAUSE
    assert "passed up through 4 calls" in first.nth(0).inner_text()
    assert "caught by with_retry" in first.nth(1).inner_text()
    assert run.console_errors == []


def test_ten_second_check(run: Loaded, run_data: dict[str, Any]) -> None:
    """From the first screen: the root-cause error (0 interactions), the slowest call by
    self time (1 click) and the costliest LLM call (1 click)."""
    assert run.selected_name() == ROOT_CAUSE
    run.page.locator(".fx-ov-section[data-section=slow] .fx-ov-row").first.click()
    assert run.selected_name() == SLOWEST
    assert "Self time" in detail(run)
    run.page.reload()
    run.page.wait_for_selector("body[data-ready='1']", state="attached")
    run.page.goto(run.page.url.split("#")[0])
    run.page.wait_for_selector("body[data-ready='1']", state="attached")
    run.page.locator(".fx-ov-section[data-section=llm] .fx-ov-row").first.click()
    costliest = _costliest(run_data)
    assert run.page.locator(".fx-detail .fx-path").inner_text() == "research_agent"
    text = detail(run)
    assert "gpt-4o" in text and f"{costliest['meta']['total_tokens']:,} total" in text


def test_header_chips_go_there(run: Loaded, run_data: dict[str, Any]) -> None:
    """Cost selects the costliest LLM call, wall time the slowest by self time, errors the
    root cause; each shows its overview section."""
    run.page.locator(".fx-chip", has_text="est. cost").click()
    assert run.page.locator(".fx-ov-section[data-section=llm]").is_visible()
    assert f"{_costliest(run_data)['meta']['total_tokens']:,} total" in detail(run)
    run.page.locator(".fx-chip", has_text="wall time").click()
    assert run.selected_name() == SLOWEST
    run.page.locator(".fx-chip", has_text="unhandled error").click()
    assert run.selected_name() == ROOT_CAUSE
    run.page.locator(".fx-chip", has_text="tokens").click()
    models = run.page.locator(".fx-ov-section[data-section=models]").inner_text()
    assert "gpt-4o-mini" in models and "25 calls" in models


def test_usage_per_model_adds_up_to_the_header(run: Loaded, run_data: dict[str, Any]) -> None:
    """The per-model figures are the accounting's: they sum to the header's totals."""
    rows = flatten_trace(run_data)
    models = overview(rows)["models"]
    assert sum(m["total_tokens"] for m in models) == run_data["totals"]["total_tokens"]
    assert sum(m["calls"] for m in models) == 30
    cost = sum(m["cost_usd"] for m in models)
    assert cost == pytest.approx(run_data["totals"]["cost_usd"])
    assert f"${cost:.2g}" in run.page.locator(".fx-chips").inner_text()


def test_critical_path_is_a_chain_outlined_in_graph_and_waterfall(run: Loaded) -> None:
    """The overview lists the chain root first, down to the failing cell the run waited for
    last; its calls are outlined; the slowest call by self time ended earlier: off the chain."""
    steps = run.page.locator(".fx-ov-section[data-section=critical] .fx-ov-name").all_inner_texts()
    assert [s.removeprefix("\u21b3 ") for s in steps] == [
        "research_agent",
        "write_report",
        "format_section",
        "render_table",
        ROOT_CAUSE,
    ]
    run.page.locator(".fx-ov-section[data-section=critical] .fx-ov-row").nth(3).click()
    assert run.selected_name() == "render_table"
    row = run.page.locator(".fx-trace-row.selected")
    assert "crit" in str(row.locator(".fx-bar").get_attribute("class"))
    assert run.page.locator(".fx-node.selected.fx-crit").count() == 1
    run.page.locator(".fx-ov-section[data-section=slow] .fx-ov-row").first.click()
    bars = run.page.locator(".fx-trace-row.selected .fx-bar").get_attribute("class")
    assert run.selected_name() == SLOWEST and "crit" not in str(bars)


def test_rows_carry_model_tokens_cost_self_time_and_error_icons(run: Loaded) -> None:
    run.page.locator(".fx-ov-section[data-section=llm] .fx-ov-row").first.click()
    row = run.page.locator(".fx-trace-row.selected")
    assert row.locator(".fx-kindtag").inner_text() == "llm"
    assert row.locator(".fx-fact-model").inner_text() == "gpt-4o"
    assert row.locator(".fx-fact-tokens").inner_text().startswith("1,")
    assert row.locator(".fx-fact-tokens").inner_text().endswith(" tok")
    assert row.locator(".fx-fact-cost").inner_text().startswith("$0.00")
    run.page.locator(".fx-ov-section[data-section=errors] .fx-ov-row").first.click()
    assert run.page.locator(".fx-trace-row.selected .fx-erricon").inner_text() == "\u2716"
    run.page.locator(".fx-ov-section[data-section=errors] .fx-ov-row").nth(1).click()
    assert run.page.locator(".fx-trace-row.selected .fx-erricon").inner_text() == "\u21ba"
    run.page.locator(".fx-ov-section[data-section=errors] .fx-ov-row").first.click()
    run.page.keyboard.press("ArrowLeft")  # to its caller, render_table: failed, passed up
    assert run.selected_name() == "render_table"
    row = run.page.locator(".fx-trace-row.selected")
    assert row.locator(".fx-erricon").inner_text() == "\u2191"  # passed through
    assert row.locator(".fx-lat-self").inner_text().endswith("ms")


def test_expand_all_and_collapse_all(run: Loaded) -> None:
    run.page.locator(".fx-tree-tool", has_text="Collapse all").click()
    assert run.visible_rows() == ["research_agent"]
    run.page.locator(".fx-tree-tool", has_text="Expand all").click()
    run.page.locator(".fx-rows").evaluate("el => el.scrollTop = 1e6")
    assert run.page.locator(".fx-rows-spacer").evaluate("el => el.offsetHeight") == 91 * 26


def _text(row: dict[str, Any]) -> str:
    parts = [
        row.get(k) for k in ("name", "error", "inputs", "output", "meta", "attributes", "kind")
    ]
    return "\n".join(
        "" if v is None else v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)
        for v in parts
    ).lower()


Row = dict[str, Any]
SEARCHES: list[tuple[str, Callable[[Row], bool]]] = [
    ("model:gpt-4o", lambda r: (r.get("meta") or {}).get("model") == "gpt-4o"),
    ("model:gpt-4o*", lambda r: str((r.get("meta") or {}).get("model", "")).startswith("gpt-4o")),
    ("model:gpt-4o-mini", lambda r: (r.get("meta") or {}).get("model") == "gpt-4o-mini"),
    ("error:ValueError", lambda r: r["status"] == "error" and "valueerror" in r["error"].lower()),
    ("kind:llm", lambda r: r["kind"] == "llm"),
    ("duration>500ms", lambda r: (r["latency_ms"] or 0) > 500),
    ("status:error", lambda r: r["status"] == "error"),
    ("revenue n/a", lambda r: "revenue" in _text(r) and "n/a" in _text(r)),  # inputs
    ("forty two", lambda r: "forty" in _text(r) and "two" in _text(r)),  # LLM outputs
]


@pytest.mark.parametrize(("query", "wanted"), SEARCHES, ids=[q for q, _ in SEARCHES])
def test_search_beyond_names(
    run: Loaded, run_data: dict[str, Any], query: str, wanted: Callable[[Row], bool]
) -> None:
    """Each filter finds exactly the calls it names (counted here from the trace data)."""
    count = sum(1 for r in flatten_trace(run_data) if wanted(r))
    assert count > 0
    search(run, query)
    shown = run.page.locator(".fx-match-info").text_content()
    assert shown == f"{count:,} {'match' if count == 1 else 'matches'}"


def search(loaded: Loaded, query: str) -> None:
    """Type a query with "/" and wait until the page has searched for all of it."""
    loaded.page.keyboard.press("/")
    loaded.page.locator(".fx-search").fill(query)
    loaded.page.wait_for_function(
        "q => new URLSearchParams(location.hash.slice(1)).get('q') === q", arg=query
    )


def test_search_counts_and_steps_with_enter(run: Loaded) -> None:
    search(run, "kind:retriever")
    run.page.keyboard.press("Enter")  # applies the query (already applied: next match)
    positions = []
    for key in ["Enter", "Enter", "Shift+Enter"]:
        run.page.keyboard.press(key)
        positions.append(run.page.locator(".fx-match-pos").inner_text())
    assert run.page.locator(".fx-match-info").inner_text() == "8 matches"
    assert [int(p.split(" / ")[0]) for p in positions][1:] == [
        int(positions[0].split(" / ")[0]) % 8 + 1,
        int(positions[0].split(" / ")[0]),
    ]
    assert all(p.endswith(" / 8") for p in positions)
    run.page.locator(".fx-match-step", has_text="\u2193").click()
    assert run.selected_name() == "lookup_db"


def test_the_url_brings_back_the_call_and_the_search(run: Loaded, run_data: dict[str, Any]) -> None:
    """Select, search, hide the overview; a reload and a fresh tab with the link return."""
    search(run, "kind:tool")
    for _ in range(5):
        run.page.keyboard.press("Enter")  # the search box keeps focus: next match
    run.page.locator(".fx-ov-hide").click()
    span = run.page.evaluate("() => new URLSearchParams(location.hash.slice(1)).get('call')")
    want = [r for r in flatten_trace(run_data) if r["span_id"] == span]
    assert len(want) == 1 and want[0]["kind"] == "tool"
    name = want[0]["name"]
    url = run.page.url
    for _ in range(2):
        if _:
            run.page.goto("about:blank")
            run.page.goto(url)
        else:
            run.page.reload()
        run.page.wait_for_selector("body[data-ready='1']", state="attached")
        assert run.selected_name() == name
        assert run.page.locator(".fx-search").input_value() == "kind:tool"
        tools = sum(1 for r in flatten_trace(run_data) if r["kind"] == "tool")
        assert run.page.locator(".fx-match-info").inner_text() == f"{tools} matches"
        assert not run.page.locator(".fx-ov-pane").is_visible()
        start = run.page.locator(".fx-facts dt:text-is('Start') + dd").inner_text()
        assert start == "+" + _fmt(want[0]["start_ms"])


def _fmt(ms: float) -> str:
    if ms >= 1000:
        return f"{ms / 1000:.2f} s"
    return f"{ms:.1f} ms" if ms >= 10 else f"{ms:.2f} ms"


def test_copy_buttons(run: Loaded, run_data: dict[str, Any]) -> None:
    """Traceback, the call's JSON, an id, the output and the link reach the clipboard."""
    run.page.context.grant_permissions(["clipboard-read", "clipboard-write"])

    def copy(label: str) -> str:
        run.page.locator(".fx-detail .fx-copy").get_by_text(label, exact=True).first.click()
        run.page.wait_for_function(
            "() => [...document.querySelectorAll('.fx-copy')].some(b => b.textContent === 'Copied')"
        )
        return str(run.page.evaluate("() => navigator.clipboard.readText()"))

    root_cause = next(
        r for r in flatten_trace(run_data) if r["name"] == ROOT_CAUSE and r["status"] == "error"
    )
    assert copy("Copy traceback") == root_cause["traceback"]
    call = json.loads(copy("Copy JSON"))
    assert call["span_id"] == root_cause["span_id"] and call["inputs"] == root_cause["inputs"]
    run.page.locator(".fx-section summary", has_text="Identifiers").click()
    assert copy("Copy") == root_cause["id"]
    assert copy("Copy value") == "null"
    assert copy("Copy link") == run.page.url


def test_copy_falls_back_without_the_clipboard_api(open_page: OpenPage) -> None:
    """From file:// without clipboard permission: the textarea fallback copies (no error)."""
    loaded = open_page(trace_to_html(agent_trace()), "fallback")
    loaded.page.evaluate(
        "() => { Object.defineProperty(navigator, 'clipboard', {value: undefined}); }"
    )
    button = loaded.page.locator(".fx-error-box .fx-copy")
    button.click()
    assert button.inner_text() in ("Copied", "Copy failed")
    assert loaded.console_errors == []


def test_download_json_reads_back_as_the_same_trace(
    run: Loaded, run_data: dict[str, Any], tmp_path: Path
) -> None:
    """The page's "JSON" button saves a file TraceResult.load reads: same calls, same totals
    (the CSP lets a Blob download through)."""
    with run.page.expect_download() as info:
        run.page.locator(".fx-download").click()
    path = tmp_path / "saved.json"
    info.value.save_as(path)
    assert info.value.suggested_filename == "research_agent.json"
    loaded = TraceResult.load(path)
    original = TraceResult.from_dict(run_data)
    assert loaded.totals == original.totals
    assert [r["span_id"] for r in flatten_trace(loaded.to_dict())] == [
        r["span_id"] for r in flatten_trace(run_data)
    ]
    assert run.console_errors == []


SNEAKY = "a\u202eb\u200bc\ufeffd\u2066e\u0007f\u00adg\u061ch"
SHOWN = "a<U+202E>b<U+200B>c<U+FEFF>d<U+2066>e<U+0007>f<U+00AD>g<U+061C>h"
RAW_INVISIBLE = r"/(?![\n\t\r])[\p{Cc}\p{Cf}\u2028\u2029]/u"


def test_invisible_characters_are_shown_in_every_text_field(open_page: OpenPage) -> None:
    """Bidi, zero-width and other format/control characters appear as <U+XXXX> in every
    field put on screen -- and nowhere raw."""
    s = SNEAKY
    child = node(
        1,
        "tool" + s,
        "tool" + s,
        1.0,
        3.0,
        0,
        inputs={"key" + s: "value" + s},
        output="out" + s,
        error="Err" + s,
        traceback="Traceback" + s,
        status="error",
        error_origin=True,
        error_handled=False,
        meta={
            "model": "model" + s,
            "total_tokens": 5,
            "estimated_cost_usd": 0.01,
            "extra" + s: "meta" + s,
        },
        attributes={"attr" + s: "attrvalue" + s},
        events=[{"name": "event" + s, "time_ms": 2.0, "attributes": {"evkey" + s: "ev" + s}}],
    )
    child["id"] = "id" + s
    root = node(0, "root" + s, "chain", 0.0, 5.0, None, children=[child])
    loaded = open_page(trace_to_html({"version": 1, "nodes": [root]}, title="title" + s), "sneaky")
    page = loaded.page
    page.locator(".fx-trace-row", has_text="tool").first.click()
    page.evaluate("() => document.querySelectorAll('details').forEach(d => d.open = true)")
    page.wait_for_function("() => document.querySelector('.fx-detail').innerText.includes('evkey')")
    body = page.evaluate("() => document.body.innerText")
    for field in [
        "title",
        "root",
        "tool",
        "key",
        "value",
        "out",
        "Err",
        "Traceback",
        "model",
        "extra",
        "meta",
        "attr",
        "attrvalue",
        "event",
        "evkey",
        "ev",
        "id",
    ]:
        assert field + SHOWN in body, field
    assert page.evaluate("() => document.title") == "title" + SHOWN
    svg_text = page.evaluate(
        "() => [...document.querySelectorAll('svg text')].map(t => t.textContent).join(' ')"
    )
    assert "<U+202E>" in svg_text
    assert page.evaluate(f"t => {RAW_INVISIBLE}.test(t)", svg_text) is False
    assert page.evaluate(f"() => {RAW_INVISIBLE}.test(document.body.innerText)") is False
    assert loaded.console_errors == []


OVERVIEW_SHOT = Path(__file__).resolve().parents[3] / ".assets" / "viewer-overview.png"


def test_screenshot_of_the_overview(run: Loaded, tmp_path: Path) -> None:
    """The README's overview picture: the realistic run's first screen, 1400x900.

    Set FLOW_XRAY_UPDATE_SCREENSHOT=1 to write it to .assets/viewer-overview.png.
    """
    assert run.selected_name() == ROOT_CAUSE
    run.page.wait_for_timeout(300)  # let the graph settle after its fit
    run.screenshot(OVERVIEW_SHOT, tmp_path / "overview.png")
    assert run.console_errors == []
