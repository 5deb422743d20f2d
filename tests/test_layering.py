"""Dependencies point one way: a rule per folder, checked on every module's imports.

Each file of the package belongs to a layer by where it lives; a file in a
place no rule covers fails, so a new module is checked by default. The rules
are checked twice: statically (an AST walk over every import, lazy and
``TYPE_CHECKING`` ones included) and at run time (importing the
OpenTelemetry-free layers in a fresh interpreter loads no OpenTelemetry).
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "flow_xray"

# Top-level modules every layer may use: plain vocabulary, stdlib only.
# (`__version__` is the package attribute `from flow_xray import __version__` reads.)
SHARED = frozenset(
    {"errors", "attributes", "files", "interrupts", "jsontext", "hexids", "terminal", "__version__"}
)
# 0.2.0's and 0.3.x's import paths, kept at the top as thin re-exporting modules.
COMPAT = frozenset(
    {"value", "export_dot", "export_html", "ir", "debugger", "trace", "viewer"}
    | {"static_index", "merge"}
)


@dataclass(frozen=True)
class Rule:
    """What a layer may import: flow_xray layers, and how much of OpenTelemetry."""

    layers: frozenset[str]
    otel: str  # "none", "api" (never opentelemetry.sdk or exporters) or "any"
    why: str


RULES: dict[str, Rule] = {
    "shared": Rule(SHARED, "none", "vocabulary every layer uses"),
    "serialize": Rule(SHARED | {"serialize"}, "none", "values to text, no tracing"),
    "llm": Rule(SHARED | {"llm", "serialize"}, "none", "usage and prices are plain data"),
    "tree": Rule(
        SHARED | {"tree", "llm", "serialize"},
        "none",
        "the trace model on the floor (files, analyses, pages sit above it)",
    ),
    "analysis": Rule(
        SHARED | {"analysis", "tree", "llm", "serialize"}, "none", "pure functions over the model"
    ),
    "formats": Rule(
        SHARED | {"formats", "tree", "analysis", "serialize"}, "none", "trace files to the model"
    ),
    "render": Rule(
        SHARED | {"render", "tree", "analysis"},
        "none",
        "pages only present the model and its analyses (no llm/, no formats/)",
    ),
    "autodiff": Rule(SHARED | {"autodiff", "render"}, "none", "autodiff never loads tracing"),
    "runtime": Rule(
        SHARED | {"runtime"}, "api", "the one owner of process state (the tracing side needs it)"
    ),
    "tracing": Rule(
        SHARED | {"tracing", "runtime", "serialize", "llm", "tree"},
        "api",
        "the decorator works under any provider",
    ),
    "sdk": Rule(
        SHARED | {"sdk", "runtime", "tracing", "tree", "formats", "analysis", "serialize", "llm"},
        "any",
        "SDK side",
    ),
    "examples": Rule(
        SHARED | {"examples", "public", "tracing", "tree", "sdk"}, "api", "user-level code"
    ),
    "cli": Rule(
        SHARED
        | {"cli", "public", "tracing", "sdk", "tree", "serialize", "llm", "render", "autodiff"}
        | {"examples", "analysis", "formats", "runtime"},
        "api",
        "the top of the stack: it only drives the library",
    ),
    "integrations": Rule(
        SHARED | {"integrations", "public", "tracing", "tree"},
        "none",
        "pytest and notebooks drive the public library only",
    ),
    "compat": Rule(
        SHARED | {"autodiff", "render", "tracing", "tree", "analysis"},
        "api",
        "0.2.0 and 0.3.x paths over the layers",
    ),
}
# The one place the API side reaches the SDK side (documented in tracing/api.py):
# ``trace.capture()`` / ``trace.run()`` need the SDK's collecting processor.
# The trace model's 0.2.0 convenience methods (`TraceResult.to_html`, ``load``,
# ``save``, ``totals``, ``diff``, ...) are one-line delegations to the layers above it,
# imported when called (and their signatures' types); 0.3's ``TraceDiff.to_html`` the
# same for the diff page. Nothing in tree/ or analysis/ needs those layers to load.
# And the notebook bridge: `TraceResult._repr_html_` / `_repr_pretty_` and `Value._repr_html_`
# hand a notebook's display to `flow_xray.integrations.notebook`, imported when first shown.
BRIDGES = {
    ("tracing/api.py", "flow_xray.sdk.capture"),
    ("tree/model.py", "flow_xray.analysis"),
    ("tree/model.py", "flow_xray.formats"),
    ("tree/model.py", "flow_xray.render"),
    ("tree/model.py", "flow_xray.integrations.notebook"),
    ("autodiff/value.py", "flow_xray.integrations.notebook"),
    ("analysis/diff/trace_diff.py", "flow_xray.render.diff_page"),
}
ROOT_FILES = {"__init__.py", "__main__.py"}


def layer_of(path: Path) -> str | None:
    """The layer a package file belongs to, by its place in the tree; None if no rule covers it."""
    parts = path.relative_to(PACKAGE).parts
    if len(parts) > 1 and parts[0] in SHARED:  # a vocabulary package (jsontext/)
        return "shared"
    if len(parts) > 1:
        return parts[0] if parts[0] in RULES else None
    stem = path.stem
    if stem in SHARED:
        return "shared"
    if stem in COMPAT:
        return "compat"
    return None


def imports_of(path: Path) -> set[str]:
    """Every module name a file imports, at any place in the file (lazy imports included)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level > 0:
            names.add("<relative import>")
    return names


