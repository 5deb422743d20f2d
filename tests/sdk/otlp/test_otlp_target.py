"""Resolving where OTLP goes: endpoint, protocol and headers from arguments and OTEL_* variables."""

from __future__ import annotations

import pytest

from flow_xray.errors import ConfigurationError
from flow_xray.sdk.otlp_target import OtlpTarget, parse_headers, resolve_target

pytestmark = pytest.mark.usefixtures("clean_otel")


def test_grpc_endpoint_is_kept_as_scheme_host_port() -> None:
    """A URL on a non-4318 port without a path means gRPC, endpoint unchanged."""
    assert resolve_target("http://collector:4317", None, None) == OtlpTarget(
        "grpc", "http://collector:4317"
    )


def test_bare_host_port_means_plain_http_grpc() -> None:
    """``host:port`` without a scheme is read as an insecure ``http://`` gRPC endpoint."""
    target = resolve_target("localhost:4317", None, None)
    assert target == OtlpTarget("grpc", "http://localhost:4317")


def test_port_4318_infers_http_and_appends_traces_path() -> None:
    """Port 4318 is OTLP/HTTP; the base URL gets ``/v1/traces``."""
    target = resolve_target("http://localhost:4318", None, None)
    assert target == OtlpTarget("http/protobuf", "http://localhost:4318/v1/traces")


def test_traces_path_infers_http_on_any_port() -> None:
    """A ``/v1/traces`` path means OTLP/HTTP and is not doubled."""
    target = resolve_target("https://otlp.example.com/v1/traces/", None, None)
    assert target == OtlpTarget("http/protobuf", "https://otlp.example.com/v1/traces")


def test_explicit_http_protocol_appends_path_to_prefixed_base() -> None:
    """An explicit http/protobuf base URL with a prefix gets ``/v1/traces`` after it."""
    target = resolve_target("http://gw:8080/otlp", "http/protobuf", None)
    assert target == OtlpTarget("http/protobuf", "http://gw:8080/otlp/v1/traces")


def test_no_endpoint_anywhere_means_no_target() -> None:
    """Without an argument or variable there is nothing to export to."""
    assert resolve_target(None, "grpc", None) is None


def test_generic_env_endpoint_is_a_base_url(monkeypatch: pytest.MonkeyPatch) -> None:
    """OTEL_EXPORTER_OTLP_ENDPOINT is a base URL: the traces path is appended for HTTP."""
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://agent:4318")
    target = resolve_target(None, None, None)
    assert target == OtlpTarget("http/protobuf", "http://agent:4318/v1/traces")


def test_traces_env_endpoint_is_used_as_is(monkeypatch: pytest.MonkeyPatch) -> None:
    """OTEL_EXPORTER_OTLP_TRACES_ENDPOINT wins over the generic one and keeps its path."""
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://generic:4317")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://agent:4318/custom")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
    target = resolve_target(None, None, None)
    assert target == OtlpTarget("http/protobuf", "http://agent:4318/custom")


def test_env_endpoint_ignored_when_not_allowed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Under someone else's provider the environment's endpoint is theirs, not ours."""
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://agent:4317")
    assert resolve_target(None, None, None, use_env_endpoint=False) is None


def test_traces_protocol_env_wins_over_generic(monkeypatch: pytest.MonkeyPatch) -> None:
    """OTEL_EXPORTER_OTLP_TRACES_PROTOCOL overrides OTEL_EXPORTER_OTLP_PROTOCOL and inference."""
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/protobuf")
    target = resolve_target("http://agent:4317", None, None)
    assert target == OtlpTarget("http/protobuf", "http://agent:4317/v1/traces")


def test_explicit_protocol_wins_over_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """The ``protocol`` argument beats every variable."""
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/protobuf")
    assert resolve_target("http://agent:4318", "grpc", None) == OtlpTarget(
        "grpc", "http://agent:4318"
    )


@pytest.mark.parametrize("protocol", ["http/json", "thrift", ""])
def test_unsupported_protocol_is_a_configuration_error(protocol: str) -> None:
    """Only grpc and http/protobuf are accepted; the message names the value."""
    with pytest.raises(ConfigurationError, match="unsupported OTLP protocol"):
        resolve_target("http://agent:4317", protocol, None)


def test_bad_protocol_from_env_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bad protocol variable is reported with the variable's name."""
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")
    with pytest.raises(ConfigurationError, match="OTEL_EXPORTER_OTLP_PROTOCOL"):
        resolve_target("http://agent:4317", None, None)


@pytest.mark.parametrize(
    "endpoint",
    ["ftp://agent:4317", "http://", "http://agent:notaport", "http://agent:99999", "   "],
)
def test_malformed_endpoint_is_a_configuration_error(endpoint: str) -> None:
    """An endpoint that is not http(s)://host[:port] is rejected with a clear message."""
    with pytest.raises(ConfigurationError, match="endpoint"):
        resolve_target(endpoint, None, None)


def test_grpc_endpoint_with_path_is_rejected() -> None:
    """gRPC has no URL path, so ``protocol='grpc'`` with one is a mistake worth naming."""
    with pytest.raises(ConfigurationError, match="gRPC OTLP endpoint has no path"):
        resolve_target("http://agent:4317/v1/traces", "grpc", None)


def test_headers_string_is_parsed_and_percent_decoded() -> None:
    """``k=v`` pairs split on commas; keys lower-cased (gRPC requires it), values decoded."""
    assert parse_headers("Authorization=Bearer%20abc, x-tenant=a=b", "headers") == {
        "authorization": "Bearer abc",
        "x-tenant": "a=b",
    }


@pytest.mark.parametrize("text", ["novalue", "=value", "bad key=v"])
def test_header_not_key_value_is_a_configuration_error(text: str) -> None:
    """A header item without ``=`` or with an empty/spaced key is rejected."""
    with pytest.raises(ConfigurationError, match="not of the form K=V"):
        resolve_target("http://agent:4317", None, text)


def test_mapping_header_name_with_a_space_is_a_configuration_error() -> None:
    """A header name with a space is refused up front, as in the string form, not at export."""
    with pytest.raises(ConfigurationError, match="contains a space"):
        resolve_target("http://agent:4317", None, {"x api key": "1"})


def test_headers_come_from_traces_env_first(monkeypatch: pytest.MonkeyPatch) -> None:
    """OTEL_EXPORTER_OTLP_TRACES_HEADERS beats OTEL_EXPORTER_OTLP_HEADERS."""
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", "a=generic")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "a=traces,b=2")
    target = resolve_target("http://agent:4317", None, None)
    assert target is not None
    assert target.headers == (("a", "traces"), ("b", "2"))


def test_mapping_headers_override_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Explicit headers replace the variables entirely."""
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", "a=env")
    target = resolve_target("http://agent:4317", None, {"X-Key": "1"})
    assert target is not None
    assert target.headers == (("x-key", "1"),)
