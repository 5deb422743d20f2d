"""A small project with passing and failing tests, run by a real ``pytest`` in a subprocess.

Kept out of ``conftest.py`` so test modules can import it by name (see
``tests/render/browser/viewer_page.py`` for why).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

AGENT = """
from flow_xray import trace


@trace(kind="tool")
def search(query):
    if "boom" in query:
        raise ValueError(f"no results for {query!r}")
    return [query.upper()]


@trace(kind="llm")
def ask(prompt):
    trace.usage(model="gpt-4o-mini", input_tokens=120, output_tokens=30)
    return "answer: " + prompt


@trace(kind="agent")
def agent(question):
    hits = search(question)
    return ask(f"{question} {hits}")
"""

TESTS = """
import asyncio
import subprocess
import sys
import threading

import pytest

from agent import agent, search
from flow_xray import trace


def test_passes():
    assert agent("hello").startswith("answer")


def test_wrong_answer():
    assert agent("hello") == "something else"


def test_raises_deep():
    agent("boom")


@pytest.mark.parametrize("question", ["ok", "a/b", "x::y"])
def test_param(question):
    assert agent(question).startswith("answer") and question == "ok"


def test_budget(flow_xray_trace):
    agent("one")
    agent("two")
    assert flow_xray_trace.count("search") == 2
    assert flow_xray_trace.totals.total_tokens == 300
    assert not flow_xray_trace.errors


def test_budget_blown(flow_xray_trace):
    for question in ("one", "two", "three"):
        agent(question)
    assert flow_xray_trace.totals.total_tokens < 400


def test_own_capture():
    with trace.capture() as mine:
        agent("mine")
    assert len(mine) == 3
    assert False, "failed after its own capture"


@pytest.fixture
def broken():
    search("boom in a fixture")


def test_setup_error(broken):
    pass


@pytest.fixture
def warmed_up():
    try:
        search("boom while warming up")
    except ValueError:
        pass


def test_fails_after_a_caught_error(warmed_up):
    assert agent("x") == "y"


class TestClass:
    def test_method(self):
        assert agent("m") == 1


@pytest.mark.asyncio
async def test_async():
    @trace
    async def step(question):
        await asyncio.sleep(0)
        return agent(question)

    assert await step("async") == "nope"


def test_thread():
    worker = threading.Thread(target=agent, args=("in a thread",))
    worker.start()
    worker.join()
    assert False, "failed after a thread"


def test_child_process():
    code = "from agent import agent; agent('in a child')"
    subprocess.run([sys.executable, "-c", code], check=True)
    assert False, "failed after a child process"


@pytest.mark.xfail(reason="known", strict=True)
def test_known_failure():
    agent("boom")
"""

INI = """
[pytest]
asyncio_default_fixture_loop_scope = function
filterwarnings = error
"""

#: The tests of `TESTS` that fail (``FAILED``) and the one that errors in setup (``ERROR``).
FAILED = {
    "test_sample.py::test_wrong_answer",
    "test_sample.py::test_raises_deep",
    "test_sample.py::test_param[a/b]",
    "test_sample.py::test_param[x::y]",
    "test_sample.py::test_budget_blown",
    "test_sample.py::test_own_capture",
    "test_sample.py::test_fails_after_a_caught_error",
    "test_sample.py::TestClass::test_method",
    "test_sample.py::test_async",
    "test_sample.py::test_thread",
    "test_sample.py::test_child_process",
}
ERRORS = {"test_sample.py::test_setup_error"}
PASSED = {
    "test_sample.py::test_passes",
    "test_sample.py::test_param[ok]",
    "test_sample.py::test_budget",
}
XFAILED = {"test_sample.py::test_known_failure"}


def write_project(folder: Path) -> Path:
    """Write the sample project into ``folder``; return it."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "agent.py").write_text(AGENT.lstrip(), encoding="utf-8")
    (folder / "test_sample.py").write_text(TESTS.lstrip(), encoding="utf-8")
    (folder / "pytest.ini").write_text(textwrap.dedent(INI).lstrip(), encoding="utf-8")
    return folder


def run_pytest(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run ``python -m pytest ARGS`` in ``folder``, as a user would, and return the outcome.

    The environment is this one less pytest's, OpenTelemetry's and flow-xray's own
    variables, so the run sees none of this test session's settings.
    """
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("PYTEST_", "OTEL_", "FLOW_XRAY_"))
    }
    env["PYTHONPATH"] = str(folder)  # so a child process finds agent.py too
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rfE", *args],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def summary_lines(output: str) -> list[str]:
    """The lines of the ``flow-xray`` section of a pytest run's terminal summary."""
    lines = output.splitlines()
    start = next((i for i, line in enumerate(lines) if "= flow-xray =" in line), None)
    if start is None:
        return []
    section = []
    for line in lines[start + 1 :]:
        if line.startswith("="):
            break
        section.append(line)
    return section