def target_layer(name: str) -> str:
    """The layer an imported flow_xray name lives in (``public`` for names from the root)."""
    parts = name.split(".")
    if len(parts) == 1:
        return "public"
    head = parts[1]
    if head in SHARED:
        return "shared"
    if head in COMPAT:
        return "public"  # `from flow_xray import trace` is the decorator, not the 0.2.0 module
    if (PACKAGE / head).is_dir():
        return head
    if (PACKAGE / f"{head}.py").exists():
        return head
    return "public"  # a name re-exported by flow_xray/__init__.py


PACKAGE_FILES = sorted(
    p for p in PACKAGE.rglob("*.py") if not (p.parent == PACKAGE and p.name in ROOT_FILES)
)
IDS = [str(p.relative_to(PACKAGE)) for p in PACKAGE_FILES]


@pytest.mark.parametrize("path", PACKAGE_FILES, ids=IDS)
def test_every_module_belongs_to_a_layer(path: Path) -> None:
    """A file no rule covers fails: new modules are checked by default."""
    assert layer_of(path) is not None, f"{path.relative_to(PACKAGE)}: put it in a layer folder"


def problems_in(source: Path, layer: str, where: str) -> list[str]:
    """The imports in ``source`` that ``layer``'s rule forbids (``where``: path in the package)."""
    rule = RULES[layer]
    problems = []
    for name in sorted(imports_of(source)):
        if name == "<relative import>":
            problems.append("relative import (write the full flow_xray path)")
        elif name.startswith("flow_xray") and not any(
            where == bridge and name.startswith(module) for bridge, module in BRIDGES
        ):
            target = target_layer(name)
            if target not in rule.layers | {layer, "shared"}:
                problems.append(f"{name} (layer {target!r})")
        elif name.startswith("opentelemetry"):
            sdk = name.startswith(("opentelemetry.sdk", "opentelemetry.exporter"))
            if rule.otel == "none" or (rule.otel == "api" and sdk):
                problems.append(name)
        elif name.startswith("google.protobuf") and rule.otel != "any":
            problems.append(name)
    return problems


@pytest.mark.parametrize("path", PACKAGE_FILES, ids=IDS)
def test_imports_follow_the_layer_rules(path: Path) -> None:
    """Each module imports only the flow_xray layers and the OpenTelemetry its layer allows."""
    layer = layer_of(path)
    if layer is None:
        pytest.skip("not in a layer (reported by test_every_module_belongs_to_a_layer)")
    where = path.relative_to(PACKAGE).as_posix()
    problems = problems_in(path, layer, where)
    assert not problems, f"{where} ({layer}: {RULES[layer].why}) imports {problems}"


