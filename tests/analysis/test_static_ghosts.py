"""Ghosts are context, not data: the static context never changes a run's figures.

A ghost (a traced function that could have run under a call and did not) is a
row of the viewer page, but not a call: the page's own times, statuses,
critical path and lists are the same with and without the static context.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from flow_xray import TraceResult
from flow_xray.analysis import StaticIndex
from flow_xray.render.payload import read_page

RunShop = Callable[..., TraceResult]
PER_CALL = ("id", "name", "latency_ms", "self_ms", "view_status", "status")


@pytest.fixture
def pages(run_shop: RunShop, shop_index: StaticIndex) -> tuple[dict[str, Any], dict[str, Any]]:
    """One run of the shop (the fallback did not run): its page without, then with, the
    static context."""
    result = run_shop("green tea")
    return read_page(result.to_html()), read_page(result.to_html(static=shop_index))


def calls(page: dict[str, Any]) -> list[dict[str, Any]]:
    """The rows of a page that are calls (not ghosts), each with its per-call figures."""
    return [
        {key: node.get(key) for key in PER_CALL} for node in page["nodes"] if not node.get("ghost")
    ]


def test_the_page_has_ghosts(pages: tuple[dict[str, Any], dict[str, Any]]) -> None:
    """The static page holds the two ghosts under Agent.answer, the plain one none."""
    plain, static = pages
    assert [n["name"] for n in static["nodes"] if n.get("ghost")] == ["fallback", "record_fallback"]
    assert not any(n.get("ghost") for n in plain["nodes"])


def test_ghosts_change_no_call_figure(pages: tuple[dict[str, Any], dict[str, Any]]) -> None:
    """Every call keeps its latency, own time and status: Agent.answer's own time is not
    eaten by the ghost hung under it."""
    plain, static = pages
    assert calls(static) == calls(plain)
    answer = next(n for n in static["nodes"] if n["name"] == "Agent.answer")
    assert answer["self_ms"] > 0


def test_ghosts_read_not_run(pages: tuple[dict[str, Any], dict[str, Any]]) -> None:
    """A ghost has no latency and no own time, and its status is "ghost" (drawn "not run")."""
    _, static = pages
    ghosts = [n for n in static["nodes"] if n.get("ghost")]
    assert [(n.get("latency_ms"), n.get("self_ms"), n["view_status"]) for n in ghosts] == [
        (None, None, "ghost"),
        (None, None, "ghost"),
    ]


def test_ghosts_stay_off_the_overview(pages: tuple[dict[str, Any], dict[str, Any]]) -> None:
    """The critical path, own-time list, repeated calls and errors name the same calls."""
    plain, static = pages
    names = {
        key: [static["nodes"][row]["name"] for row in static["overview"][key]]
        for key in ("critical", "self_time")
    }
    assert names == {
        key: [plain["nodes"][row]["name"] for row in plain["overview"][key]]
        for key in ("critical", "self_time")
    }
    for key in ("repeated", "errors", "llm", "models"):
        assert static["overview"][key] == plain["overview"][key]


def test_static_totals_are_the_runs(pages: tuple[dict[str, Any], dict[str, Any]]) -> None:
    """The header's totals (calls, wall time) are the run's, ghosts not counted."""
    plain, static = pages
    assert static["totals"] == plain["totals"]
    assert static["totals"]["nodes"] == len(calls(static))
