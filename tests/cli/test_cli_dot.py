"""`flow-xray dot demo` and `flow-xray dot export`: autodiff graphs as DOT and viewers."""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import NoReturn

import pytest
from cli_support import SCRIPTS, invoke

from flow_xray.autodiff import Value, value_graph_to_dot
from flow_xray.autodiff.demo import demo_graph, expression_graph


@pytest.fixture
def fresh_ids() -> Iterator[Callable[[], None]]:
    """Yields 0.2.0's ``Value._next_seq = 0`` reset, to call before each build: the command
    then numbers its Values v0, v1, ... as in a fresh process (the counter is put back past
    every id afterwards)."""
    saved = Value._next_seq

    def reset() -> None:
        Value._next_seq = 0

    yield reset
    Value._next_seq = max(saved, Value._next_seq)


def labels(dot: str) -> dict[str, str]:
    """Box label by node name (the first label row)."""
    found = re.findall(r'label="([^"]*)"\];', dot)
    return {label.split("\\n")[0]: label for label in found if "\\n" in label}


def test_dot_demo_prints_the_forward_graph_to_stdout(
    in_tmp: Path, fresh_ids: Callable[[], None]
) -> None:
    """With no output option, `dot demo` prints 0.2.0's demo graph (forward) and writes nothing."""
    fresh_ids()
    result = invoke("dot", "demo")
    assert result.exit_code == 0, result.output
    fresh_ids()
    assert result.stdout == value_graph_to_dot(expression_graph())
    assert list(in_tmp.iterdir()) == []


def test_dot_demo_default_graph_is_0_2_0s_expression() -> None:
    """The default demo is ((a*b)+c).relu().tanh() with a=2, b=-3, c=10, named L."""
    boxes = labels(invoke("dot", "demo").stdout)
    assert {"a", "b", "c", "L"} <= set(boxes)
    assert boxes["L"] == "L\\nop: tanh\\ndata: 0.999329"
    assert "op: ReLU" in invoke("dot", "demo").stdout


def test_dot_demo_backward_prints_gradients() -> None:
    """`dot demo backward` prints the graph after backward: 1 at L, every box with a grad."""
    boxes = labels(invoke("dot", "demo", "backward").stdout)
    assert boxes["L"].endswith("grad: 1")
    assert boxes["a"].endswith("grad: -0.00402285")
    assert all("grad: " in box for box in boxes.values())


def test_dot_demo_neuron_graph(fresh_ids: Callable[[], None]) -> None:
    """`--graph neuron` prints the tanh neuron instead."""
    fresh_ids()
    printed = invoke("dot", "demo", "--graph", "neuron").stdout
    fresh_ids()
    assert printed == value_graph_to_dot(demo_graph())


def test_dot_demo_output_dir_is_created_with_both_files(
    in_tmp: Path, fresh_ids: Callable[[], None]
) -> None:
    """--output-dir DIR creates DIR (and parents) and writes forward.dot and backward.dot."""
    fresh_ids()
    result = invoke("dot", "demo", "--output-dir", "out/graphs")
    assert result.exit_code == 0, result.output
    folder = in_tmp / "out" / "graphs"
    assert sorted(p.name for p in folder.iterdir()) == ["backward.dot", "forward.dot"]
    fresh_ids()
    assert (folder / "forward.dot").read_text(encoding="utf-8") == value_graph_to_dot(
        expression_graph()
    )
    assert "grad: 1" in (folder / "backward.dot").read_text(encoding="utf-8")
    assert result.stdout == ""


def test_dot_demo_backward_html_is_the_stepping_viewer(in_tmp: Path) -> None:
    """`dot demo backward --html` writes only the viewer that steps through the backward pass."""
    result = invoke("dot", "demo", "backward", "--html", "steps.html")
    html = (in_tmp / "steps.html").read_text(encoding="utf-8")
    assert "step 1/" in html
    assert (result.stdout, [p.name for p in in_tmp.iterdir()]) == ("", ["steps.html"])