@pytest.mark.parametrize(
    ("layer", "line"),
    [
        ("tracing", "from opentelemetry.sdk.trace import TracerProvider"),
        ("tracing", "from flow_xray.sdk.processor import attach"),
        ("tree", "from opentelemetry import trace"),
        ("serialize", "import opentelemetry.trace"),
        ("autodiff", "from flow_xray.tracing import trace"),
        ("render", "from flow_xray.formats.registry import load_trace"),
        ("render", "from flow_xray.llm.messages import chat_view"),
        ("tree", "from flow_xray.analysis.accounting import analyze"),
        ("analysis", "from flow_xray.render.page import page"),
        ("tree", "def lazy():\n    from flow_xray.sdk.capture import capture"),
        ("runtime", "from flow_xray.tracing import trace"),
        ("runtime", "from opentelemetry.sdk.trace import TracerProvider"),
    ],
)
def test_the_rules_catch_a_wrong_import(tmp_path: Path, layer: str, line: str) -> None:
    """The check itself fails on the imports the layers forbid, lazy ones included."""
    source = tmp_path / "module.py"
    source.write_text(line + "\n", encoding="utf-8")
    assert problems_in(source, layer, f"{layer}/module.py")


def _eager_imports(path: Path) -> set[str]:
    """The module names ``path`` imports when it is loaded (not in a function or a class
    body's method, not under ``if TYPE_CHECKING:``)."""
    names: set[str] = set()
    stack: list[ast.AST] = [ast.parse(path.read_text(encoding="utf-8"))]
    while stack:
        node = stack.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                continue
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                continue
            if isinstance(child, ast.Import):
                names.update(alias.name for alias in child.names)
            elif isinstance(child, ast.ImportFrom) and child.module:
                names.add(child.module)
            stack.append(child)
    return names


@pytest.mark.parametrize(("where", "module"), sorted(BRIDGES))
def test_a_bridge_imports_the_layer_above_only_when_called(where: str, module: str) -> None:
    """A bridge's upward import sits in the function that uses it: loading the module does
    not load the layer above (so no import cycle hides behind it)."""
    eager = _eager_imports(PACKAGE / where)
    assert not [name for name in eager if name.startswith(module)]


def test_nothing_imports_the_cli() -> None:
    """cli/ is the top of the stack: no module outside it imports it."""
    importers = [
        str(p.relative_to(PACKAGE))
        for p in PACKAGE.rglob("*.py")
        if layer_of(p) != "cli"
        and p != PACKAGE / "__main__.py"
        and any(n == "flow_xray.cli" or n.startswith("flow_xray.cli.") for n in imports_of(p))
    ]
    assert importers == []


OTEL_FREE = (
    "serialize",
    "llm",
    "tree",
    "formats",
    "render",
    "autodiff",
    "analysis",
    "integrations",
)


