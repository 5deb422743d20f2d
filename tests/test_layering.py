"""Dependencies point one way: checked by walking every module's imports."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "flow_xray"


def imports_of(path: Path) -> set[str]:
    """Every module name a file imports, at any place in the file (lazy imports included)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def modules(*relative: str) -> list[Path]:
    out: list[Path] = []
    for rel in relative:
        target = PACKAGE / rel
        out.extend(sorted(target.rglob("*.py")) if target.is_dir() else [target])
    return out


def _ids(paths: list[Path]) -> list[str]:
    return [str(p.relative_to(PACKAGE)) for p in paths]


API_ONLY = modules("decorator.py", "recording.py", "api.py")
NO_OTEL = modules(
    "attributes.py",
    "errors.py",
    "spans.py",
    "model.py",
    "tree.py",
    "serialize.py",
    "pricing.py",
    "llm.py",
    "limits.py",
    "files.py",
    "render",
    "autodiff",
)


@pytest.mark.parametrize("path", API_ONLY, ids=_ids(API_ONLY))
def test_decorator_uses_only_the_opentelemetry_api(path: Path) -> None:
    """The decorator side never imports the OpenTelemetry SDK, so it works under any provider."""
    sdk = {name for name in imports_of(path) if name.startswith("opentelemetry.sdk")}
    assert not sdk, f"{path.name} imports the SDK: {sorted(sdk)}"


@pytest.mark.parametrize("path", NO_OTEL, ids=_ids(NO_OTEL))
def test_pure_modules_never_import_opentelemetry(path: Path) -> None:
    """Model, tree, values, pricing, rendering and autodiff are free of OpenTelemetry."""
    otel = {name for name in imports_of(path) if name.startswith("opentelemetry")}
    assert not otel, f"{path.name} imports {sorted(otel)}"


@pytest.mark.parametrize("path", modules("autodiff"), ids=_ids(modules("autodiff")))
def test_autodiff_imports_nothing_from_the_tracing_side(path: Path) -> None:
    """autodiff may use only errors and the render layer from flow_xray."""
    ours = {n for n in imports_of(path) if n.startswith("flow_xray")}
    allowed = ("flow_xray.autodiff", "flow_xray.errors", "flow_xray.render")
    assert all(n.startswith(allowed) for n in ours), sorted(ours)


@pytest.mark.parametrize("path", modules("render"), ids=_ids(modules("render")))
def test_render_layer_sees_only_plain_data(path: Path) -> None:
    """Renderers import neither the tracing side nor autodiff."""
    ours = {n for n in imports_of(path) if n.startswith("flow_xray")}
    allowed = ("flow_xray.render", "flow_xray.errors", "flow_xray.model")
    assert all(n.startswith(allowed) for n in ours), sorted(ours)


def test_nothing_imports_the_cli() -> None:
    """cli.py is the top of the stack: only __main__ imports it."""
    importers = [
        p.name
        for p in PACKAGE.rglob("*.py")
        if p.name not in ("cli.py", "__main__.py")
        and any(n == "flow_xray.cli" or n.startswith("flow_xray.cli.") for n in imports_of(p))
    ]
    assert importers == []
