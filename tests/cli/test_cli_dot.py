"""`flow-xray dot demo` and `flow-xray dot export`: autodiff graphs as DOT and viewers."""

from __future__ import annotations

import re
from pathlib import Path

from cli_support import SCRIPTS, invoke

from flow_xray.autodiff import value_graph_to_dot
from flow_xray.autodiff.demo import demo_graph


def labels(dot: str) -> dict[str, str]:
    """Box label by node name (the first label row)."""
    found = re.findall(r'label="([^"]*)"\];', dot)
    return {label.split("\\n")[0]: label for label in found if "\\n" in label}


def test_dot_demo_writes_both_graphs_by_default(in_tmp: Path) -> None:
    """With no WHICH, demo_forward.dot and demo_backward.dot are written."""
    result = invoke("dot", "demo")
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in in_tmp.iterdir()) == ["demo_backward.dot", "demo_forward.dot"]


def test_dot_demo_forward_is_the_library_dot(in_tmp: Path) -> None:
    """The forward file is exactly the demo graph's DOT, without gradients."""
    invoke("dot", "demo", "forward")
    text = (in_tmp / "demo_forward.dot").read_text(encoding="utf-8")
    assert text == value_graph_to_dot(demo_graph())
    assert "grad:" not in text


def test_dot_demo_backward_shows_gradients(in_tmp: Path) -> None:
    """The backward file has the gradients after backward: 1 at the output."""
    invoke("dot", "demo", "backward")
    assert not (in_tmp / "demo_forward.dot").exists()
    boxes = labels((in_tmp / "demo_backward.dot").read_text(encoding="utf-8"))
    assert boxes["o"].endswith("grad: 1")
    assert all("grad: " in box for box in boxes.values())


def test_dot_demo_output_dir(in_tmp: Path) -> None:
    """--output-dir puts the files in that folder."""
    (in_tmp / "graphs").mkdir()
    invoke("dot", "demo", "--output-dir", "graphs")
    assert sorted(p.name for p in (in_tmp / "graphs").iterdir()) == [
        "demo_backward.dot",
        "demo_forward.dot",
    ]


def test_dot_demo_backward_html_is_the_stepping_viewer(in_tmp: Path) -> None:
    """`dot demo backward --html` writes the viewer that steps through the backward pass."""
    invoke("dot", "demo", "backward", "--html", "steps.html")
    html = (in_tmp / "steps.html").read_text(encoding="utf-8")
    assert "step 1/" in html


def test_dot_demo_forward_html(in_tmp: Path) -> None:
    """`dot demo forward --html` writes an offline viewer with no stepping frames."""
    invoke("dot", "demo", "forward", "--html", "fwd.html")
    html = (in_tmp / "fwd.html").read_text(encoding="utf-8")
    assert html.lstrip().lower().startswith("<!doctype") and "step 1/" not in html


def test_dot_export_writes_stem_dot(in_tmp: Path) -> None:
    """`dot export SCRIPT` writes <stem>.dot with the graph of the script's `root`."""
    result = invoke("dot", "export", str(SCRIPTS / "value_root.py"))
    assert result.exit_code == 0, result.output
    boxes = labels((in_tmp / "value_root.dot").read_text(encoding="utf-8"))
    assert {"a", "b", "c", "out"} <= set(boxes)
    assert boxes["out"] == "out\\nop: ReLU\\ndata: 4"


def test_dot_export_backward_fills_gradients(in_tmp: Path) -> None:
    """--backward runs the backward pass first: d out / d a = b = -3."""
    invoke("dot", "export", str(SCRIPTS / "value_root.py"), "--backward", "-o", "g.dot")
    boxes = labels((in_tmp / "g.dot").read_text(encoding="utf-8"))
    assert boxes["a"].endswith("grad: -3")
    assert boxes["b"].endswith("grad: 2")


def test_dot_export_html(in_tmp: Path) -> None:
    """--html also writes an offline viewer."""
    invoke("dot", "export", str(SCRIPTS / "value_root.py"), "--html", "g.html")
    assert sorted(p.name for p in in_tmp.iterdir()) == ["g.html", "value_root.dot"]


def test_dot_export_runs_script_not_as_main(in_tmp: Path) -> None:
    """The export script's `if __name__ == "__main__":` block does not run."""
    script = in_tmp / "graph.py"
    script.write_text(
        "from flow_xray import Value\nroot = Value(1.0, 'r')\n"
        "if __name__ == '__main__':\n    raise SystemExit('main block ran')\n",
        encoding="utf-8",
    )
    assert invoke("dot", "export", str(script)).exit_code == 0


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
