"""The autodiff package stays free of OpenTelemetry and of the tracing side."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import flow_xray.autodiff

PACKAGE = Path(flow_xray.autodiff.__file__).parent
ALLOWED_PROJECT = ("flow_xray.autodiff", "flow_xray.errors", "flow_xray.files")
# render/ draws the viewers; integrations/notebook is the notebook bridge (`Value._repr_html_`).
LAZY_PROJECT = ("flow_xray.render", "flow_xray.integrations.notebook")


def _imports(tree: ast.Module) -> list[tuple[str, bool]]:
    """(module, at top level) for every import; TYPE_CHECKING blocks count as lazy."""
    found: list[tuple[str, bool]] = []

    def visit(node: ast.AST, top: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inner = top
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                inner = False
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                inner = False
            if isinstance(child, ast.Import):
                found.extend((alias.name, top) for alias in child.names)
            elif isinstance(child, ast.ImportFrom) and child.module:
                names = [child.module]
                if child.module == "flow_xray":
                    names = [f"flow_xray.{alias.name}" for alias in child.names]
                found.extend((name, top) for name in names)
            visit(child, inner)

    visit(tree, True)
    return found


def test_autodiff_imports_only_stdlib_errors_and_lazy_render() -> None:
    """Module-level imports are stdlib, autodiff, errors or files; render (and the notebook
    bridge) only inside functions."""
    problems = []
    for path in sorted(PACKAGE.glob("*.py")):
        for module, top in _imports(ast.parse(path.read_text(encoding="utf-8"))):
            root = module.split(".")[0]
            if root in sys.stdlib_module_names or root == "__future__":
                continue
            if module.startswith(ALLOWED_PROJECT):
                continue
            if module.startswith(LAZY_PROJECT) and not top:
                continue
            problems.append(f"{path.name}: {module} ({'top level' if top else 'lazy'})")
    assert problems == []


def test_importing_value_loads_no_opentelemetry() -> None:
    """``from flow_xray import Value, ...`` in a fresh interpreter loads no OpenTelemetry."""
    code = (
        "from flow_xray import Value, topological_order, backward_from, zero_grad, "
        "value_graph_to_dot, write_dot, graph_to_ir, ir_to_json, TwoStepDebugger, "
        "GraphDebugger, iter_backward_steps, standalone_viewer_html, "
        "write_standalone_viewer_html\n"
        "import sys\n"
        "y = (Value(2.0) * 3).tanh(); y.backward(); value_graph_to_dot(y)\n"
        "bad = sorted(m for m in sys.modules if m.startswith('opentelemetry'))\n"
        "tracing = sorted(m for m in sys.modules if m.startswith('flow_xray.') and not "
        "m.startswith(('flow_xray.autodiff', 'flow_xray.errors', 'flow_xray.files', "
        "'flow_xray.hexids', 'flow_xray.jsontext', 'flow_xray.render')))\n"
        "assert not bad and not tracing, (bad, tracing)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=120
    )
    assert (done.returncode, done.stderr) == (0, "")
