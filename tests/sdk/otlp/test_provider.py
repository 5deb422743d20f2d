"""`configure()`: which provider spans flow through, what is exported where, and loss reporting."""

from __future__ import annotations

import json
import logging
import pickle
from pathlib import Path

import pytest
from opentelemetry import trace as trace_api
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from flow_xray.errors import ConfigurationError
from flow_xray.formats.otlp_json import read_otlp_json
from flow_xray.sdk import provider as flow_provider
from flow_xray.sdk.provider import configure
from tests.sdk.otlp.conftest import OtlpHttpReceiver
from tests.sdk.otlp.phoenix_server import free_port

pytestmark = pytest.mark.usefixtures("clean_otel")


def _emit(provider: trace_api.TracerProvider, *names: str) -> None:
    tracer = provider.get_tracer("test")
    for name in names:
        with tracer.start_as_current_span(name):
            pass


def test_configure_installs_its_provider_globally_when_none_is_set() -> None:
    """With no global provider, the returned SDK provider becomes the global one."""
    provider = configure()
    assert trace_api.get_tracer_provider() is provider


def test_set_global_false_installs_nothing_global() -> None:
    """``set_global=False`` returns a working provider and leaves the global one unset."""
    provider = configure(set_global=False)
    assert isinstance(provider, TracerProvider)
    assert isinstance(trace_api.get_tracer_provider(), trace_api.ProxyTracerProvider)


def test_existing_sdk_provider_is_reused_not_replaced(tmp_path: Path) -> None:
    """Under a user's global provider, configure returns it and adds only what was asked for."""
    memory = InMemorySpanExporter()
    users = TracerProvider()
    users.add_span_processor(SimpleSpanProcessor(memory))
    trace_api.set_tracer_provider(users)
    path = tmp_path / "spans.jsonl"
    returned = configure(json_path=path)
    _emit(trace_api.get_tracer_provider(), "work")
    flow_provider.flush()
    assert returned is users
    assert trace_api.get_tracer_provider() is users
    assert [span.name for span in memory.get_finished_spans()] == ["work"]
    assert [record.name for record in read_otlp_json(path)] == ["work"]


def test_a_json_file_gets_every_span_when_the_program_outruns_its_writer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A hot loop ends spans faster than OTLP/JSON is written: the file still holds every
    one (the ending thread writes once half the queue waits), and nothing is reported lost.
    A queue of 512 here stands for the real 65,536."""
    monkeypatch.setattr(flow_provider, "JSON_QUEUE_SIZE", 512)
    path = tmp_path / "spans.jsonl"
    provider = configure(json_path=path)
    names = [f"s{i}" for i in range(5000)]
    with caplog.at_level(logging.WARNING):
        _emit(provider, *names)
        flow_provider.shutdown()
    assert sorted(record.name for record in read_otlp_json(path)) == sorted(names)
    assert caplog.records == []


def test_env_endpoint_is_not_added_to_someone_elses_provider(
    otlp_receiver: OtlpHttpReceiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The OTEL endpoint variable belongs to the provider already installed, not to flow-xray."""
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", otlp_receiver.url + "/v1/traces")
    trace_api.set_tracer_provider(TracerProvider())
    configure()
    _emit(trace_api.get_tracer_provider(), "theirs")
    flow_provider.flush()
    assert otlp_receiver.span_names() == []


def test_http_export_reaches_the_receiver_with_headers_and_path(
    otlp_receiver: OtlpHttpReceiver,
) -> None:
    """A base URL with http/protobuf posts to /v1/traces with the given headers."""
    provider = configure(
        endpoint=otlp_receiver.url,
        protocol="http/protobuf",
        headers="x-api-key=secret%21",
        service_name="svc",
    )
    _emit(provider, "one", "two")
    assert flow_provider.flush(timeout_s=5)
    assert otlp_receiver.span_names() == ["one", "two"]
    assert set(otlp_receiver.paths) == {"/v1/traces"}
    assert otlp_receiver.headers[0]["x-api-key"] == "secret!"


def test_configuring_the_same_endpoint_twice_exports_each_span_once(
    otlp_receiver: OtlpHttpReceiver,
) -> None:
    """A second configure() for the same destination does not add a second exporter."""
    first = configure(endpoint=otlp_receiver.url + "/v1/traces")
    second = configure(endpoint=otlp_receiver.url + "/v1/traces/")
    _emit(first, "once")
    flow_provider.flush(timeout_s=5)
    assert second is first
    assert otlp_receiver.span_names() == ["once"]


