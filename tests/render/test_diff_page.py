"""The diff page's data: both runs and the aligned calls packed as a trace page packs its calls."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

import pytest

from flow_xray import trace
from flow_xray.analysis.diff import diff_traces
from flow_xray.render.diff_page import diff_to_html
from flow_xray.render.payload import read_page
from flow_xray.render.trace_graph import flatten_trace
from flow_xray.tree.model import TraceResult

_DATA_TAG = '<script type="application/json" id="fx-data">'


def _run(calls: int, failing: int) -> TraceResult:
    @trace
    def leaf(i: int, k: int) -> int:
        if k == 7 and i % 50 == failing:
            raise ValueError(f"bad {i}")
        return i * k

    @trace
    def stage(i: int) -> int:
        total = 0
        for k in range(49):
            with contextlib.suppress(ValueError):
                total += leaf(i, k)
        return total

    with trace.capture() as result:
        for i in range(calls // 50):
            stage(i)
    return result


def _embedded(page: str) -> dict[str, Any]:
    start = page.index(_DATA_TAG) + len(_DATA_TAG)
    return dict(json.loads(page[start : page.index("</script>", start)]))


def test_a_diff_page_packs_both_runs_and_the_calls_and_reads_back_whole() -> None:
    """Each part is packed; unpacked, the page holds exactly the diff's calls and both runs'
    nodes as the trace viewer flattens them."""
    diff = _run(5_000, 0).diff(_run(5_000, 1))
    page = diff.to_html()
    embedded = _embedded(page)
    assert all("packed" in embedded[part] for part in ("before", "after", "calls"))
    data, expected = read_page(page), diff.to_dict()
    assert data["calls"] == expected["calls"]
    for side in ("before", "after"):
        assert data[side]["label"] == expected[side]["label"]
        assert data[side]["nodes"] == flatten_trace(expected[side])


def test_a_diff_page_of_5000_calls_a_side_stays_small() -> None:
    """Two runs of 5,000 calls: well under 1 MB (as plain JSON the page took 8.1 MB)."""
    page = _run(5_000, 0).diff(_run(5_000, 1)).to_html()
    assert len(page.encode()) < 1_000_000, len(page.encode())


@pytest.mark.parametrize("form", ["captured", "trace.fxr", "trace.json"])
def test_a_diff_page_drawn_from_the_runs_is_the_page_of_its_json_form(
    form: str, tmp_path: Path
) -> None:
    """``TraceDiff.to_html`` draws both runs' trees as they are; the page is the very page
    `diff_to_html` makes of ``to_dict()`` (every node a dict and back): for captured runs,
    runs read back from the compact file (nodes filled lazily) and from JSON, with
    changed, added and removed calls and errors on both sides."""
    before, after = _run(1_000, 0), _run(900, 3)
    if form != "captured":
        before.save(tmp_path / f"a.{form}")
        after.save(tmp_path / f"b.{form}")
        before = TraceResult.load(tmp_path / f"a.{form}")
        after = TraceResult.load(tmp_path / f"b.{form}")
    diff = diff_traces(before, after, "nightly", "today")
    assert {call.change for call in diff} == {"same", "changed", "removed"}
    page = diff.to_html(title="nightly vs today")
    assert page == diff_to_html(diff.to_dict(), title="nightly vs today")
    assert diff_traces(after, before).to_html() == diff_to_html(
        diff_traces(after, before).to_dict()
    )
