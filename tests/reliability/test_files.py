"""Trace files of any nesting depth: a trace or one ``error:`` line, never a traceback.

Deep means deeper than Python's recursion limit: a 100,000-level recursion is
a 100,000-level ``children`` nesting in the file flow-xray writes. Reading,
building, rendering and writing are iterative; corrupt parent links (cycles,
rings) are cut in one O(n) pass.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st

from flow_xray import jsontext
from flow_xray.analysis.accounting import build_result
from flow_xray.errors import TraceFileError
from flow_xray.formats.registry import load_trace
from flow_xray.jsontext import decode as jsontext_decode, encode as jsontext_encode
from flow_xray.render.payload import read_page
from flow_xray.tree.model import TraceResult
from flow_xray.tree.spans import SpanRecord

TRACE_ID = "0" * 31 + "1"
DEEP = 20_000  # well past the default recursion limit (1,000)


def chain(size: int, ring: bool = False) -> list[SpanRecord]:
    """``size`` spans, each the parent of the next (``ring``: the first's parent is the last)."""
    return [
        SpanRecord(
            trace_id=TRACE_ID,
            span_id=f"{i + 1:016x}",
            parent_id=f"{i:016x}" if i else (f"{size:016x}" if ring else None),
            name=f"step{i}",
            start_ns=1_000 + i,
            end_ns=1_000_000 + i,
        )
        for i in range(size)
    ]


def depth(result: TraceResult) -> int:
    deepest, stack = 0, [(root, 1) for root in result.roots]
    while stack:
        node, level = stack.pop()
        deepest = max(deepest, level)
        stack.extend((child, level + 1) for child in node.children)
    return deepest


def nested_list(levels: int) -> list[Any]:
    outer: list[Any] = []
    current = outer
    for _ in range(levels):
        current.append([])
        current = current[0]
    return outer


def run_cli(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``python -m flow_xray ARGS`` in a fresh interpreter (the default recursion limit)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    return subprocess.run(
        [sys.executable, "-m", "flow_xray", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


# --- the JSON codec ----------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=40,
)


def check_iterative_codec_writes_and_reads_what_json_does(value: Any, indent: int | None) -> None:
    writer = jsontext_encode.Writer(indent, True, None)
    writer._measure(value)
    writer.heights = {key: jsontext.SHALLOW + 1 for key in writer.heights}
    expected = json.dumps(value, ensure_ascii=False, indent=indent)
    assert writer.write(value) == expected
    every_bracket = {i for i, char in enumerate(expected) if char in "[{"}
    parsed, end = jsontext_decode.decode_deep(expected, 0, every_bracket)
    assert parsed == json.loads(expected) and end == len(expected)


@settings(max_examples=30, deadline=None)
@given(json_values, st.sampled_from([None, 2]))
def test_iterative_codec_writes_and_reads_what_json_does_in_the_inner_loop(
    value: Any, indent: int | None
) -> None:
    """The property below over 30 random values (the inner loop's share)."""
    check_iterative_codec_writes_and_reads_what_json_does(value, indent)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(json_values, st.sampled_from([None, 2]))
def test_iterative_codec_writes_and_reads_what_json_does(value: Any, indent: int | None) -> None:
    """The deep path (forced for every container) gives json's exact text, and reads it back."""
    check_iterative_codec_writes_and_reads_what_json_does(value, indent)


def check_quick_deep_parse_reads_what_json_does(value: Any, indent: int | None) -> None:
    text = json.dumps(value, indent=indent)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(jsontext, "SHALLOW", 0)
        spine = jsontext_decode.spine_of(text, 0)
    assert jsontext_decode.decode_spine(text, 0, spine) == (json.loads(text), len(text))


@settings(max_examples=30, deadline=None)
@given(json_values, st.sampled_from([None, 1]))
def test_quick_deep_parse_reads_what_json_does_in_the_inner_loop(
    value: Any, indent: int | None
) -> None:
    """The property below over 30 random values (the inner loop's share)."""
    check_quick_deep_parse_reads_what_json_does(value, indent)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(json_values, st.sampled_from([None, 1]))
def test_quick_deep_parse_reads_what_json_does(value: Any, indent: int | None) -> None:
    """Every container treated as deep: shallow runs by the C scanner, the rest by hand."""
    check_quick_deep_parse_reads_what_json_does(value, indent)


@pytest.mark.parametrize(
    "text",
    ["1" * 200, " " * 300 + "-0.5" * 100, "[" * 150 + "]" * 150 + " " * 300 + "7" * 200],
    ids=["a long number", "spaces then numbers", "a deep value then plain text"],
)
def test_the_depth_pre_pass_reads_a_long_run_of_plain_text_once(text: str) -> None:
    """Plain text with no bracket after it (a big number, spaces): the pre-pass that finds
    the deep brackets searched with a pattern that backtracked through every split of the
    run, its time doubling with each character (200 digits would never finish). The time
    bound is a hang guard, not a speed target: it takes microseconds. (In a process of its
    own: the regular expression engine never lets another thread run.)"""
    code = (
        "import json, sys\n"
        "from flow_xray.jsontext.decode import spine_of\n"
        "print(json.dumps(sorted(spine_of(sys.stdin.read(), 0).deep)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], input=text, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    # 150 levels: the outer 50 hold more than SHALLOW (100) levels below them.
    deep = set(json.loads(done.stdout))
    assert deep == (set(range(50)) if text.startswith("[") else set())


@pytest.mark.slow
def test_codec_handles_nesting_far_past_the_recursion_limit() -> None:
    """200,000 levels: json raises RecursionError; jsontext writes and reads it."""
    value = nested_list(200_000)
    with pytest.raises(RecursionError):
        json.dumps(value)
    text = jsontext.dumps(value)
    assert text == "[" * 200_001 + "]" * 200_001
    # (== on such lists would itself recurse: compare through the text)
    assert jsontext.dumps(jsontext.loads(text)) == text


@pytest.mark.parametrize("bad", ["[" * 50_000, "[" * 50_000 + "1," + "]" * 50_000, '{"a": ' * 5000])
def test_codec_reports_malformed_deep_text_as_a_decode_error(bad: str) -> None:
    with pytest.raises(json.JSONDecodeError):
        jsontext.loads(bad)


def test_codec_still_rejects_circular_values() -> None:
    looped: list[Any] = nested_list(5_000)
    inner = looped
    while inner:
        inner = inner[0]
    inner.append(looped)
    with pytest.raises(ValueError, match="Circular"):
        jsontext.dumps(looped)


# --- tree building -------------------------------------------------------------------


@pytest.mark.slow
def test_a_chain_deeper_than_the_recursion_limit_builds_renders_and_round_trips(
    tmp_path: Path,
) -> None:
    """20,000 nested calls: build, to_html, to_dot, save and load all work and agree."""
    result = build_result(chain(DEEP))
    assert len(result.roots) == 1 and depth(result) == DEEP
    rows = read_page(result.to_html())["nodes"]
    assert [row["name"] for row in rows[:2]] == ["step0", "step1"] and len(rows) == DEEP
    assert result.to_dot().count(" -> ") == DEEP - 1
    path = tmp_path / "deep.json"
    result.save(path)
    loaded = TraceResult.load(path)
    assert len(loaded) == DEEP and depth(loaded) == DEEP
    assert [n.name for n in loaded][:3] == ["step0", "step1", "step2"]
    assert loaded.to_dict()["totals"] == result.to_dict()["totals"]


@pytest.mark.slow
def test_a_ring_of_parent_links_becomes_one_chain_cut_at_its_earliest_span() -> None:
    """A corrupt cycle through every span: the earliest one becomes the root, no span is lost."""
    result = build_result(chain(DEEP, ring=True))
    assert [root.name for root in result.roots] == ["step0"]
    assert len(result) == DEEP and depth(result) == DEEP
    assert result.to_dot().count(" -> ") == DEEP - 1


def test_several_cycles_each_lose_one_link() -> None:
    """Two separate rings and a chain hanging off one of them: two roots, every span kept."""
    spans = chain(3, ring=True)  # 1 <- 2 <- 3 <- 1
    spans += [
        SpanRecord(TRACE_ID, "000000000000000a", "000000000000000b", "a", 50, 60),
        SpanRecord(TRACE_ID, "000000000000000b", "000000000000000a", "b", 40, 60),
        SpanRecord(TRACE_ID, "000000000000000c", "000000000000000a", "c", 55, 58),
    ]
    result = build_result(spans)
    assert [r.name for r in result.roots] == ["b", "step0"]  # by start time
    assert len(result) == 6
    assert [n.name for n in result.roots[0]] == ["b", "a", "c"]
    assert [n.name for n in result.roots[1]] == ["step0", "step1", "step2"]


# --- files from other tools, nested past the limit --------------------------------------


def _otlp_span(value: dict[str, Any]) -> dict[str, Any]:
    return {
        "traceId": TRACE_ID,
        "spanId": "0000000000000001",
        "name": "deep",
        "startTimeUnixNano": "1000",
        "endTimeUnixNano": "2000",
        "attributes": [{"key": "payload", "value": value}],
    }


def test_otlp_json_with_an_attribute_nested_past_the_limit_loads(tmp_path: Path) -> None:
    """A kvlist/array AnyValue 5,000 levels deep is read iteratively and renders."""
    value: dict[str, Any] = {"stringValue": "leaf"}
    for level in range(5_000):
        if level % 2:
            value = {"arrayValue": {"values": [value]}}
        else:
            value = {"kvlistValue": {"values": [{"key": "k", "value": value}]}}
    document = {"resourceSpans": [{"scopeSpans": [{"spans": [_otlp_span(value)]}]}]}
    path = tmp_path / "spans.jsonl"
    path.write_text(jsontext.dumps(document) + "\n", encoding="utf-8")
    result = load_trace(path)
    payload = payload_before = result.roots[0].attributes["payload"]
    levels = 0
    while not isinstance(payload, str):
        payload = payload["k"] if isinstance(payload, dict) else payload[0]
        levels += 1
    assert payload == "leaf" and levels == 5_000
    shown = read_page(result.to_html())["nodes"][0]["attributes"]["payload"]
    assert jsontext.dumps(shown) == jsontext.dumps(payload_before)  # (== would recurse)
    assert TraceResult.load(path).to_json().count('"k"') == 2_500


def test_a_flow_xray_file_with_a_deep_input_value_loads_and_renders(tmp_path: Path) -> None:
    node = {"name": "call", "inputs": {"x": nested_list(10_000)}, "children": []}
    path = tmp_path / "t.json"
    path.write_text(jsontext.dumps({"version": 1, "nodes": [node]}), encoding="utf-8")
    result = TraceResult.load(path)
    assert result.roots[0].name == "call"
    shown = read_page(result.to_html())["nodes"][0]["inputs"]["x"]
    assert jsontext.dumps(shown) == jsontext.dumps(nested_list(10_000))


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("lists.json", "[" * 100_000 + "]" * 100_000),
        ("objects.json", '{"a": ' * 100_000 + "1" + "}" * 100_000),
        ("cut.json", '{"nodes": [' + '{"name": "x", "children": [' * 50_000),
    ],
)
def test_deeply_nested_non_traces_are_one_error(tmp_path: Path, name: str, text: str) -> None:
    """`TraceResult.load` raises TraceFileError; `flow-xray view` prints one error line, exit 2."""
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(TraceFileError):
        TraceResult.load(path)
    done = run_cli(tmp_path, "view", name)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and name in errors[0]


@pytest.mark.slow
def test_a_script_that_raised_the_recursion_limit_gets_a_trace_view_can_read(
    tmp_path: Path,
) -> None:
    """`run` a 30,000-deep traced recursion (the script raised the limit), then `view` its
    JSON in a fresh interpreter with the default limit: both succeed."""
    script = tmp_path / "recurse.py"
    script.write_text(
        textwrap.dedent(
            """
            import sys
            import threading
            from flow_xray import trace

            @trace
            def down(n):
                return 0 if n == 0 else down(n - 1) + 1

            def main():
                sys.setrecursionlimit(200_000)
                print(down(30_000))

            threading.stack_size(512 * 1024 * 1024)  # deep Python recursion needs C stack
            worker = threading.Thread(target=main)
            worker.start()
            worker.join()
            """
        ),
        encoding="utf-8",
    )
    ran = run_cli(tmp_path, "run", "--json", "t.json", "--html", "t.html", "recurse.py")
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert ran.stdout.strip() == "30000"
    assert "30,001 calls" in ran.stderr
    viewed = run_cli(tmp_path, "view", "t.json", "--html", "again.html")
    assert viewed.returncode == 0, viewed.stderr[-2000:]
    assert "30,001 calls" in viewed.stderr and "Traceback" not in viewed.stderr
    assert depth(TraceResult.load(tmp_path / "t.json")) == 30_001
