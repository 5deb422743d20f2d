"""``pytest --flow-xray`` on a sample project, run by a real pytest in a subprocess.

Each run is made once per module and read by several tests: with the flag,
with it under ``pytest-xdist -n 2``, without it, and with ``--flow-xray-all``.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from sample_project import ERRORS, FAILED, PASSED, run_pytest, summary_lines, write_project

from flow_xray import TraceResult
from flow_xray.integrations.pytest_plugin import page_name
from flow_xray.render.payload import read_page

pytestmark = pytest.mark.slow

FAILING = FAILED | ERRORS


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_project(tmp_path_factory.mktemp("sample"))


@pytest.fixture(scope="module")
def flagged(project: Path) -> subprocess.CompletedProcess[str]:
    """``pytest --flow-xray test_sample.py``: the folder after the bare flag stays a test path."""
    return run_pytest(project, "--flow-xray", "test_sample.py")


@pytest.fixture(scope="module")
def parallel(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """``pytest -n 2 --flow-xray=traces`` in a fresh copy of the project."""
    folder = write_project(tmp_path_factory.mktemp("parallel"))
    run = run_pytest(folder, "-n", "2", "--flow-xray=traces")
    return folder, run.stdout


def pages_in(folder: Path) -> set[str]:
    return {p.name for p in folder.glob("*.html")}


def expected_pages(nodeids: set[str]) -> set[str]:
    return {page_name(nodeid) + ".html" for nodeid in nodeids}


def test_without_the_flag_nothing_is_written(tmp_path: Path) -> None:
    """Plain ``pytest``: the same outcomes, no folder, no summary section; the fixture works."""
    folder = write_project(tmp_path / "plain")
    run = run_pytest(folder)
    assert f"{len(FAILED)} failed, {len(PASSED)} passed" in run.stdout
    assert not (folder / ".flow-xray").exists()
    assert summary_lines(run.stdout) == []
    assert "FAILED test_sample.py::test_budget_blown" in run.stdout  # the fixture asserted


def test_each_failing_test_gets_a_page_and_json(
    project: Path, flagged: subprocess.CompletedProcess[str]
) -> None:
    """One HTML + JSON pair per failing test (errors in setup too), none for passing or xfailed."""
    folder = project / ".flow-xray"
    assert pages_in(folder) == expected_pages(FAILING)
    assert {p.name for p in folder.glob("*.json")} == {
        name.removesuffix(".html") + ".json" for name in expected_pages(FAILING)
    }
    assert (folder / ".gitignore").read_text(encoding="utf-8").splitlines()[-1] == "*"


def test_the_summary_lists_each_failing_test_with_its_page(
    project: Path, flagged: subprocess.CompletedProcess[str]
) -> None:
    """The ``flow-xray`` section: ``FAILED <id> -> <page>`` (``ERROR`` for setup errors)."""
    expected = {f"FAILED {n} -> .flow-xray/{page_name(n)}.html" for n in FAILED} | {
        f"ERROR {n} -> .flow-xray/{page_name(n)}.html" for n in ERRORS
    }
    assert set(summary_lines(flagged.stdout)) == expected


def test_outcomes_do_not_change_with_the_flag(flagged: subprocess.CompletedProcess[str]) -> None:
    """The plugin changes no test's outcome: the same counts as a plain run."""
    assert f"{len(FAILED)} failed, {len(PASSED)} passed, 1 xfailed, 1 error" in flagged.stdout


def load(project: Path, nodeid: str) -> TraceResult:
    return TraceResult.load(project / ".flow-xray" / f"{page_name(nodeid)}.json")


def test_the_trace_holds_the_test_and_the_calls_it_made(
    project: Path, flagged: subprocess.CompletedProcess[str]
) -> None:
    """The test function is a node (named like the test, its id attached) over its calls."""
    result = load(project, "test_sample.py::test_param[a/b]")
    (root,) = result.roots
    assert (root.name, root.attributes["test.case.name"]) == (
        "test_param[a/b]",
        "test_sample.py::test_param[a/b]",
    )
    assert root.inputs == {"question": "a/b"}
    assert [n.name for n in root] == ["test_param[a/b]", "agent", "search", "ask"]
    assert root.error is not None and root.error.startswith("AssertionError")


@pytest.mark.parametrize(
    ("nodeid", "opens_on"),
    [
        ("test_sample.py::test_wrong_answer", "test_wrong_answer"),
        ("test_sample.py::test_raises_deep", "search"),
        ("test_sample.py::test_setup_error", "search"),
        ("test_sample.py::test_fails_after_a_caught_error", "test_fails_after_a_caught_error"),
    ],
)
def test_the_page_opens_on_the_failure(
    project: Path, flagged: subprocess.CompletedProcess[str], nodeid: str, opens_on: str
) -> None:
    """An assertion in the test opens on the test's node, an exception on the call that
    raised it, a fixture's failure on the fixture's failing call -- and a failure caught
    earlier (the overview's own first choice) does not take the page's first row."""
    page = (project / ".flow-xray" / f"{page_name(nodeid)}.html").read_text(encoding="utf-8")
    data = read_page(page)
    assert data["nodes"][data["overview"]["first"]]["name"] == opens_on


def test_threads_children_async_and_own_captures_are_in_the_trace(
    project: Path, flagged: subprocess.CompletedProcess[str]
) -> None:
    """Every thread, Python child processes, async bodies and a test's own capture all show."""
    names = {
        nodeid: [n.name for n in load(project, f"test_sample.py::{nodeid}")]
        for nodeid in ("test_thread", "test_child_process", "test_async", "test_own_capture")
    }
    for nodeid, calls in names.items():
        assert calls.count("agent") == 1, (nodeid, calls)
    async_trace = load(project, "test_sample.py::test_async")
    (root,) = async_trace.roots
    assert [c.name for c in root.children] == ["test_async.<locals>.step"]
    child = load(project, "test_sample.py::test_child_process")
    assert {n.pid for n in child if n.name == "agent"} != {None}


def test_under_xdist_each_worker_writes_and_the_controller_lists_all(
    parallel: tuple[Path, str],
) -> None:
    """``-n 2``: the same pages as one process writes, all listed on the controller."""
    folder, output = parallel
    assert pages_in(folder / "traces") == expected_pages(FAILING)
    listed = {line.split(" -> ")[0].split(" ", 1)[1] for line in summary_lines(output)}
    assert listed == FAILING
    assert f"{len(FAILED)} failed, {len(PASSED)} passed" in output


def test_flow_xray_all_keeps_passing_tests_too(tmp_path: Path) -> None:
    """``--flow-xray-all`` (which implies ``--flow-xray``) writes a page for every test run."""
    folder = write_project(tmp_path / "all")
    run = run_pytest(folder, "--flow-xray-all", "-k", "passes or budget or wrong_answer")
    chosen = {
        "test_sample.py::test_passes",
        "test_sample.py::test_budget",
        "test_sample.py::test_budget_blown",
        "test_sample.py::test_wrong_answer",
    }
    assert pages_in(folder / ".flow-xray") == expected_pages(chosen)
    assert "2 more page(s) of passing tests in .flow-xray" in summary_lines(run.stdout)