def test_opentelemetry_free_layers_load_no_opentelemetry() -> None:
    """Importing every module of the OpenTelemetry-free layers (and the package) loads none of it.

    Run in a fresh interpreter, so nothing imported by other tests can hide a
    transitive import.
    """
    modules = ["flow_xray"] + [
        ".".join(p.relative_to(PACKAGE.parent).with_suffix("").parts).removesuffix(".__init__")
        for p in PACKAGE_FILES
        if layer_of(p) in (*OTEL_FREE, "shared")
    ]
    code = (
        "import importlib, json, sys\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        "print(json.dumps(sorted(m for m in sys.modules"
        " if m.split('.')[0] in ('opentelemetry', 'google', 'grpc'))))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert json.loads(out.stdout) == []


def test_the_tracing_side_loads_no_opentelemetry_sdk() -> None:
    """Importing every module of tracing/ loads the OpenTelemetry API but not its SDK.

    The one bridge to the SDK (``trace.capture()`` reaching `flow_xray.sdk.capture`)
    is imported when a capture is first opened, not before. Fresh interpreter.
    """
    modules = [
        ".".join(p.relative_to(PACKAGE.parent).with_suffix("").parts).removesuffix(".__init__")
        for p in PACKAGE_FILES
        if layer_of(p) == "tracing"
    ]
    code = (
        "import importlib, json, sys\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        "print(json.dumps(sorted(m for m in sys.modules"
        " if m.startswith(('opentelemetry.sdk', 'opentelemetry.exporter', 'flow_xray.sdk')))))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert modules and json.loads(out.stdout) == []


def _modules_of(layer: str) -> list[str]:
    return [
        ".".join(p.relative_to(PACKAGE.parent).with_suffix("").parts).removesuffix(".__init__")
        for p in PACKAGE_FILES
        if layer_of(p) == layer
    ]


def test_the_runtime_loads_only_the_opentelemetry_api() -> None:
    """Importing every module of runtime/ loads the OpenTelemetry API and nothing above it.

    The tracing side keeps its state there, so runtime/ may not load the SDK,
    nor any flow_xray layer but itself (and the shared vocabulary). Fresh interpreter.
    """
    modules = _modules_of("runtime")
    allowed = ("flow_xray.runtime", *(f"flow_xray.{name}" for name in SHARED))
    code = (
        "import importlib, json, sys\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        "print(json.dumps(sorted(m for m in sys.modules"
        " if m.startswith(('opentelemetry.sdk', 'opentelemetry.exporter'))"
        f" or (m.startswith('flow_xray.') and not m.startswith({allowed!r})))))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert modules and json.loads(out.stdout) == []


# Process state lives in runtime/; these folders keep none (the other folders' own
# process-wide settings are checked by their own rules).
STATELESS = ("tracing", "sdk", "cli")
STATELESS_FILES = [p for p in PACKAGE_FILES if layer_of(p) in STATELESS]


@pytest.mark.parametrize(
    "path", STATELESS_FILES, ids=[str(p.relative_to(PACKAGE)) for p in STATELESS_FILES]
)
def test_no_global_statement_outside_the_runtime(path: Path) -> None:
    """Only runtime/ rebinds module globals: the other folders keep no process state."""
    names = [
        name
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Global)
        for name in node.names
    ]
    assert names == [], f"{path.relative_to(PACKAGE)}: global {', '.join(names)}"


def test_the_tracing_side_keeps_no_mutable_module_state() -> None:
    """No module of tracing/ binds a module-level name to a mutable container, lock or ContextVar.

    Checked on the imported modules (fresh interpreter), for every name a
    module assigns at its top level: what the tracing side needs to remember
    across calls is `flow_xray.runtime`'s.
    """
    assigned = {
        name: sorted(
            target.id
            for node in ast.parse(path.read_text(encoding="utf-8")).body
            if isinstance(node, (ast.Assign, ast.AnnAssign))
            for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
            if isinstance(target, ast.Name) and not target.id.startswith("__")
        )
        for path, name in zip(
            (p for p in PACKAGE_FILES if layer_of(p) == "tracing"),
            _modules_of("tracing"),
            strict=True,
        )
    }
    code = (
        "import collections, contextvars, importlib, json, threading, weakref\n"
        "mutable = (dict, list, set, bytearray, collections.deque, contextvars.ContextVar,\n"
        "    threading.local, weakref.WeakSet, weakref.WeakKeyDictionary,\n"
        "    weakref.WeakValueDictionary, type(threading.Lock()), type(threading.RLock()))\n"
        "found = []\n"
        f"for module, names in {assigned!r}.items():\n"
        "    loaded = importlib.import_module(module)\n"
        "    found += [f'{module}.{n}' for n in names if isinstance(getattr(loaded, n), mutable)]\n"
        "print(json.dumps(found))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert json.loads(out.stdout) == []


# A module is read in one sitting: past this, split it by concern (STYLE.md).
MAX_LINES = 500


def test_no_module_is_over_500_lines() -> None:
    """Every Python file of the package fits in one sitting (at most 500 lines)."""
    long = {
        str(path.relative_to(PACKAGE)): count
        for path in PACKAGE.rglob("*.py")
        if (count := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert long == {}
