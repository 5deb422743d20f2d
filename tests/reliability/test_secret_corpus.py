"""Recall and precision of secret scrubbing, measured on the corpora of `secret_corpus`.

Recall: every credential of `CREDENTIALS` is put in each position a value can
take in a traced call (an argument, a dict key, a nested key, a header, a URL
query, an exception message, a repr, an annotation, the return value) and
looked for in each sink (the SDK spans a user's exporter receives, ``to_json``,
the page's packed data, the OTLP JSON file): no fragment of it may be found.
Precision: every ordinary value of `ORDINARY` is passed under its own name,
inside ``name=value`` text and inside JSON text: each must come back unchanged.
"""

from __future__ import annotations

import contextlib
import json
import logging
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from opentelemetry import trace as trace_api
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from flow_xray import OtlpJsonFileExporter, trace
from flow_xray.sdk import provider as flow_provider
from flow_xray.serialize import get_limits, scrub_text
from tests.reliability.secret_corpus import CREDENTIALS, ORDINARY, Ordinary
from tests.reliability.test_secrets import page_strings, span_strings


class Opaque:
    """A user object whose repr shows what it holds."""

    def __init__(self, held: str) -> None:
        self.held = held

    def __repr__(self) -> str:
        return f"Opaque(held={self.held!r})"


@trace
def call(value: Any) -> Any:
    """A traced call taking ``value`` and giving it back."""
    return value


@trace
def annotated(note: str) -> None:
    """A traced call annotating its span with ``note`` (under a plain name)."""
    trace.annotate(note=note)


@trace
def fail(message: str) -> None:
    """A traced call raising ``message``."""
    raise RuntimeError(message)


def _value(text: str) -> None:
    call(text)


def _key(text: str) -> None:
    call({text: 1})


def _nested_key(text: str) -> None:
    call({"config": [{"profiles": {text: "on"}}]})


def _header(text: str) -> None:
    call({"headers": {"X-Note": text}, "raw": f"GET / HTTP/1.1\r\nX-Note: {text}\r\n\r\n"})


def _url(text: str) -> None:
    call(f"https://api.example.com/v1/items?note={text}&page=2")


def _exception(text: str) -> None:
    with contextlib.suppress(RuntimeError):
        fail(f"request failed: {text}")


def _repr(text: str) -> None:
    call(Opaque(text))


def _annotation(text: str) -> None:
    annotated(text)


POSITIONS: dict[str, Callable[[str], None]] = {
    "value": _value,
    "dict key": _key,
    "nested key": _nested_key,
    "header": _header,
    "URL query": _url,
    "exception message": _exception,
    "repr": _repr,
    "annotation": _annotation,
}


def _sinks(tmp_path: Path, position: Callable[[str], None]) -> dict[str, str]:
    """Every credential through ``position``, under a user's SDK provider with an in-memory
    exporter and flow-xray's OTLP JSON file exporter: each sink's text."""
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    otlp = tmp_path / f"{position.__name__}.jsonl"
    provider.add_span_processor(SimpleSpanProcessor(OtlpJsonFileExporter(otlp)))
    trace_api.set_tracer_provider(provider)
    with trace.capture() as result:
        for credential in CREDENTIALS:
            position(credential.text)
    provider.shutdown()
    return {
        "SDK spans": span_strings(memory.get_finished_spans()),
        "to_json": result.to_json(),
        "page data": page_strings(result.to_html()),
        "OTLP JSON": otlp.read_text(encoding="utf-8"),
    }


@pytest.mark.parametrize("position", POSITIONS)
def test_no_credential_format_reaches_any_sink(
    position: str, tmp_path: Path, otel_globals: Callable[[], None]
) -> None:
    """Each credential of the corpus in this position: no fragment of it in any sink."""
    sinks = _sinks(tmp_path, POSITIONS[position])
    leaked = [
        (credential.what, sink)
        for credential in CREDENTIALS
        for sink, text in sinks.items()
        if any(fragment in text for fragment in credential.fragments)
    ]
    assert leaked == []
    assert all("[REDACTED" in text for text in sinks.values())


# --- precision -------------------------------------------------------------------
def _plain(value: Any) -> Any:
    return json.loads(json.dumps(value))


def _changed(item: Ordinary) -> list[str]:
    """The forms in which ``item`` did not come back unchanged from a traced call."""
    limits = get_limits()
    forms: dict[str, Any] = {"bare value": item.value}
    if item.name is not None:
        forms["under its name"] = {item.name: item.value}
        forms["JSON text"] = json.dumps({item.name: item.value})
        if isinstance(item.value, (str, int, bool)):
            forms["name=value text"] = f"{item.name}={item.value}"
            forms["name: value text"] = f"{item.name}: {item.value}"
    changed = []
    with trace.capture() as result:
        for form in forms.values():
            call(form)
    for (form, value), node in zip(forms.items(), result.roots, strict=True):
        if node.output != _plain(value) or node.inputs != {"value": _plain(value)}:
            changed.append(form)
    for form, value in forms.items():
        if isinstance(value, str) and scrub_text(value, limits) is not value:
            changed.append(f"{form} (scrub_text)")
    return changed


@pytest.mark.parametrize("item", ORDINARY, ids=[o.what for o in ORDINARY])
def test_ordinary_values_survive(item: Ordinary) -> None:
    """An ordinary value (a logprobs token, ``pad_token``, ``PWD``, a SHA, a UUID, an image...)
    comes back unchanged in every form: bare, under its name, in JSON and ``name=value`` text."""
    assert _changed(item) == []


# --- warnings ----------------------------------------------------------------------
def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@trace
def step() -> int:
    """A traced call whose span is exported."""
    return 1


@pytest.mark.slow
def test_the_grpc_loss_warning_shows_no_endpoint_password(
    caplog: pytest.LogCaptureFixture, otel_globals: Callable[[], None]
) -> None:
    """Spans lost to an unreachable gRPC endpoint with a password: the one warning line names
    the endpoint and the gRPC exporter's own reason without the password (the exporter
    writes its target as ``user:password@host:port``, with no scheme)."""
    password = "Gq7Lm2Zx9Rt4-endpoint"
    endpoint = f"http://app:{password}@127.0.0.1:{_closed_port()}"
    flow_provider.configure(endpoint=endpoint, protocol="grpc", export_timeout_s=1.0)
    step()
    with caplog.at_level(logging.WARNING, logger="flow_xray"):
        flow_provider.shutdown(timeout_s=3.0)
    (warning,) = [r.getMessage() for r in caplog.records if "not exported" in r.getMessage()]
    assert "grpc" in warning and "127.0.0.1" in warning
    assert "Gq7Lm2" not in warning, warning  # not even the start of it, before a "…"
