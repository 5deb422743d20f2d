"""Every python snippet of the README runs as written.

Each ```python block is run in a fresh interpreter in its own folder, with
what a reader of the README has at that point:

- an OpenAI-compatible server (the LLM tests' fake server, through the
  standard ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY`` the real ``openai`` client
  reads) for the snippets that call an LLM;
- the "Tracing your code" snippet run first for the ones that call its
  ``agent`` (the notebook cells, the pytest fixture example);
- the files a snippet names as the reader's own: the ``shop`` package under
  ``src/`` with the trace the README's ``flow-xray run --static`` line writes,
  and an ``agent.py`` program for 0.3.x's static-context names.

Notebook cells run in IPython (``%load_ext``, ``%%flow_xray``); the pytest
example runs under pytest. A snippet fails its test when it raises.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.llm.fake_llm import FakeLLM, RunningServer

pytestmark = pytest.mark.slow  # child processes
ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
SHOP = ROOT / "tests" / "analysis" / "fixtures" / "shop"
FENCE = re.compile(r"^(?P<indent> *)```(?P<lang>\w*)\s*$")

# A program using 0.3.x's static-context example names (Agent.plan, choose_tool, ...).
AGENT_PY = """
from flow_xray import trace


class Agent:
    @trace
    def plan(self, question):
        return choose_tool(question)


@trace
def choose_tool(question):
    if "search" in question:
        return call_search(question)
    return call_database(question)


@trace
def call_search(question):
    return ["a hit"]


@trace
def call_database(question):
    try:
        return ["a row"]
    except TimeoutError:
        return fallback(question)


@trace
def fallback(question):
    return ["a cached row"]


def main(question):
    return Agent().plan(question)
"""


@dataclass(frozen=True)
class Snippet:
    """A ```python block of the README: its first line's number and its code."""

    line: int
    code: str

    @property
    def notebook(self) -> bool:
        """A notebook cell: IPython magics, or a cell that ends by showing ``result``."""
        lines = self.code.strip().splitlines()
        return any(line.startswith("%") for line in lines) or lines[-1] == "result"

    @property
    def pytest_example(self) -> bool:
        """A test function using the plugin's fixture."""
        return "def test_" in self.code and "flow_xray_trace" in self.code

    @property
    def calls_agent(self) -> bool:
        """Uses the ``agent`` of the "Tracing your code" snippet without defining one."""
        return "agent(" in self.code and "def agent" not in self.code


def readme_snippets() -> list[Snippet]:
    """The README's python blocks, in order (fences may be indented inside a list item)."""
    lines = README.read_text(encoding="utf-8").splitlines()
    snippets: list[Snippet] = []
    start: tuple[int, str, str] | None = None
    body: list[str] = []
    for number, line in enumerate(lines, 1):
        fence = FENCE.match(line)
        if start is None:
            if fence is not None:
                start, body = (number, fence["indent"], fence["lang"]), []
            continue
        if fence is not None and fence["indent"] == start[1] and not fence["lang"]:
            if start[2] == "python":
                snippets.append(Snippet(start[0], textwrap.dedent("\n".join(body)) + "\n"))
            start = None
        else:
            body.append(line)
    return snippets


SNIPPETS = readme_snippets()
TRACING_YOUR_CODE = next(s for s in SNIPPETS if "def agent" in s.code)


def static_command() -> list[str]:
    """The README's ``flow-xray run --static ...`` line, as arguments of ``python -m flow_xray``."""
    text = README.read_text(encoding="utf-8")
    found = re.search(r"^flow-xray run --static .*$", text, re.M)
    assert found is not None, "the README shows no flow-xray run --static line"
    return shlex.split(found.group(0), comments=True)[1:]


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeLLM]:
    """The fake OpenAI-compatible server the snippets' client talks to."""
    running = RunningServer()
    yield running.fake
    running.stop()


@pytest.fixture
def workspace(tmp_path: Path, fake: FakeLLM) -> tuple[Path, dict[str, str]]:
    """A folder holding the reader's files, and the environment the snippets run with."""
    shutil.copytree(SHOP, tmp_path / "src" / "shop")
    (tmp_path / "agent.py").write_text(AGENT_PY, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "OPENAI_"))}
    env.update(OPENAI_BASE_URL=fake.openai_url, OPENAI_API_KEY="sk-test", PYTHONUNBUFFERED="1")
    return tmp_path, env


def run(args: list[str], folder: Path, env: dict[str, str]) -> None:
    """Run ``python ARGS`` in ``folder``; fail with its output when it does not exit 0."""
    done = subprocess.run(
        [sys.executable, *args],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"


NOTEBOOK_RUNNER = """
import sys
from IPython.core.interactiveshell import InteractiveShell

shell = InteractiveShell.instance()
for path in sys.argv[1:]:
    with open(path, encoding="utf-8") as cell:
        shell.run_cell(cell.read(), store_history=True).raise_error()
"""


@pytest.mark.parametrize("snippet", SNIPPETS, ids=lambda s: f"README-line-{s.line}")
def test_snippet_runs_as_written(snippet: Snippet, workspace: tuple[Path, dict[str, str]]) -> None:
    """The snippet runs to the end without raising."""
    folder, env = workspace
    if "shop.json" in snippet.code:
        run(["-m", "flow_xray", *static_command()], folder, env)
    prelude = TRACING_YOUR_CODE.code if snippet.calls_agent else ""
    if snippet.pytest_example:
        (folder / "test_readme_example.py").write_text(
            prelude + "\n\n" + snippet.code, encoding="utf-8"
        )
        run(["-m", "pytest", "-q", "-p", "no:cacheprovider", "test_readme_example.py"], folder, env)
    elif snippet.notebook:
        cells = [prelude] if prelude else []
        cells.append(snippet.code)
        if snippet.code.startswith("%%"):  # a cell magic needs its extension loaded
            cells.insert(len(cells) - 1, "%load_ext flow_xray")
        paths = []
        for number, cell in enumerate(cells):
            path = folder / f"cell_{number}.py"
            path.write_text(cell, encoding="utf-8")
            paths.append(str(path))
        (folder / "notebook.py").write_text(NOTEBOOK_RUNNER, encoding="utf-8")
        run(["notebook.py", *paths], folder, env)
    else:
        (folder / "snippet.py").write_text(prelude + snippet.code, encoding="utf-8")
        run(["snippet.py"], folder, env)


def test_the_readme_has_its_snippets() -> None:
    """The extraction finds the README's python blocks, the list-item one included."""
    assert len(SNIPPETS) >= 10
    assert any("register_prices({" in s.code for s in SNIPPETS)
    assert TRACING_YOUR_CODE.code.startswith("from openai import OpenAI")
