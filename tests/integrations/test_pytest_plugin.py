"""The pytest plugin's parts, in this process: page names, the failure a page opens on,
and the ``flow_xray_trace`` fixture (this suite runs with the plugin installed)."""

from __future__ import annotations

import re
import subprocess
import sys
import threading

import pytest

from flow_xray import TraceNode, TraceResult, trace
from flow_xray.integrations.pytest_plugin import LiveTrace, failure_node, page_name


@trace(kind="tool")
def lookup(key: str) -> str:
    if key == "missing":
        raise KeyError(key)
    return key.upper()


@trace(kind="llm")
def complete(prompt: str) -> str:
    trace.usage(model="gpt-4o-mini", input_tokens=100, output_tokens=20)
    return prompt[::-1]


# -- page names -----------------------------------------------------------------------


def test_a_page_name_reads_like_the_test_id() -> None:
    """Path separators and ``::`` become ``_`` and ``--``; 8 hex digits of the id follow."""
    name = page_name("tests/test_agent.py::TestAgent::test_budget[gpt-4o]")
    assert re.fullmatch(r"tests_test_agent\.py--TestAgent--test_budget_gpt-4o-[0-9a-f]{8}", name)


@pytest.mark.parametrize(
    "nodeid",
    [
        'test_x.py::test_y[a<b>c:"d"|e?f*g]',
        "test_x.py::test_y[\u00e9t\u00e9 \U0001f600]",
        "test_x.py::test_y[" + "long" * 200 + "]",
        "con.py::test_y",
        "dir\\sub\\test_x.py::test_y[.]",
    ],
)
def test_a_page_name_is_safe_on_every_os(nodeid: str) -> None:
    """Only letters, digits, ``.``, ``_`` and ``-``; short; no Windows device name; no dot end."""
    name = page_name(nodeid)
    assert re.fullmatch(r"[A-Za-z0-9._-]+", name)
    assert len(name) <= 130
    assert name.split(".")[0].upper() not in {"CON", "PRN", "AUX", "NUL", "COM1", "LPT1"}
    assert not name.endswith((".", " "))


def test_ids_that_read_alike_get_different_pages() -> None:
    """Ids differing only where characters are replaced, or in case, never share a file."""
    ids = [
        "t.py::test[a/b]",
        "t.py::test[a_b]",
        "t.py::test[a b]",
        "t.py::Test[A_B]",
        "t.py::test[A_B]",
    ]
    names = [page_name(i) for i in ids]
    assert len({n.lower() for n in names}) == len(ids)


def test_a_page_name_is_the_same_in_every_process() -> None:
    """Workers and runs agree on a test's file (no hash randomisation)."""
    code = (
        "from flow_xray.integrations.pytest_plugin import page_name; print(page_name('a.py::t[1]'))"
    )
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert other.stdout.strip() == page_name("a.py::t[1]")


# -- the failure a page opens on ------------------------------------------------------


def node(name: str, error: str | None = None, *children: TraceNode, **fields: object) -> TraceNode:
    return TraceNode(
        id=name,
        name=name,
        span_id=name,
        error=error,
        status="error" if error else "ok",
        children=list(children),
        **fields,  # type: ignore[arg-type]
    )


def test_a_failing_test_opens_where_its_failure_was_raised() -> None:
    """Down from the test's node along the calls failing with the same exception type."""
    raised = node("search", "KeyError: 'q'")
    result = TraceResult(
        roots=[
            node(
                "test_x",
                "KeyError: 'q'",
                node("retry", "KeyError: 'q'", node("first_try", "KeyError: 'q'"), raised),
                attributes={"test.case.name": "t.py::test_x"},
            )
        ]
    )
    result.totals  # noqa: B018 - fills the accounting fields, as a loaded trace has them
    assert failure_node(result, "t.py::test_x", "call", "KeyError") is raised


def test_an_assertion_in_the_test_opens_on_the_test() -> None:
    """A failing child of another type (caught by the test) is not where the test failed."""
    test = node(
        "test_x",
        "AssertionError: assert 1 == 2",
        node("lookup", "KeyError: 'missing'"),
        attributes={"test.case.name": "t.py::test_x"},
    )
    assert failure_node(TraceResult(roots=[test]), "t.py::test_x", "call", "AssertionError") is test


def test_a_setup_failure_opens_on_the_last_unhandled_call_failing_so() -> None:
    """No test node failed: the latest unhandled call with the exception's type."""
    earlier = node("warm_up", "ValueError: early", start_ms=1.0)
    later = node("connect", "ValueError: refused", start_ms=5.0)
    other = node("parse", "KeyError: 'k'", start_ms=9.0)
    result = TraceResult(roots=[earlier, later, other])
    result.totals  # noqa: B018 - fills error_handled
    assert failure_node(result, "t.py::test_x", "setup", "ValueError") is later


def test_no_failing_call_means_no_selection() -> None:
    """A failure no traced call saw leaves the page's own first row."""
    result = TraceResult(roots=[node("lookup")])
    assert failure_node(result, "t.py::test_x", "call", "AssertionError") is None


# -- the fixture ----------------------------------------------------------------------


def test_the_fixture_counts_the_calls_so_far(flow_xray_trace: LiveTrace) -> None:
    """Calls, tokens and cost are those made so far; each read adds only what is new."""
    complete(lookup("a"))
    assert (flow_xray_trace.count("lookup"), flow_xray_trace.count("complete")) == (1, 1)
    complete("b")
    totals = flow_xray_trace.totals
    assert (flow_xray_trace.count("complete"), totals.total_tokens, totals.nodes) == (2, 240, 3)
    assert totals.cost_usd is not None and totals.cost_usd > 0
    assert [n.name for n in flow_xray_trace.roots] == ["lookup", "complete", "complete"]


def test_the_fixture_lists_each_failure_once(flow_xray_trace: LiveTrace) -> None:
    """``errors``: every failure at the call that raised it, handled or not."""
    assert flow_xray_trace.errors == []
    with pytest.raises(KeyError):
        lookup("missing")
    (error,) = flow_xray_trace.errors
    assert (error.name, error.error) == ("lookup", "KeyError: 'missing'")


def test_the_fixture_sees_other_threads(flow_xray_trace: LiveTrace) -> None:
    """A call in a thread started without `propagate` is the test's call too."""
    worker = threading.Thread(target=lookup, args=("t",))
    worker.start()
    worker.join()
    assert flow_xray_trace.find("lookup") is not None
    assert len(flow_xray_trace) == 1 and [n.name for n in flow_xray_trace] == ["lookup"]


def test_the_fixture_gives_a_trace_result_to_keep(flow_xray_trace: LiveTrace) -> None:
    """``result`` is a plain `TraceResult`: saved, rendered, compared like any other."""
    lookup("k")
    result = flow_xray_trace.result
    assert isinstance(result, TraceResult)
    assert TraceResult.from_dict(result.to_dict()) == result
    assert flow_xray_trace.find_all("lookup") == result.find_all("lookup")