def test_json_path_twice_writes_each_span_once(tmp_path: Path) -> None:
    """The OTLP JSON file is deduplicated by resolved path too."""
    path = tmp_path / "spans.jsonl"
    provider = configure(json_path=path)
    configure(json_path=tmp_path / "." / "spans.jsonl")
    _emit(provider, "a", "b")
    flow_provider.shutdown()
    assert [r.name for r in read_otlp_json(path)] == ["a", "b"]


def test_service_name_and_resource_attributes_reach_the_backend(
    otlp_receiver: OtlpHttpReceiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    """OTEL_RESOURCE_ATTRIBUTES is merged; the service_name argument beats OTEL_SERVICE_NAME."""
    monkeypatch.setenv("OTEL_SERVICE_NAME", "from-env")
    monkeypatch.setenv("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment=test,team=core")
    provider = configure(
        endpoint=otlp_receiver.url + "/v1/traces",
        service_name="from-arg",
        resource_attributes={"team": "arg"},
    )
    _emit(provider, "s")
    flow_provider.flush(timeout_s=5)
    (resource,) = otlp_receiver.resource_attributes()
    assert resource["service.name"] == "from-arg"
    assert (resource["deployment.environment"], resource["team"]) == ("test", "arg")


def test_the_provider_resource_hashes_once_and_equals_the_sdk_resource(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """configure()'s resource is the SDK's `Resource` of the same attributes (equal, the same
    hash, one group in the SDK's OTLP encoder with a plain one) that works its hash out once:
    the encoder hashes it for every span it exports."""
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import ReadableSpan
    from opentelemetry.trace import SpanContext, TraceFlags

    provider = configure(set_global=False, service_name="svc", resource_attributes={"a": 1})
    plain = Resource.create({"service.name": "svc", "a": 1})
    ours = provider.resource
    assert ours == plain and plain == ours and hash(ours) == hash(plain)
    spans = [
        ReadableSpan(name=f"s{i}", context=SpanContext(3, 5 + i, False, TraceFlags(1)), resource=r)
        for i, r in enumerate([ours, plain, ours])
    ]
    (group,) = encode_spans(spans).resource_spans
    assert len(group.scope_spans[0].spans) == 3
    made = []
    sdk_hash = Resource.__hash__
    monkeypatch.setattr(Resource, "__hash__", lambda r: made.append(r) or sdk_hash(r))
    fresh = configure(set_global=False, service_name="other").resource
    assert len({hash(fresh) for _ in range(100)}) == 1 and len(made) == 1
    # Pickled or copied, it is a plain Resource (its hash is worked out again where it lands).
    back = pickle.loads(pickle.dumps(fresh))
    assert type(back) is Resource and back == fresh and "_hash" not in vars(back)


def test_otel_service_name_is_used_without_an_argument(monkeypatch: pytest.MonkeyPatch) -> None:
    """OTEL_SERVICE_NAME names the service when configure() is not told otherwise."""
    monkeypatch.setenv("OTEL_SERVICE_NAME", "env-service")
    provider = configure(set_global=False)
    assert provider.resource.attributes["service.name"] == "env-service"


def test_sample_ratio_zero_samples_nothing(tmp_path: Path) -> None:
    """``sample_ratio=0`` drops every new trace (ParentBased(TraceIdRatio(0)))."""
    path = tmp_path / "spans.jsonl"
    provider = configure(json_path=path, sample_ratio=0.0)
    _emit(provider, "dropped")
    flow_provider.shutdown()
    assert read_otlp_json(path) == []


def test_env_sampler_is_honoured_without_sample_ratio(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """OTEL_TRACES_SAMPLER=always_off applies when no sample_ratio is given."""
    monkeypatch.setenv("OTEL_TRACES_SAMPLER", "always_off")
    path = tmp_path / "spans.jsonl"
    _emit(configure(json_path=path), "dropped")
    flow_provider.shutdown()
    assert read_otlp_json(path) == []


def test_sdk_disabled_installs_and_exports_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """OTEL_SDK_DISABLED=true: no global provider, no file, tracers are no-ops."""
    monkeypatch.setenv("OTEL_SDK_DISABLED", "true")
    path = tmp_path / "spans.jsonl"
    provider = configure(json_path=path)
    _emit(provider, "ignored")
    assert isinstance(trace_api.get_tracer_provider(), trace_api.ProxyTracerProvider)
    assert not path.exists()


@pytest.mark.parametrize(
    "kwargs",
    [
        {"sample_ratio": 1.5},
        {"export_timeout_s": 0},
        {"service_name": " "},
        {"endpoint": "udp://agent:4317"},
        {"endpoint": "http://agent:4317", "headers": "oops"},
        {"endpoint": "http://agent:4317", "protocol": "http/json"},
    ],
)
def test_bad_arguments_raise_configuration_error(kwargs: dict[str, object]) -> None:
    """Invalid options fail fast with ConfigurationError and install nothing."""
    with pytest.raises(ConfigurationError):
        configure(**kwargs)  # type: ignore[arg-type]
    assert isinstance(trace_api.get_tracer_provider(), trace_api.ProxyTracerProvider)


def test_unwritable_json_path_installs_nothing(tmp_path: Path) -> None:
    """A json_path that cannot be opened (here a directory) is a ConfigurationError, no provider."""
    with pytest.raises(ConfigurationError, match="json_path: cannot write"):
        configure(json_path=tmp_path)
    assert isinstance(trace_api.get_tracer_provider(), trace_api.ProxyTracerProvider)


@pytest.mark.slow
def test_unreachable_backend_is_reported_once_at_shutdown(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Nothing listening: spans are counted as lost and one warning names count and endpoint."""
    endpoint = f"http://127.0.0.1:{free_port()}"
    provider = configure(endpoint=endpoint, protocol="grpc", export_timeout_s=1.0)
    _emit(provider, "a", "b", "c")
    with caplog.at_level(logging.DEBUG, logger="flow_xray"):
        flow_provider.shutdown()
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1
    assert warnings[0].startswith(f"flow-xray: 3 spans were not exported to {endpoint} (grpc)")
    assert "UNAVAILABLE" in warnings[0]


@pytest.mark.slow
def test_a_second_unreachable_backend_still_gives_its_reason(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The SDK's exporter logger drops a message repeated within 20 s; the reason still
    reaches the loss warning of a second failing export (it did not when our filter ran
    behind that one)."""
    # As in a program that configured no logging: the SDK's debug lines are not made, so
    # nothing comes between the two identical error records.
    caplog.set_level(logging.WARNING, logger="opentelemetry.exporter.otlp.proto.grpc.exporter")
    reasons = []
    for _ in range(2):
        endpoint = f"http://127.0.0.1:{free_port()}"
        provider = configure(endpoint=endpoint, protocol="grpc", export_timeout_s=1.0)
        _emit(provider, "a")
        caplog.clear()
        with caplog.at_level(logging.WARNING):  # no SDK debug line between the two errors
            flow_provider.shutdown()
        reasons += [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(reasons) == 2
    assert all("UNAVAILABLE" in reason for reason in reasons), reasons


@pytest.mark.slow
def test_sdk_retry_logs_are_kept_at_debug(caplog: pytest.LogCaptureFixture) -> None:
    """The SDK exporter's per-retry warnings do not reach the user's log at WARNING."""
    provider = configure(endpoint=f"http://127.0.0.1:{free_port()}/v1/traces", export_timeout_s=1)
    _emit(provider, "a")
    with caplog.at_level(logging.DEBUG):
        flow_provider.shutdown()
    loud = [r.name for r in caplog.records if r.levelno >= logging.WARNING]
    assert loud == ["flow_xray"]


def test_successful_export_reports_nothing(
    otlp_receiver: OtlpHttpReceiver, caplog: pytest.LogCaptureFixture
) -> None:
    """When the backend takes every span, shutdown is silent."""
    provider = configure(endpoint=otlp_receiver.url, protocol="http/protobuf")
    _emit(provider, "fine")
    with caplog.at_level(logging.WARNING):
        flow_provider.shutdown()
    assert caplog.records == []
    assert otlp_receiver.span_names() == ["fine"]


def test_json_file_lines_are_otlp_json(tmp_path: Path) -> None:
    """configure(json_path=...) writes resourceSpans lines with the configured service name."""
    path = tmp_path / "spans.jsonl"
    _emit(configure(json_path=path, service_name="writer"), "x")
    flow_provider.shutdown()
    (line,) = path.read_text(encoding="utf-8").splitlines()
    resource = json.loads(line)["resourceSpans"][0]["resource"]["attributes"]
    assert {"key": "service.name", "value": {"stringValue": "writer"}} in resource


def test_settings_that_cannot_apply_are_warned_about(caplog: pytest.LogCaptureFixture) -> None:
    """A service name the existing provider does not have gives one warning; it is not applied."""
    users = TracerProvider()
    trace_api.set_tracer_provider(users)
    with caplog.at_level(logging.WARNING):
        configure(service_name="mine")
    assert [r.getMessage() for r in caplog.records] == [
        "flow-xray: an OpenTelemetry provider is already installed; its service name, "
        "resource attributes and sampler stay as they are"
    ]
    assert users.resource.attributes["service.name"] != "mine"


def test_repeating_the_same_settings_is_silent(caplog: pytest.LogCaptureFixture) -> None:
    """A second configure() with the settings already in force says nothing."""
    first = configure(service_name="same")
    with caplog.at_level(logging.WARNING):
        second = configure(service_name="same")
    assert second is first
    assert caplog.records == []
