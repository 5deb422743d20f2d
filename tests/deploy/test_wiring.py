"""The Collector configs in exporters/: complete, correctly wired, and fit for flow-xray's spans."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from deploy_checks import (
    EXPORTERS_DIR,
    component_type,
    env_references,
    exporter_config_paths,
    host_and_port,
    load_yaml,
    run_attribute_processors,
    stray_dollars,
    wiring_problems,
    with_defaults,
)

import flow_xray.attributes as attr

CONFIG_PATHS = exporter_config_paths()


@pytest.fixture(params=CONFIG_PATHS, ids=[path.name for path in CONFIG_PATHS])
def config(request: pytest.FixtureRequest) -> dict[str, Any]:
    """Each exporters/*.yaml, parsed."""
    path: Path = request.param
    loaded = load_yaml(path)
    assert isinstance(loaded, dict), f"{path.name} is not a YAML mapping"
    return loaded


def _pipelines(config: dict[str, Any]) -> dict[str, Any]:
    pipelines: dict[str, Any] = config["service"]["pipelines"]
    return pipelines


def _traces_exporter(config: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    (exporter_id,) = _pipelines(config)["traces"]["exporters"]
    return exporter_id, config["exporters"][exporter_id] or {}


def test_a_config_exists_for_each_destination() -> None:
    """exporters/ has one complete config per documented destination."""
    assert {path.stem for path in CONFIG_PATHS} >= {"debug", "jaeger", "tempo", "file", "redacted"}


def test_pipeline_wiring_is_sound(config: dict[str, Any]) -> None:
    """Every component named in a pipeline or service.extensions is defined, and all are used."""
    assert wiring_problems(config) == []


def test_wiring_check_reports_an_undefined_component() -> None:
    """The wiring check itself flags a pipeline naming an exporter that no section defines."""
    broken = {
        "receivers": {"otlp": None},
        "exporters": {"debug": None},
        "service": {
            "pipelines": {"traces": {"receivers": ["otlp"], "exporters": ["debug", "nope"]}}
        },
    }
    assert wiring_problems(broken) == ["pipeline traces: exporter nope is not defined"]


def test_wiring_check_resolves_ids_by_full_id() -> None:
    """``otlp/jaeger`` in a pipeline is not satisfied by a bare ``otlp`` definition."""
    broken = {
        "receivers": {"otlp": None},
        "exporters": {"otlp": None},
        "service": {"pipelines": {"traces": {"receivers": ["otlp"], "exporters": ["otlp/jaeger"]}}},
    }
    assert wiring_problems(broken) == [
        "pipeline traces: exporter otlp/jaeger is not defined",
        "exporter otlp is defined but not used",
    ]


def test_every_config_has_a_traces_pipeline(config: dict[str, Any]) -> None:
    """flow-xray emits spans, so each config has a ``traces`` pipeline."""
    assert "traces" in _pipelines(config)


def test_otlp_receiver_listens_on_the_standard_ports(config: dict[str, Any]) -> None:
    """The OTLP receiver takes gRPC on 0.0.0.0:4317 and HTTP on 0.0.0.0:4318 by default."""
    protocols = with_defaults(config)["receivers"]["otlp"]["protocols"]
    assert host_and_port(protocols["grpc"]["endpoint"]) == ("0.0.0.0", 4317)
    assert host_and_port(protocols["http"]["endpoint"]) == ("0.0.0.0", 4318)


# Each listener of a config: where it is in the config, its port variable and default port.
LISTENERS = {
    "OTLP gRPC receiver": ("COLLECTOR_OTLP_GRPC_PORT", 4317),
    "OTLP HTTP receiver": ("COLLECTOR_OTLP_HTTP_PORT", 4318),
    "health_check": ("COLLECTOR_HEALTH_PORT", 13133),
    "own metrics": ("COLLECTOR_METRICS_PORT", 8888),
}


def _listeners(config: dict[str, Any]) -> dict[str, str]:
    """Each listener's ``host:port`` as written (the metrics reader's host and port joined)."""
    protocols = config["receivers"]["otlp"]["protocols"]
    (reader,) = config["service"]["telemetry"]["metrics"]["readers"]
    prometheus = reader["pull"]["exporter"]["prometheus"]
    return {
        "OTLP gRPC receiver": protocols["grpc"]["endpoint"],
        "OTLP HTTP receiver": protocols["http"]["endpoint"],
        "health_check": config["extensions"]["health_check"]["endpoint"],
        "own metrics": f"{prometheus['host']}:{prometheus['port']}",
    }


def test_every_listener_binds_the_same_overridable_host(config: dict[str, Any]) -> None:
    """Receivers, health check and metrics bind COLLECTOR_LISTEN_HOST (default 0.0.0.0)."""
    for name, endpoint in _listeners(config).items():
        assert env_references(endpoint)[0] == ("COLLECTOR_LISTEN_HOST", "0.0.0.0"), name


def test_every_listener_port_is_overridable(config: dict[str, Any]) -> None:
    """Each listener's port is its own variable defaulting to the standard port.

    A second Collector, or Jaeger v2 (which also takes 13133 and 8888), can
    then share the host: a Collector that cannot bind a port refuses to start.
    """
    for name, endpoint in _listeners(config).items():
        variable, port = LISTENERS[name]
        assert env_references(endpoint)[1:] == [(variable, str(port))], name
        assert host_and_port(with_defaults(endpoint)) == ("0.0.0.0", port), name


def test_memory_limiter_first_and_batch_last(config: dict[str, Any]) -> None:
    """In every pipeline memory_limiter is the first processor and batch the last."""
    for pipeline in _pipelines(config).values():
        types = [component_type(pid) for pid in pipeline.get("processors") or []]
        assert types[:1] == ["memory_limiter"] and types[-1:] == ["batch"], types


def test_memory_limiter_is_active(config: dict[str, Any]) -> None:
    """memory_limiter checks memory periodically against a hard limit above its spike allowance."""
    (limiter,) = (
        settings
        for pid, settings in config["processors"].items()
        if component_type(pid) == "memory_limiter"
    )
    assert limiter["check_interval"]
    assert 0 < limiter["spike_limit_mib"] < limiter["limit_mib"]


def test_health_check_enabled_on_13133(config: dict[str, Any]) -> None:
    """The health_check extension is enabled and serves on port 13133."""
    assert "health_check" in config["service"]["extensions"]
    endpoint = with_defaults(config)["extensions"]["health_check"]["endpoint"]
    assert host_and_port(endpoint)[1] == 13133


def test_env_references_use_collector_syntax(config: dict[str, Any]) -> None:
    """Every ``$`` in a value is a ``${env:NAME}`` reference; no bare ``$NAME`` or ``${NAME}``."""
    assert stray_dollars(config) == []


def test_stray_dollar_check_flags_bare_variables() -> None:
    """The syntax check flags ``$NAME`` and ``${NAME}``, accepts ``${env:...}`` and ``$$``."""
    values = {"a": "$HOST:4317", "b": ["${HOST}"], "c": "${env:HOST:-x}:1", "d": "cost $$5"}
    assert stray_dollars(values) == ["$HOST:4317", "${HOST}"]


def test_every_env_reference_has_a_default(config: dict[str, Any]) -> None:
    """Each config starts with no environment set: every ``${env:NAME}`` carries a ``:-default``."""
    assert [name for name, default in env_references(config) if default is None] == []


def test_readme_documents_every_config_and_variable() -> None:
    """exporters/README.md names each config file and each environment variable it reads."""
    readme = (EXPORTERS_DIR / "README.md").read_text(encoding="utf-8")
    for path in CONFIG_PATHS:
        assert path.name in readme
        for name, _ in env_references(load_yaml(path)):
            assert f"`{name}`" in readme, f"{name} ({path.name}) is not documented"


def test_debug_config_prints_every_attribute() -> None:
    """debug.yaml prints spans with detailed verbosity, which includes every attribute."""
    config = load_yaml(EXPORTERS_DIR / "debug.yaml")
    exporter_id, settings = _traces_exporter(config)
    assert component_type(exporter_id) == "debug"
    assert settings["verbosity"] == "detailed"


@pytest.mark.parametrize(
    ("name", "variable"),
    [
        ("jaeger", "JAEGER_OTLP_ENDPOINT"),
        ("tempo", "TEMPO_OTLP_ENDPOINT"),
        ("redacted", "UPSTREAM_OTLP_ENDPOINT"),
    ],
)
def test_backend_configs_export_otlp_grpc_to_their_variable(name: str, variable: str) -> None:
    """Jaeger, Tempo and redacted export with otlp_grpc to the endpoint their variable names."""
    config = load_yaml(EXPORTERS_DIR / f"{name}.yaml")
    exporter_id, settings = _traces_exporter(config)
    assert component_type(exporter_id) == "otlp_grpc"
    assert [ref for ref, _ in env_references(settings["endpoint"])] == [variable]
    assert host_and_port(with_defaults(settings["endpoint"]))[1] == 4317


def test_file_config_writes_uncompressed_otlp_json() -> None:
    """file.yaml writes uncompressed OTLP JSON lines, the format `flow-xray view` reads."""
    exporter_id, settings = _traces_exporter(load_yaml(EXPORTERS_DIR / "file.yaml"))
    assert component_type(exporter_id) == "file"
    assert settings.get("format", "json") == "json"
    assert "compression" not in settings
    assert settings["path"]


def _flow_xray_span() -> dict[str, Any]:
    """Attributes of an LLM span as flow-xray writes it, plus user metadata."""
    return {
        attr.SPAN_KIND: "LLM",
        attr.INPUT_VALUE: '{"prompt": "my customer\'s address"}',
        attr.INPUT_MIME_TYPE: attr.MIME_JSON,
        attr.OUTPUT_VALUE: '"the answer"',
        attr.OUTPUT_MIME_TYPE: attr.MIME_JSON,
        attr.GEN_AI_REQUEST_MODEL: "gpt-4o-mini",
        attr.LLM_MODEL_NAME: "gpt-4o-mini",
        attr.GEN_AI_PROVIDER_NAME: "openai",
        attr.GEN_AI_INPUT_TOKENS: 12,
        attr.GEN_AI_OUTPUT_TOKENS: 3,
        attr.LLM_TOKENS_PROMPT: 12,
        attr.LLM_TOKENS_COMPLETION: 3,
        attr.LLM_TOKENS_TOTAL: 15,
        attr.LLM_COST_TOTAL: 0.00002,
        attr.CODE_FUNCTION: "answer",
        attr.ERROR_TYPE: "ValueError",
        attr.META_PREFIX + "tenant": "acme",
    }


def test_redacted_removes_input_and_output_values() -> None:
    """Every redacted.yaml pipeline deletes or hashes input.value and output.value before export."""
    config = load_yaml(EXPORTERS_DIR / "redacted.yaml")
    span = _flow_xray_span()
    for pipeline_id in _pipelines(config):
        redacted = run_attribute_processors(config, pipeline_id, span)
        for key in (attr.INPUT_VALUE, attr.OUTPUT_VALUE):
            assert redacted.get(key, None) != span[key], f"{key} leaves {pipeline_id} intact"


def test_redacted_keeps_everything_but_payloads() -> None:
    """redacted.yaml keeps kind, model, tokens, cost, source, error and user metadata unchanged."""
    config = load_yaml(EXPORTERS_DIR / "redacted.yaml")
    span = _flow_xray_span()
    redacted = run_attribute_processors(config, "traces", span)
    kept = {
        key: value
        for key, value in span.items()
        if key not in (attr.INPUT_VALUE, attr.OUTPUT_VALUE)
    }
    assert redacted == kept


def test_redacted_removes_other_instrumentations_payloads() -> None:
    """redacted.yaml also drops OpenInference and GenAI message, prompt and document attributes."""
    payloads = {
        "llm.input_messages.0.message.content": "hi",
        "llm.output_messages.0.message.content": "hello",
        "llm.prompts": "hi",
        "gen_ai.prompt.0.content": "hi",
        "gen_ai.completion.0.content": "hello",
        "gen_ai.input.messages": "[]",
        "gen_ai.system_instructions": "be brief",
        "retrieval.documents.0.document.content": "doc",
        "embedding.embeddings.0.embedding.text": "text",
    }
    redacted = run_attribute_processors(
        load_yaml(EXPORTERS_DIR / "redacted.yaml"), "traces", payloads
    )
    assert redacted == {}
