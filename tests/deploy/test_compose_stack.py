"""deploy/compose.yaml and the Tempo and Grafana configs it mounts: a stack that wires together."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import Any, NoReturn

import pytest
from deploy_checks import (
    COMPOSE_FILE,
    DEPLOY_DIR,
    EXPORTERS_DIR,
    compose_bind_mounts,
    compose_environment,
    compose_named_volumes,
    compose_published_ports,
    env_references,
    host_and_port,
    load_yaml,
    with_defaults,
)

COLLECTOR_IMAGE = "otel/opentelemetry-collector-contrib"
COLLECTOR_CONFIG_FLAG = "--config="


def _compose() -> dict[str, Any]:
    loaded = load_yaml(COMPOSE_FILE)
    assert isinstance(loaded, dict) and loaded.get("services"), "compose.yaml has no services"
    return loaded


def _services() -> dict[str, dict[str, Any]]:
    services: dict[str, dict[str, Any]] = _compose()["services"]
    return services


def _collectors() -> dict[str, dict[str, Any]]:
    return {
        name: svc for name, svc in _services().items() if svc["image"].startswith(COLLECTOR_IMAGE)
    }


def _config_path(collector: dict[str, Any]) -> str:
    command: list[str] = collector["command"]
    (flag,) = [arg for arg in command if arg.startswith(COLLECTOR_CONFIG_FLAG)]
    return flag.removeprefix(COLLECTOR_CONFIG_FLAG)


def _mounted_config(collector: dict[str, Any]) -> Path:
    """The host file mounted where the Collector's --config flag points."""
    target = _config_path(collector)
    (source,) = [src for src, dst in compose_bind_mounts(collector) if dst == target]
    return (COMPOSE_FILE.parent / source).resolve()


def _profiles() -> set[str]:
    return {profile for svc in _services().values() for profile in svc.get("profiles", [])}


def test_compose_file_parses_with_services() -> None:
    """compose.yaml is a YAML mapping with at least one service."""
    assert _services()


def test_every_image_is_pinned() -> None:
    """Each service's image carries an explicit tag (or digest) that is not ``latest``."""
    for name, service in _services().items():
        image = service["image"]
        tag = image.rpartition(":")[2] if ":" in image.rpartition("/")[2] else ""
        assert "@sha256:" in image or (tag and tag != "latest"), f"{name}: {image} is not pinned"


def test_bind_mounted_host_paths_exist() -> None:
    """Every bind mount's host path exists, resolved relative to the compose file."""
    for name, service in _services().items():
        for source, _ in compose_bind_mounts(service):
            assert (COMPOSE_FILE.parent / source).exists(), f"{name}: {source} does not exist"


def test_named_volumes_are_declared() -> None:
    """Every named volume a service mounts is declared under the top-level ``volumes``."""
    declared = set(_compose().get("volumes") or {})
    for name, service in _services().items():
        assert set(compose_named_volumes(service)) <= declared, name


def test_collectors_mount_an_exporters_config_at_their_config_path() -> None:
    """Each Collector mounts one of exporters/*.yaml exactly where its --config flag points."""
    configs = {path.resolve() for path in EXPORTERS_DIR.glob("*.yaml")}
    assert _collectors()
    for name, collector in _collectors().items():
        assert _mounted_config(collector) in configs, name


def test_each_backend_profile_has_exactly_one_collector() -> None:
    """The jaeger and tempo profiles (and every other) start one Collector each."""
    assert {"jaeger", "tempo"} <= _profiles()
    for profile in sorted(_profiles()):
        in_profile = [
            name for name, svc in _collectors().items() if profile in svc.get("profiles", [])
        ]
        assert len(in_profile) == 1, f"profile {profile}: collectors {in_profile}"


def test_every_service_belongs_to_a_profile() -> None:
    """No service starts without a profile, so ``up`` starts only the backend asked for."""
    assert [name for name, svc in _services().items() if not svc.get("profiles")] == []


def test_published_ports_bind_loopback_only() -> None:
    """Every published port is bound to 127.0.0.1: the stack has no authentication."""
    for name, service in _services().items():
        for host_ip, host_port, container_port in compose_published_ports(service):
            assert host_ip == "127.0.0.1", (
                f"{name}: {host_port}:{container_port} binds {host_ip or 'all'}"
            )


