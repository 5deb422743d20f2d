"""deploy/k8s: a horizontally scaled Collector gateway whose manifests reference each other."""

from __future__ import annotations

import importlib
import importlib.util
import re
from collections.abc import Callable
from typing import Any, NoReturn

import pytest
import yaml
from deploy_checks import (
    EXPORTERS_DIR,
    K8S_DIR,
    container_port_number,
    env_references,
    host_and_port,
    load_yaml,
    load_yaml_documents,
    wiring_problems,
    with_defaults,
)

MANIFEST_PATHS = sorted(
    path for path in K8S_DIR.glob("*.yaml") if path.name != "kustomization.yaml"
)
CONFIG_KEY = "collector.yaml"
MIB = {"Mi": 1, "Gi": 1024}


def _objects() -> list[dict[str, Any]]:
    return [doc for path in MANIFEST_PATHS for doc in load_yaml_documents(path)]


def _one(kind: str) -> dict[str, Any]:
    (found,) = [obj for obj in _objects() if obj["kind"] == kind]
    return found


def _pod_labels() -> dict[str, str]:
    labels: dict[str, str] = _one("Deployment")["spec"]["template"]["metadata"]["labels"]
    return labels


def _container() -> dict[str, Any]:
    containers: list[dict[str, Any]] = _one("Deployment")["spec"]["template"]["spec"]["containers"]
    (container,) = containers
    return container


def _gateway_config() -> dict[str, Any]:
    config: dict[str, Any] = yaml.safe_load(_one("ConfigMap")["data"][CONFIG_KEY])
    return config


def _mebibytes(quantity: str) -> int:
    match = re.fullmatch(r"(\d+)(Mi|Gi)(B?)", quantity)
    if match is None:
        raise ValueError(f"unsupported memory quantity {quantity!r}")
    return int(match.group(1)) * MIB[match.group(2)]


def _selects(selector: dict[str, str]) -> bool:
    return bool(selector) and selector.items() <= _pod_labels().items()


def test_every_manifest_parses_as_kubernetes_objects() -> None:
    """Each document in deploy/k8s/*.yaml has apiVersion, kind and metadata.name."""
    assert MANIFEST_PATHS
    for path in MANIFEST_PATHS:
        documents = load_yaml_documents(path)
        assert documents, path.name
        for doc in documents:
            assert doc["apiVersion"] and doc["kind"] and doc["metadata"]["name"], path.name


def test_kustomization_lists_exactly_the_manifests() -> None:
    """kustomization.yaml's resources are exactly the manifest files in deploy/k8s."""
    kustomization = load_yaml(K8S_DIR / "kustomization.yaml")
    assert sorted(kustomization["resources"]) == [path.name for path in MANIFEST_PATHS]


def test_kustomization_namespace_is_the_declared_namespace() -> None:
    """``kubectl apply -k`` puts every object in the Namespace the manifests create."""
    kustomization = load_yaml(K8S_DIR / "kustomization.yaml")
    assert kustomization["namespace"] == _one("Namespace")["metadata"]["name"]


def test_deployment_selector_matches_its_pods() -> None:
    """The Deployment's selector selects its own pod template."""
    assert _selects(_one("Deployment")["spec"]["selector"]["matchLabels"])


def test_deployment_runs_at_least_two_replicas() -> None:
    """The gateway runs two or more replicas, so one can restart while the other receives."""
    assert _one("Deployment")["spec"]["replicas"] >= 2


def test_container_declares_otlp_and_health_ports() -> None:
    """The Collector container declares ports 4317, 4318 and 13133."""
    declared = {port["containerPort"] for port in _container()["ports"]}
    assert {4317, 4318, 13133} <= declared


def test_container_sets_resource_requests_and_limits() -> None:
    """The container requests and limits both CPU and memory."""
    resources = _container()["resources"]
    for section in ("requests", "limits"):
        assert {"cpu", "memory"} <= set(resources[section]), section


def test_service_selects_the_gateway_pods() -> None:
    """The Service's selector matches the Deployment's pod labels."""
    assert _selects(_one("Service")["spec"]["selector"])


def test_service_exposes_otlp_on_container_ports() -> None:
    """The Service exposes 4317 and 4318, each routed to the container port of the same number."""
    container = _container()
    routes = {
        port["port"]: container_port_number(container, port["targetPort"])
        for port in _one("Service")["spec"]["ports"]
    }
    assert routes == {4317: 4317, 4318: 4318}


