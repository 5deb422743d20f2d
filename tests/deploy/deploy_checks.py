"""Structural checks shared by the deploy tests: Collector wiring, env references, compose and k8s.

The one check every Collector config in the repository must pass is
`wiring_problems`: it is applied to each `exporters/*.yaml` file and to the
pipeline embedded in the Kubernetes ConfigMap. The other helpers read compose
and Kubernetes structures into plain tuples the tests assert on.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

REPO = Path(__file__).resolve().parents[2]
EXPORTERS_DIR = REPO / "exporters"
DEPLOY_DIR = REPO / "deploy"
COMPOSE_FILE = DEPLOY_DIR / "compose.yaml"
K8S_DIR = DEPLOY_DIR / "k8s"

_KINDS = ("receivers", "processors", "exporters", "extensions")
SIGNALS = frozenset({"traces", "metrics", "logs", "profiles"})
# `${env:NAME}` or `${env:NAME:-default}`, the Collector's confmap syntax.
ENV_REF = re.compile(r"\$\{env:([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


def load_yaml(path: Path) -> Any:
    """Parse one YAML document."""
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def load_yaml_documents(path: Path) -> list[Any]:
    """Parse every document of a multi-document YAML file, skipping empty ones."""
    text = path.read_text(encoding="utf-8")
    return [doc for doc in yaml.safe_load_all(text) if doc is not None]


def exporter_config_paths() -> list[Path]:
    """Every Collector config in `exporters/`, sorted by name."""
    return sorted(EXPORTERS_DIR.glob("*.yaml"))


def _section(config: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    value = config.get(name) or {}
    return value if isinstance(value, Mapping) else {}


def _id_list(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return list(value)
    return ["<not a list of component ids>"]


def wiring_problems(config: Any) -> list[str]:
    """List every way ``config`` fails to wire up as a Collector config; empty when it is sound.

    Checked: the sections are mappings; ``service.pipelines`` is non-empty and
    each pipeline id names a signal (``traces``, ``traces/x``); each pipeline has
    receivers and exporters; every id a pipeline or ``service.extensions`` names
    is defined under its section by its full id (``otlp/jaeger``), connectors
    counting as receivers and exporters; no id repeats within one list; and
    every defined receiver, processor, exporter and extension is used.
    """
    if not isinstance(config, Mapping):
        return ["config is not a mapping"]
    problems: list[str] = []
    for name in ("receivers", "processors", "exporters", "extensions", "connectors"):
        if name in config and not isinstance(config[name] or {}, Mapping):
            problems.append(f"{name} is not a mapping")
    service = _section(config, "service")
    pipelines = _section(service, "pipelines")
    if not pipelines:
        return [*problems, "service.pipelines is missing or empty"]

    defined = {name: set(_section(config, name)) for name in _KINDS}
    connectors = set(_section(config, "connectors"))
    used: dict[str, set[str]] = {name: set() for name in _KINDS}
    for pipeline_id, pipeline in pipelines.items():
        where = f"pipeline {pipeline_id}"
        if str(pipeline_id).split("/", 1)[0] not in SIGNALS:
            problems.append(f"{where}: unknown signal type")
        if not isinstance(pipeline, Mapping):
            problems.append(f"{where}: not a mapping")
            continue
        for kind in ("receivers", "processors", "exporters"):
            ids = _id_list(pipeline.get(kind))
            if kind != "processors" and not ids:
                problems.append(f"{where}: no {kind}")
            problems.extend(f"{where}: {kind} lists {cid} twice" for cid in _repeated(ids))
            known = defined[kind] | (connectors if kind != "processors" else set())
            problems.extend(
                f"{where}: {kind[:-1]} {cid} is not defined" for cid in ids if cid not in known
            )
            used[kind].update(ids)

    enabled = _id_list(service.get("extensions"))
    problems.extend(f"service.extensions lists {eid} twice" for eid in _repeated(enabled))
    problems.extend(
        f"extension {eid} is not defined" for eid in enabled if eid not in defined["extensions"]
    )
    used["extensions"].update(enabled)
    for kind in _KINDS:
        problems.extend(
            f"{kind[:-1]} {cid} is defined but not used"
            for cid in sorted(defined[kind] - used[kind])
        )
    return problems


def _repeated(ids: Sequence[str]) -> list[str]:
    return sorted({cid for cid in ids if ids.count(cid) > 1})


def component_type(component_id: str) -> str:
    """The type part of a component id: ``otlp/jaeger`` -> ``otlp``."""
    return component_id.split("/", 1)[0]


def strings_in(value: Any) -> Iterator[str]:
    """Every string scalar (mapping keys excluded) anywhere inside ``value``, depth first."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, Mapping):
            stack.extend(reversed(list(item.values())))
        elif isinstance(item, list):
            stack.extend(reversed(item))


def env_references(config: Any) -> list[tuple[str, str | None]]:
    """Every ``${env:NAME[:-default]}`` in ``config`` as (NAME, default or None), in order."""
    return [
        (match.group(1), match.group(2))
        for text in strings_in(config)
        for match in ENV_REF.finditer(text)
    ]


