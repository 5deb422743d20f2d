"""Fixtures for the command-line tests: the fixture scripts and a real ``flow-xray`` process."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every CLI test runs in its own empty working directory."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture(scope="session")
def child_env() -> dict[str, str]:
    """The environment for child processes, without OTEL_* variables (no accidental export)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env["PYTHONUNBUFFERED"] = "1"
    return env


@pytest.fixture
def flow_xray(
    tmp_path: Path, child_env: dict[str, str]
) -> Callable[..., subprocess.CompletedProcess[str]]:
    """Run ``python -m flow_xray ARGS...`` in ``tmp_path`` and return the finished process.

    Keyword arguments are extra environment variables.
    """

    def invoke(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "flow_xray", *args],
            cwd=tmp_path,
            env={**child_env, **env},
            capture_output=True,
            text=True,
            timeout=120,
        )

    return invoke