def test_hpa_targets_the_deployment() -> None:
    """The autoscaling/v2 HPA scales the gateway Deployment by name, never below two replicas."""
    hpa = _one("HorizontalPodAutoscaler")
    target = hpa["spec"]["scaleTargetRef"]
    assert hpa["apiVersion"] == "autoscaling/v2"
    assert (target["kind"], target["name"]) == (
        "Deployment",
        _one("Deployment")["metadata"]["name"],
    )
    assert 2 <= hpa["spec"]["minReplicas"] <= hpa["spec"]["maxReplicas"]


def test_pdb_selects_the_gateway_pods() -> None:
    """The PodDisruptionBudget selects the gateway pods and keeps at least one available."""
    pdb = _one("PodDisruptionBudget")
    assert _selects(pdb["spec"]["selector"]["matchLabels"])
    assert pdb["spec"]["minAvailable"] >= 1


def test_gateway_config_passes_the_wiring_check() -> None:
    """The Collector config in the ConfigMap is wired like every exporters/*.yaml."""
    assert wiring_problems(_gateway_config()) == []


def test_gateway_config_matches_the_tempo_exporter() -> None:
    """The gateway pipeline has exporters/tempo.yaml's shape and reads the same variables."""
    gateway, tempo = _gateway_config(), load_yaml(EXPORTERS_DIR / "tempo.yaml")
    assert gateway["service"]["pipelines"] == tempo["service"]["pipelines"]
    variables = [[name for name, _ in env_references(c["exporters"])] for c in (gateway, tempo)]
    assert variables[0] == variables[1]


def test_gateway_receivers_listen_on_the_standard_ports() -> None:
    """The gateway's OTLP receiver takes gRPC on 4317 and HTTP on 4318."""
    protocols = with_defaults(_gateway_config())["receivers"]["otlp"]["protocols"]
    assert host_and_port(protocols["grpc"]["endpoint"])[1] == 4317
    assert host_and_port(protocols["http"]["endpoint"])[1] == 4318


def test_deployment_mounts_the_config_where_the_collector_reads_it() -> None:
    """The --config argument names the ConfigMap key at the path the Deployment mounts it."""
    pod = _one("Deployment")["spec"]["template"]["spec"]
    (volume,) = [
        v for v in pod["volumes"] if v["configMap"]["name"] == _one("ConfigMap")["metadata"]["name"]
    ]
    (mount,) = [m for m in _container()["volumeMounts"] if m["name"] == volume["name"]]
    (item,) = [i for i in volume["configMap"]["items"] if i["key"] == CONFIG_KEY]
    assert f"--config={mount['mountPath']}/{item['path']}" in _container()["args"]


def test_probes_hit_the_health_check_port() -> None:
    """Liveness and readiness probes GET the health_check extension's port and path."""
    health = with_defaults(_gateway_config())["extensions"]["health_check"]
    health_port = host_and_port(health["endpoint"])[1]
    container = _container()
    for probe in ("livenessProbe", "readinessProbe"):
        http_get = container[probe]["httpGet"]
        assert container_port_number(container, http_get["port"]) == health_port, probe
        assert http_get["path"] == health.get("path", "/"), probe


def test_memory_limiter_fits_the_container_limit() -> None:
    """memory_limiter's hard limit and GOMEMLIMIT both sit below the container's memory limit."""
    limit = _mebibytes(_container()["resources"]["limits"]["memory"])
    limiter = _gateway_config()["processors"]["memory_limiter"]
    env = {item["name"]: item["value"] for item in _container()["env"]}
    assert 0 < limiter["spike_limit_mib"] < limiter["limit_mib"] < limit
    assert _mebibytes(env["GOMEMLIMIT"]) < limit


def test_deployment_sets_the_endpoint_the_config_reads() -> None:
    """The container sets each variable the gateway config reads for its export endpoint."""
    env = {item["name"] for item in _container()["env"]}
    assert {name for name, _ in env_references(_gateway_config()["exporters"])} <= env


@pytest.mark.e2e
def test_manifests_match_the_kubernetes_schemas(e2e_missing: Callable[[str], NoReturn]) -> None:
    """Every manifest validates strictly against the Kubernetes schemas (kubernetes-validate)."""
    if importlib.util.find_spec("kubernetes_validate") is None:
        e2e_missing("kubernetes-validate not installed (pip install kubernetes-validate)")
    validator = importlib.import_module("kubernetes_validate")
    for obj in _objects():
        validator.validate(obj, validator.latest_version(), strict=True)
