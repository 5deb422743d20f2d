"""Fixtures for the multi-process tests: fixture scripts, a real ``flow-xray`` process, traces."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from processes_support import Cli

# The loopback OTLP/HTTP receiver and the Phoenix server of the OTLP tests.
from tests.sdk.otlp.conftest import otlp_receiver, phoenix  # noqa: F401 (fixtures used here too)


@pytest.fixture(autouse=True)
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test runs in its own empty working directory."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture(scope="session")
def child_env() -> dict[str, str]:
    """The environment for child processes: no OTEL_* and no inherited trace context."""
    drop = ("OTEL_", "TRACEPARENT", "TRACESTATE", "FLOW_XRAY_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    env["PYTHONUNBUFFERED"] = "1"
    return env


@pytest.fixture
def flow_xray(tmp_path: Path, child_env: dict[str, str]) -> Cli:
    """Run ``python -m flow_xray ARGS...`` in ``tmp_path``; keyword arguments are extra env vars."""

    def invoke(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "flow_xray", *args],
            cwd=tmp_path,
            env={**child_env, **env},
            capture_output=True,
            text=True,
            timeout=180,
        )

    return invoke
