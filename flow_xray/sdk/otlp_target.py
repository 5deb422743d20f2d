"""Where OTLP export goes: targets from arguments and the ``OTEL_EXPORTER_OTLP_*`` variables.

`resolve_target` turns ``endpoint`` / ``protocol`` / ``headers`` (or the
standard ``OTEL_EXPORTER_OTLP_*`` variables) into a validated `OtlpTarget`.
Header items and endpoints may hold credentials: an error names a malformed
item (`shown_header`) or shows an endpoint (`shown_endpoint`) without them.
The CLI reads its ``--otlp-header`` items and the environment's endpoint
with the same functions (`split_header`, `endpoint_from_env`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final
from urllib.parse import unquote, urlsplit, urlunsplit

from flow_xray.errors import ConfigurationError
from flow_xray.serialize import get_limits, scrub_text

GRPC: Final = "grpc"
HTTP_PROTOBUF: Final = "http/protobuf"
PROTOCOLS: Final = (GRPC, HTTP_PROTOBUF)
TRACES_PATH: Final = "/v1/traces"
HTTP_DEFAULT_PORT: Final = 4318


@dataclass(frozen=True)
class OtlpTarget:
    """Where and how to send spans: a protocol, a normalised URL and request headers.

    For gRPC the endpoint is ``scheme://host:port``; for HTTP it is the full
    URL of the traces resource (``.../v1/traces``).
    """

    protocol: str
    endpoint: str
    headers: tuple[tuple[str, str], ...] = ()


# Where the environment names the OTLP traces endpoint, the signal-specific one first.
ENDPOINT_VARIABLES: Final = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")


def _env(*names: str) -> tuple[str, str] | None:
    """Return (name, value) of the first variable in ``names`` that is set and non-empty."""
    for name in names:
        value = os.environ.get(name, "").strip()
        if value:
            return name, value
    return None


def endpoint_from_env() -> tuple[str, str] | None:
    """(variable, value) of the OTLP traces endpoint the environment names; None if none."""
    return _env(*ENDPOINT_VARIABLES)


def split_header(item: str) -> tuple[str, str] | None:
    """A ``K=V`` header item as its name and value, stripped; None when it is not ``K=V``.

    Not ``K=V``: no ``=``, or nothing before it. Values are taken as they are
    (`parse_headers` percent-decodes the environment's).
    """
    key, sep, value = item.partition("=")
    if not sep or not key.strip():
        return None
    return key.strip(), value.strip()


def shown_header(item: str) -> str:
    """A malformed header item as an error may show it: its name, never its value.

    ``Authorization: Bearer x`` shows as ``'Authorization'…``; an item with no
    ``=``, ``:`` or blank (``TOKEN``) may be the credential itself, so only its
    length is shown.
    """
    text = item.strip()
    parts = re.split(r"[\s:=]", text, maxsplit=1)
    if len(parts) == 1:
        return f"an item of {len(text)} character{'s' if len(text) != 1 else ''} without '='"
    return f"{parts[0][:40]!r}…" if parts[0] else "an item without a name"


def shown_endpoint(url: str) -> str:
    """An endpoint as an error may show it: a ``user:password@`` part's password (or a lone
    ``token@``) replaced, whatever characters it holds, and credentials scrubbed.

    ``http://u:p/a#s@host:x`` shows as ``http://u:[REDACTED:url-password]@host:x``.
    """
    scheme, sep, rest = url.partition("://")
    if not sep:
        scheme, rest = "", url
    at = rest.rfind("@")
    if at >= 0:
        user, colon, _ = rest[:at].partition(":")
        userinfo = f"{user}:[REDACTED:url-password]" if colon else "[REDACTED:url-userinfo]"
        rest = f"{userinfo}@{rest[at + 1 :]}"
    return scrub_text(f"{scheme}{sep}{rest}", get_limits())


def parse_headers(text: str, source: str) -> dict[str, str]:
    """Parse ``k1=v1,k2=v2`` (values percent-decoded, as in ``OTEL_EXPORTER_OTLP_HEADERS``).

    Raises:
        ConfigurationError: an item is not ``K=V`` or has an empty key.
    """
    headers: dict[str, str] = {}
    for item in text.split(","):
        if not item.strip():
            continue
        parts = split_header(item)
        key = unquote(parts[0]).strip() if parts is not None else ""
        if parts is None or not key or any(ch.isspace() for ch in key):
            raise ConfigurationError(
                f"{source}: header {shown_header(item)} is not of the form K=V"
            )
        headers[key.lower()] = unquote(parts[1]).strip()
    return headers


def _headers_from(value: Mapping[str, str] | str | None) -> dict[str, str] | None:
    if value is None:
        return None
    if isinstance(value, str):
        return parse_headers(value, "headers")
    result: dict[str, str] = {}
    for key, item in value.items():
        if not isinstance(key, str) or not key.strip() or not isinstance(item, str):
            shown = shown_header(key) if isinstance(key, str) else type(key).__name__
            raise ConfigurationError(f"headers: {shown}=… is not a string K=V pair")
        if any(ch.isspace() for ch in key.strip()):  # as parse_headers: gRPC and HTTP refuse it
            raise ConfigurationError(f"headers: header name {key.strip()!r} contains a space")
        result[key.strip().lower()] = item
    return result


def resolve_protocol(protocol: str | None) -> str | None:
    """Validate an explicit protocol, else read the OTEL protocol variables; None means infer."""
    source = "protocol"
    if protocol is None:
        found = _env("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL")
        if found is None:
            return None
        source, protocol = found
    normalised = protocol.strip().lower()
    if normalised not in PROTOCOLS:
        raise ConfigurationError(
            f"{source}: unsupported OTLP protocol {protocol!r} (use 'grpc' or 'http/protobuf')"
        )
    return normalised


def resolve_target(
    endpoint: str | None,
    protocol: str | None,
    headers: Mapping[str, str] | str | None,
    *,
    use_env_endpoint: bool = True,
) -> OtlpTarget | None:
    """Build the OTLP target from arguments, falling back to ``OTEL_EXPORTER_OTLP_*``.

    Returns None when no endpoint is given and none is in the environment (or
    ``use_env_endpoint`` is False). Protocol: explicit, else the protocol
    variables, else inferred — port 4318 or a ``/v1/traces`` path means
    HTTP/protobuf, anything else gRPC. An HTTP base URL gets ``/v1/traces``
    appended, except a URL from ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``, which
    the OTLP specification says to use as-is.

    Raises:
        ConfigurationError: bad protocol, malformed endpoint or header.
    """
    source, signal_specific = "endpoint", False
    if endpoint is None:
        found = endpoint_from_env()
        if found is None or not use_env_endpoint:
            return None
        source, endpoint = found
        signal_specific = source == "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
    text = endpoint.strip()
    if "://" not in text:
        text = f"http://{text}"  # a bare host:port, as gRPC users often write it
    parts = urlsplit(text)
    try:
        port = parts.port
    except ValueError as exc:
        raise ConfigurationError(
            f"{source}: bad port in OTLP endpoint {shown_endpoint(endpoint)!r}"
        ) from exc
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigurationError(
            f"{source}: OTLP endpoint {shown_endpoint(endpoint)!r} "
            "is not an http(s)://host[:port] URL"
        )
    path = parts.path.rstrip("/")
    chosen = resolve_protocol(protocol)
    if chosen is None:
        inferred_http = port == HTTP_DEFAULT_PORT or path.endswith(TRACES_PATH)
        chosen = HTTP_PROTOBUF if inferred_http else GRPC
    if chosen == GRPC:
        if path:
            raise ConfigurationError(
                f"{source}: a gRPC OTLP endpoint has no path, got {shown_endpoint(endpoint)!r} "
                "(for OTLP/HTTP pass protocol='http/protobuf')"
            )
        url = urlunsplit((parts.scheme, parts.netloc, "", "", ""))
    else:
        if not signal_specific and not path.endswith(TRACES_PATH):
            path += TRACES_PATH
        url = urlunsplit((parts.scheme, parts.netloc, path or "/", parts.query, ""))
    resolved = _headers_from(headers)
    if resolved is None:
        found = _env("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "OTEL_EXPORTER_OTLP_HEADERS")
        resolved = parse_headers(found[1], found[0]) if found else {}
    return OtlpTarget(chosen, url, tuple(sorted(resolved.items())))