def stray_dollars(config: Any) -> list[str]:
    """Strings holding a ``$`` that is neither a ``${env:...}`` reference nor a ``$$`` escape."""
    return [text for text in strings_in(config) if "$" in ENV_REF.sub("", text).replace("$$", "")]


def with_defaults(value: Any) -> Any:
    """A copy of ``value`` with each env reference replaced by its default, as with no env set."""
    if isinstance(value, str):
        return ENV_REF.sub(lambda match: match.group(2) or "", value)
    if isinstance(value, Mapping):
        return {key: with_defaults(item) for key, item in value.items()}
    if isinstance(value, list):
        return [with_defaults(item) for item in value]
    return value


def host_and_port(endpoint: str) -> tuple[str, int]:
    """Split ``host:port`` or ``scheme://host:port[/path]`` into (host, port)."""
    parts = urlsplit(endpoint if "://" in endpoint else f"//{endpoint}")
    if parts.hostname is None or parts.port is None:
        raise ValueError(f"no host:port in {endpoint!r}")
    return parts.hostname, parts.port


def apply_attribute_actions(
    actions: Sequence[Mapping[str, Any]], attrs: Mapping[str, Any]
) -> dict[str, Any]:
    """Apply an ``attributes`` processor's delete/hash actions to one span's attributes.

    Mirrors the processor: actions run in order; ``key`` matches exactly,
    ``pattern`` is searched in the key (RE2 and Python agree on the patterns
    used here). Any other action raises, so a test never trusts a half
    simulation.
    """
    result = dict(attrs)
    for action in actions:
        kind = action.get("action")
        if kind not in ("delete", "hash"):
            raise ValueError(f"cannot simulate attributes action {kind!r}")
        pattern = action.get("pattern")
        keys = [
            key
            for key in result
            if key == action.get("key") or (pattern is not None and re.search(pattern, key))
        ]
        for key in keys:
            if kind == "delete":
                del result[key]
            else:
                result[key] = hashlib.sha256(str(result[key]).encode()).hexdigest()
    return result


def run_attribute_processors(
    config: Mapping[str, Any], pipeline_id: str, attrs: Mapping[str, Any]
) -> dict[str, Any]:
    """Pass one span's attributes through every ``attributes`` processor of a pipeline, in order.

    Raises:
        ValueError: a processor filters spans with include/exclude, so its
            effect depends on the span and cannot be shown on one sample.
    """
    processors = _section(config, "processors")
    result = dict(attrs)
    for processor_id in config["service"]["pipelines"][pipeline_id].get("processors") or []:
        if component_type(processor_id) != "attributes":
            continue
        settings = processors[processor_id] or {}
        if "include" in settings or "exclude" in settings:
            raise ValueError(f"{processor_id} only applies to matching spans")
        result = apply_attribute_actions(settings.get("actions") or [], result)
    return result


def compose_bind_mounts(service: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(host source, container target) of each bind mount of a compose service."""
    mounts: list[tuple[str, str]] = []
    for volume in service.get("volumes") or []:
        if isinstance(volume, Mapping):
            if volume.get("type") == "bind":
                mounts.append((str(volume["source"]), str(volume["target"])))
            continue
        source, _, rest = str(volume).partition(":")
        if source.startswith((".", "/", "~")):
            mounts.append((source, rest.split(":", 1)[0]))
    return mounts


def compose_named_volumes(service: Mapping[str, Any]) -> list[str]:
    """Names of the named volumes a compose service mounts."""
    names: list[str] = []
    for volume in service.get("volumes") or []:
        if isinstance(volume, Mapping):
            if volume.get("type") == "volume":
                names.append(str(volume["source"]))
            continue
        source, sep, _ = str(volume).partition(":")
        if sep and not source.startswith((".", "/", "~")):
            names.append(source)
    return names


def compose_published_ports(service: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """(host ip or "", host port, container port) of each port a compose service publishes."""
    ports: list[tuple[str, str, str]] = []
    for port in service.get("ports") or []:
        if isinstance(port, Mapping):
            ports.append(
                (str(port.get("host_ip", "")), str(port.get("published", "")), str(port["target"]))
            )
            continue
        spec = str(port).split("/", 1)[0]
        host_ip = ""
        if spec.startswith("["):
            host_ip, _, spec = spec[1:].partition("]:")
        parts = spec.split(":")
        if len(parts) == 3:
            host_ip, parts = parts[0], parts[1:]
        ports.append((host_ip, parts[0] if len(parts) == 2 else "", parts[-1]))
    return ports


def compose_environment(service: Mapping[str, Any]) -> dict[str, str]:
    """A compose service's environment as a dict, from either the list or the mapping form."""
    env = service.get("environment") or {}
    if isinstance(env, Mapping):
        return {str(key): str(value) for key, value in env.items()}
    return dict(str(item).partition("=")[::2] for item in env)


def container_port_number(container: Mapping[str, Any], port: int | str) -> int:
    """Resolve a probe's port (number or container port name) to a number."""
    if isinstance(port, int):
        return port
    for declared in container.get("ports") or []:
        if declared.get("name") == port:
            return int(declared["containerPort"])
    raise ValueError(f"container declares no port named {port!r}")