def test_dot_demo_forward_html(in_tmp: Path) -> None:
    """`dot demo forward --html` writes an offline viewer with no stepping frames."""
    invoke("dot", "demo", "forward", "--html", "fwd.html")
    html = (in_tmp / "fwd.html").read_text(encoding="utf-8")
    assert html.lstrip().lower().startswith("<!doctype") and "step 1/" not in html


def test_graphviz_renders_what_dot_demo_prints(
    in_tmp: Path, e2e_missing: Callable[[str], NoReturn]
) -> None:
    """`flow-xray dot demo backward | dot -Tsvg` works with the real Graphviz."""
    if shutil.which("dot") is None:
        e2e_missing("graphviz `dot` not found")
    printed = invoke("dot", "demo", "backward").stdout
    done = subprocess.run(
        ["dot", "-Tsvg"], input=printed, capture_output=True, text=True, check=False, timeout=60
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.count('class="node"') == 7 and "ReLU" in done.stdout


def test_dot_export_prints_the_scripts_root(in_tmp: Path) -> None:
    """`dot export SCRIPT` prints the DOT of the script's `root` and writes nothing."""
    result = invoke("dot", "export", str(SCRIPTS / "value_root.py"))
    assert result.exit_code == 0, result.output
    boxes = labels(result.stdout)
    assert {"a", "b", "c", "out"} <= set(boxes)
    assert boxes["out"] == "out\\nop: ReLU\\ndata: 4"
    assert list(in_tmp.iterdir()) == []


def test_dot_export_output_file(in_tmp: Path) -> None:
    """-o FILE.dot writes the DOT there and prints nothing on stdout."""
    result = invoke("dot", "export", str(SCRIPTS / "value_root.py"), "-o", "g.dot")
    assert result.stdout == ""
    assert labels((in_tmp / "g.dot").read_text(encoding="utf-8"))["out"].startswith("out")


def test_dot_export_backward_fills_gradients(in_tmp: Path) -> None:
    """--backward runs the backward pass first: d out / d a = b = -3."""
    invoke("dot", "export", str(SCRIPTS / "value_root.py"), "--backward", "-o", "g.dot")
    boxes = labels((in_tmp / "g.dot").read_text(encoding="utf-8"))
    assert boxes["a"].endswith("grad: -3")
    assert boxes["b"].endswith("grad: 2")


def test_dot_export_html(in_tmp: Path) -> None:
    """--html writes an offline viewer (and no DOT unless -o is given too)."""
    invoke("dot", "export", str(SCRIPTS / "value_root.py"), "--html", "g.html")
    assert sorted(p.name for p in in_tmp.iterdir()) == ["g.html"]
    invoke("dot", "export", str(SCRIPTS / "value_root.py"), "--html", "h.html", "-o", "h.dot")
    assert sorted(p.name for p in in_tmp.iterdir()) == ["g.html", "h.dot", "h.html"]


def test_dot_export_runs_script_as_main(in_tmp: Path) -> None:
    """As in 0.2.0 the script runs as __main__: a root built in its main block is found."""
    script = in_tmp / "graph.py"
    script.write_text(
        "from flow_xray import Value\n"
        "if __name__ == '__main__':\n    root = Value(1.0, label='from_main') * 2\n",
        encoding="utf-8",
    )
    result = invoke("dot", "export", str(script))
    assert result.exit_code == 0, result.output
    assert "from_main" in labels(result.stdout)


def test_dot_export_script_crash_shows_its_traceback(in_tmp: Path) -> None:
    """A script that raises shows its own traceback and ends with one error line."""
    script = in_tmp / "graph.py"
    script.write_text(
        "def build():\n    raise ValueError('no graph')\n\nroot = build()\n", encoding="utf-8"
    )
    result = invoke("dot", "export", str(script))
    assert result.exit_code == 2
    lines = result.stderr.splitlines()
    assert lines[0] == "Traceback (most recent call last):"
    assert all("flow_xray" not in line for line in lines if line.startswith('  File "'))
    assert lines[-1] == f"error: {script} raised ValueError: no graph"
    assert not (in_tmp / "graph.dot").exists()
