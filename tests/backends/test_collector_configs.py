"""Every Collector config in the repository, checked by the real Collector; the build recipe.

``otelcol validate`` loads a config exactly as start-up does (every component
type known, every setting decoded and validated) without opening a port.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.backends.binaries import BUILD_SCRIPT, MANIFEST, jaeger_path, otelcol_path, versions
from tests.backends.servers import validate_config

REPO = Path(__file__).resolve().parents[2]
CONFIGS = sorted((REPO / "exporters").glob("*.yaml"))
K8S_CONFIGMAP = REPO / "deploy" / "k8s" / "configmap.yaml"
KINDS = ("receivers", "processors", "exporters", "extensions")


def _k8s_gateway_config() -> str:
    configmap = yaml.safe_load(K8S_CONFIGMAP.read_text(encoding="utf-8"))
    text: str = configmap["data"]["collector.yaml"]
    return text


def _all_configs() -> list[dict[str, Any]]:
    texts = [path.read_text(encoding="utf-8") for path in CONFIGS] + [_k8s_gateway_config()]
    return [yaml.safe_load(text) for text in texts]


def _types_used() -> dict[str, set[str]]:
    """Component types (``otlp_grpc`` for ``otlp_grpc/jaeger``) each kind of section uses."""
    used: dict[str, set[str]] = {kind: set() for kind in KINDS}
    for config in _all_configs():
        for kind in KINDS:
            used[kind].update(cid.split("/", 1)[0] for cid in config.get(kind) or {})
    return used


@pytest.mark.e2e
@pytest.mark.parametrize("config", CONFIGS, ids=[path.name for path in CONFIGS])
def test_exporter_config_passes_collector_validate(otelcol: Path, config: Path) -> None:
    """`otelcol validate --config exporters/NAME.yaml` succeeds with no variable set."""
    completed = validate_config(otelcol, config)
    assert completed.returncode == 0, completed.stdout + completed.stderr


@pytest.mark.e2e
def test_k8s_gateway_config_passes_collector_validate(otelcol: Path, tmp_path: Path) -> None:
    """The Collector config in deploy/k8s/configmap.yaml passes `otelcol validate`."""
    config = tmp_path / "collector.yaml"
    config.write_text(_k8s_gateway_config(), encoding="utf-8")
    completed = validate_config(otelcol, config)
    assert completed.returncode == 0, completed.stdout + completed.stderr


@pytest.mark.e2e
def test_validate_rejects_an_unknown_component(otelcol: Path, tmp_path: Path) -> None:
    """The validate check can fail: a misspelt exporter type is refused, naming it."""
    text = (REPO / "exporters" / "jaeger.yaml").read_text(encoding="utf-8")
    config = tmp_path / "broken.yaml"
    config.write_text(text.replace("otlp_grpc/jaeger", "otlp_grcp/jaeger"), encoding="utf-8")
    completed = validate_config(otelcol, config)
    assert completed.returncode != 0
    assert "otlp_grcp" in completed.stdout + completed.stderr


@pytest.mark.e2e
def test_built_collector_has_exactly_the_components_the_configs_use(otelcol: Path) -> None:
    """`otelcol components` lists the receivers, processors, exporters, extensions used, no more."""
    listed = yaml.safe_load(
        subprocess.run(
            [str(otelcol), "components"], capture_output=True, text=True, check=True, timeout=60
        ).stdout
    )
    built = {kind: {item["name"] for item in listed.get(kind) or []} for kind in KINDS}
    assert built == _types_used()
    assert not listed.get("connectors")


def test_manifest_components_carry_the_pinned_versions() -> None:
    """Every module in otelcol-builder.yaml is at the pinned Collector release (0.x or 1.x)."""
    pinned = versions()
    manifest = yaml.safe_load(MANIFEST.read_text(encoding="utf-8"))
    modules = [item["gomod"] for key in (*KINDS, "providers") for item in manifest.get(key, [])]
    modules.append(manifest["telemetry"]["gomod"])
    allowed = {f"v{pinned['COLLECTOR_VERSION']}", f"v{pinned['COLLECTOR_STABLE_VERSION']}"}
    assert {module.split()[1] for module in modules} <= allowed
    assert str(manifest["dist"]["version"]) == pinned["COLLECTOR_VERSION"]


def test_manifest_lists_one_module_per_component_kind_used() -> None:
    """The manifest has as many receivers, processors, exporters, extensions as the configs use."""
    manifest = yaml.safe_load(MANIFEST.read_text(encoding="utf-8"))
    counts = {kind: len(manifest.get(kind) or []) for kind in KINDS}
    assert counts == {kind: len(types) for kind, types in _types_used().items()}


def test_build_script_skips_binaries_already_built(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """build.sh builds nothing, and needs no Go, when both binaries are already in its cache."""
    monkeypatch.setenv("FLOW_XRAY_BACKENDS_DIR", str(tmp_path))
    for target in (otelcol_path(), jaeger_path()):
        target.parent.mkdir(parents=True)
        target.write_text("#!/bin/sh\n", encoding="utf-8")
        target.chmod(0o755)
    completed = subprocess.run(
        ["bash", str(BUILD_SCRIPT)],
        env={"PATH": "/usr/bin:/bin", "FLOW_XRAY_BACKENDS_DIR": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.count("already built") == 2, completed.stdout
