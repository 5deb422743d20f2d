"""Fixtures for the backend end-to-end tests: the real Collector and Jaeger v2, one of each kind.

The binaries come from ``tests/backends/build.sh``. Jaeger and one Collector
per config in ``exporters/`` start at most once per test session, on free
127.0.0.1 ports, and stop by pid when the session ends.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import NoReturn

import pytest

from tests.backends.binaries import jaeger_path, missing_reason, otelcol_path
from tests.backends.servers import (
    Collector,
    Jaeger,
    ServerFailed,
    start_collector,
    start_jaeger,
)

REPO = Path(__file__).resolve().parents[2]
EXPORTERS = REPO / "exporters"


@pytest.fixture(scope="session")
def otelcol(e2e_missing: Callable[[str], NoReturn]) -> Path:
    """The Collector built from tests/backends/otelcol-builder.yaml."""
    path = otelcol_path()
    reason = missing_reason(path, "the OpenTelemetry Collector")
    if reason:
        e2e_missing(reason)
    return path


@pytest.fixture(scope="session")
def jaeger_binary(e2e_missing: Callable[[str], NoReturn]) -> Path:
    """The Jaeger v2 binary."""
    path = jaeger_path()
    reason = missing_reason(path, "Jaeger v2")
    if reason:
        e2e_missing(reason)
    return path


@pytest.fixture(scope="session")
def jaeger(jaeger_binary: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Jaeger]:
    """Jaeger v2 with in-memory storage, started once per session."""
    try:
        with start_jaeger(jaeger_binary, tmp_path_factory.mktemp("jaeger")) as server:
            yield server
    except ServerFailed as failed:
        pytest.fail(str(failed))


def _collector(otelcol: Path, name: str, env: dict[str, str], workdir: Path) -> Iterator[Collector]:
    try:
        with start_collector(otelcol, EXPORTERS / f"{name}.yaml", env, workdir) as collector:
            yield collector
    except ServerFailed as failed:
        pytest.fail(str(failed))


@pytest.fixture(scope="session")
def jaeger_collector(
    otelcol: Path, jaeger: Jaeger, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Collector]:
    """A Collector running exporters/jaeger.yaml, exporting to the session's Jaeger."""
    env = {"JAEGER_OTLP_ENDPOINT": jaeger.otlp_grpc}
    yield from _collector(otelcol, "jaeger", env, tmp_path_factory.mktemp("collector-jaeger"))


@pytest.fixture(scope="session")
def tempo_collector(
    otelcol: Path, jaeger: Jaeger, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Collector]:
    """A Collector running exporters/tempo.yaml, its TEMPO_OTLP_ENDPOINT on Jaeger's OTLP port."""
    env = {"TEMPO_OTLP_ENDPOINT": jaeger.otlp_grpc}
    yield from _collector(otelcol, "tempo", env, tmp_path_factory.mktemp("collector-tempo"))


@pytest.fixture(scope="session")
def redacted_collector(
    otelcol: Path, jaeger: Jaeger, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Collector]:
    """A Collector running exporters/redacted.yaml, exporting to the session's Jaeger."""
    env = {"UPSTREAM_OTLP_ENDPOINT": jaeger.otlp_grpc}
    yield from _collector(otelcol, "redacted", env, tmp_path_factory.mktemp("collector-redacted"))


@pytest.fixture(scope="session")
def file_collector(
    otelcol: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Collector, Path]]:
    """A Collector running exporters/file.yaml, and the OTLP JSON lines file it writes."""
    workdir = tmp_path_factory.mktemp("collector-file")
    path = workdir / "spans.jsonl"
    for collector in _collector(otelcol, "file", {"OTLP_FILE_PATH": str(path)}, workdir):
        yield collector, path


@pytest.fixture(scope="session")
def debug_collector(otelcol: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Collector]:
    """A Collector running exporters/debug.yaml (spans go to its log)."""
    yield from _collector(otelcol, "debug", {}, tmp_path_factory.mktemp("collector-debug"))