def test_collectors_publish_the_otlp_ports() -> None:
    """Each Collector publishes OTLP gRPC 4317 and HTTP 4318 on the same host ports."""
    for name, collector in _collectors().items():
        published = {(host, container) for _, host, container in compose_published_ports(collector)}
        assert {("4317", "4317"), ("4318", "4318")} <= published, name


def test_collector_exports_reach_a_service_in_its_profile() -> None:
    """Each Collector's OTLP export endpoint names a service that shares one of its profiles."""
    services = _services()
    for name, collector in _collectors().items():
        config = load_yaml(_mounted_config(collector))
        env = compose_environment(collector)
        for exporter in (config.get("exporters") or {}).values():
            endpoint = (exporter or {}).get("endpoint")
            if endpoint is None:
                continue
            (variable,) = [ref for ref, _ in env_references(endpoint)]
            host, _ = host_and_port(env.get(variable) or with_defaults(endpoint))
            assert host in services, f"{name}: exports to unknown service {host}"
            shared = set(services[host]["profiles"]) & set(collector["profiles"])
            assert shared, f"{name}: {host} is never started with it"


def _tempo_config() -> dict[str, Any]:
    config: dict[str, Any] = load_yaml(DEPLOY_DIR / "tempo" / "tempo.yaml")
    return config


def test_collector_reaches_tempo_on_its_otlp_grpc_port() -> None:
    """The Tempo Collector's endpoint port is the gRPC port Tempo's distributor listens on."""
    tempo_port = host_and_port(
        _tempo_config()["distributor"]["receivers"]["otlp"]["protocols"]["grpc"]["endpoint"]
    )[1]
    endpoint = compose_environment(_services()["collector-tempo"])["TEMPO_OTLP_ENDPOINT"]
    assert host_and_port(endpoint) == ("tempo", tempo_port)


def test_tempo_receivers_listen_on_all_interfaces() -> None:
    """Tempo's OTLP receivers bind 0.0.0.0, reachable from the Collector's container."""
    protocols = _tempo_config()["distributor"]["receivers"]["otlp"]["protocols"]
    assert {host_and_port(protocols[p]["endpoint"])[0] for p in ("grpc", "http")} == {"0.0.0.0"}


def test_tempo_stores_traces_on_its_mounted_volume() -> None:
    """Tempo uses local storage whose block and WAL paths lie on the volume mounted into it."""
    trace = _tempo_config()["storage"]["trace"]
    assert trace["backend"] == "local"
    tempo = _services()["tempo"]
    mount_points = [
        PurePosixPath(str(volume).split(":")[1])
        for volume in tempo["volumes"]
        if str(volume).split(":")[0] in compose_named_volumes(tempo)
    ]
    for path in (trace["local"]["path"], trace["wal"]["path"]):
        assert any(PurePosixPath(path).is_relative_to(mount) for mount in mount_points), path


def test_grafana_datasource_points_at_tempo_http_port() -> None:
    """Grafana's provisioned Tempo data source uses the tempo service name and Tempo's HTTP port."""
    provisioning = load_yaml(DEPLOY_DIR / "grafana" / "provisioning" / "datasources" / "tempo.yaml")
    (datasource,) = [ds for ds in provisioning["datasources"] if ds["type"] == "tempo"]
    assert host_and_port(datasource["url"]) == (
        "tempo",
        _tempo_config()["server"]["http_listen_port"],
    )
    assert set(_services()["tempo"]["profiles"]) >= set(_services()["grafana"]["profiles"])


def test_grafana_mounts_the_provisioning_directory() -> None:
    """Grafana mounts the repository's datasource provisioning where Grafana reads it."""
    mounts = dict(compose_bind_mounts(_services()["grafana"]))
    assert mounts["./grafana/provisioning/datasources"] == "/etc/grafana/provisioning/datasources"


def test_readme_names_every_profile() -> None:
    """deploy/README.md tells how to start each compose profile."""
    readme = (DEPLOY_DIR / "README.md").read_text(encoding="utf-8")
    for profile in sorted(_profiles()):
        assert f"--profile {profile}" in readme, profile


@pytest.mark.e2e
def test_compose_file_matches_the_compose_spec_schema(
    e2e_missing: Callable[[str], NoReturn],
) -> None:
    """compose.yaml validates against the Compose Specification JSON schema (check-jsonschema)."""
    if importlib.util.find_spec("check_jsonschema") is None:
        e2e_missing("check-jsonschema not installed (pip install check-jsonschema)")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "check_jsonschema",
            "--builtin-schema",
            "vendor.compose-spec",
            str(COMPOSE_FILE),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
