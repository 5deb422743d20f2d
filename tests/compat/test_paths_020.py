"""0.2.0's import paths, entry points and commands, used as a 0.2.0 user did."""

from __future__ import annotations

import importlib
import os
import re
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

THIN = ["value", "export_dot", "export_html", "ir", "debugger", "trace", "viewer"]
NAMES_020 = {
    "flow_xray.value": ["Value", "backward_from", "topological_order", "zero_grad"],
    "flow_xray.export_dot": ["value_graph_to_dot", "write_dot"],
    "flow_xray.export_html": [
        "standalone_viewer_html",
        "write_standalone_viewer_html",
        "trace_to_standalone_html",
    ],
    "flow_xray.ir": ["graph_to_ir", "ir_to_json"],
    "flow_xray.debugger": ["GraphDebugger", "TwoStepDebugger", "iter_backward_steps"],
    "flow_xray.trace": ["TraceNode", "TraceResult", "trace"],
    "flow_xray.viewer": ["main"],
    "flow_xray.cli": ["main"],
}
TOP_020 = [
    "trace",
    "TraceNode",
    "TraceResult",
    "Value",
    "backward_from",
    "topological_order",
    "zero_grad",
    "value_graph_to_dot",
    "write_dot",
    "standalone_viewer_html",
    "write_standalone_viewer_html",
    "TwoStepDebugger",
    "GraphDebugger",
    "iter_backward_steps",
    "graph_to_ir",
    "ir_to_json",
    "__version__",
]


@pytest.mark.parametrize("module", sorted(NAMES_020))
def test_0_2_0_module_paths_export_their_names(module: str) -> None:
    """Every 0.2.0 module path imports and has the names 0.2.0 defined there."""
    loaded = importlib.import_module(module)
    assert [n for n in NAMES_020[module] if not hasattr(loaded, n)] == []


@pytest.mark.parametrize("name", THIN)
def test_thin_modules_say_they_are_the_0_2_0_path(name: str) -> None:
    """Each kept path says in its docstring that it is 0.2.0's import path."""
    doc = importlib.import_module(f"flow_xray.{name}").__doc__ or ""
    assert doc.startswith(f"0.2.0's import path ``flow_xray.{name}``")


def test_thin_modules_are_the_same_objects() -> None:
    """A 0.2.0 path gives the very objects of the new layout, not a second implementation."""
    import flow_xray
    from flow_xray import autodiff
    from flow_xray.debugger import GraphDebugger
    from flow_xray.export_dot import value_graph_to_dot
    from flow_xray.value import Value

    assert (Value, value_graph_to_dot, GraphDebugger) == (
        autodiff.Value,
        autodiff.value_graph_to_dot,
        autodiff.GraphDebugger,
    )
    assert flow_xray.Value is Value


@pytest.mark.parametrize("name", TOP_020)
def test_0_2_0_top_level_names(name: str) -> None:
    """``from flow_xray import NAME`` works for every name of 0.2.0's ``__all__``."""
    import flow_xray

    assert getattr(flow_xray, name) is not None


_ORDERS = {
    "decorator first": "from flow_xray import trace\nimport flow_xray.trace\n",
    "module first": "import flow_xray.trace\nfrom flow_xray import trace\n",
    "module only": "from flow_xray.trace import trace\n",
    "module object": "import flow_xray.trace as trace\n",
}
_USE = """
import flow_xray
@trace
def inc(x):
    return x + 1
@trace("named")
def twice(x):
    return inc(inc(x))
@trace(kind="tool")
def tool(x):
    trace.meta(model="gpt-4o-mini", prompt_tokens=3, completion_tokens=2, user="u1")
    return x
result = trace.run(twice, 1)
assert result.return_value == 3, result.return_value
with trace.capture() as captured:
    tool(5)
names = [n.name for n in result]
assert names == ["named", "inc", "inc"], names
node = captured.roots[0]
assert node.meta["prompt_tokens"] == 3 and node.meta["user"] == "u1", node.meta
print("ok", type(flow_xray.trace).__name__)
"""


@pytest.mark.parametrize("order", sorted(_ORDERS))
def test_trace_works_whichever_object_the_user_gets(order: str) -> None:
    """`@trace`, `@trace("x")`, `trace.run`, `.capture`, `.meta` work under any import order."""
    done = subprocess.run(
        [sys.executable, "-c", _ORDERS[order] + _USE],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.startswith("ok")


def test_cli_main_takes_argv_and_returns_the_status(capsys: pytest.CaptureFixture[str]) -> None:
    """0.2.0's ``flow_xray.cli.main(argv=None) -> int`` runs a command in-process."""
    from flow_xray.cli import main

    assert main(["dot", "demo"]) == 0
    assert capsys.readouterr().out.startswith("digraph G {")
    assert main(["dot", "demo", "sideways"]) == 2


@pytest.mark.parametrize("module", ["flow_xray.cli", "flow_xray"])
def test_python_m_runs_the_cli(module: str, tmp_path: Path) -> None:
    """``python -m flow_xray.cli dot demo`` (0.2.0) and ``python -m flow_xray`` print the DOT."""
    done = subprocess.run(
        [sys.executable, "-m", module, "dot", "demo", "backward"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("digraph G {") and "grad: 1" in done.stdout


def test_trace_to_standalone_html_is_the_trace_viewer() -> None:
    """``export_html.trace_to_standalone_html(result, title=...)`` is the offline trace page."""
    from flow_xray import trace
    from flow_xray.export_html import trace_to_standalone_html

    @trace
    def step(x: int) -> int:
        return x * 2

    result = trace.run(step, 4)
    page = trace_to_standalone_html(result, title="my run")
    assert page == result.to_html(title="my run")
    assert "<title>my run</title>" in page
    assert "flow-xray trace" in trace_to_standalone_html(result)


def _viewer(dot_file: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [os.path.join(os.path.dirname(sys.executable), "flow-xray-viewer"), str(dot_file), *args],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
    )


def test_flow_xray_viewer_serves_the_dot_file_on_loopback(tmp_path: Path) -> None:
    """``flow-xray-viewer g.dot --no-browser`` serves the viewer and /graph.dot on 127.0.0.1."""
    dot = "digraph G { a -> b; }\n"
    path = tmp_path / "g.dot"
    path.write_text(dot, encoding="utf-8")
    proc = _viewer(path, "-p", "0", "--no-browser")
    try:
        assert proc.stderr is not None
        url = proc.stderr.readline().strip()
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/viewer\.html", url), url
        with urllib.request.urlopen(url, timeout=30) as page:  # loopback only
            html = page.read().decode("utf-8")
        with urllib.request.urlopen(url.replace("viewer.html", "graph.dot"), timeout=30) as raw:
            served = raw.read().decode("utf-8")
        assert "<title>g.dot</title>" in html and "Content-Security-Policy" in html
        assert served == dot
    finally:
        proc.send_signal(signal.SIGINT)
        rest = proc.communicate(timeout=30)[1]
    assert (proc.returncode, rest.strip().splitlines()[-1]) == (0, "stopped")


def test_flow_xray_viewer_missing_file_is_one_error_line(tmp_path: Path) -> None:
    """A DOT file that does not exist is one ``error:`` line and exit status 2."""
    proc = _viewer(tmp_path / "missing.dot", "--no-browser")
    err = proc.communicate(timeout=60)[1]
    assert (proc.returncode, err.splitlines()) == (
        2,
        [f"error: not a file: {tmp_path}/missing.dot"],
    )
