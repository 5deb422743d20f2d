"""``flow-xray run --otlp-json`` names the service after the script or module it runs.

Without ``--service-name``, ``OTEL_SERVICE_NAME`` or ``OTEL_RESOURCE_ATTRIBUTES``,
the spans' resource says ``service.name = app`` for ``app.py`` (the SDK's own
default would be ``unknown_service:python3``); those settings still win.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # child processes
SCRIPT = "from flow_xray import trace\n\n@trace\ndef step():\n    return 1\n\nstep()\n"


def service_name(tmp_path: Path, *args: str, **env: str) -> str:
    """Run ``flow-xray run --otlp-json spans.jsonl ARGS`` in ``tmp_path``; the spans'
    ``service.name``."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    out = tmp_path / "spans.jsonl"
    done = subprocess.run(
        [sys.executable, "-m", "flow_xray", "run", "-q", "--otlp-json", str(out), *args],
        cwd=tmp_path,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    (resource_spans, *_) = json.loads(out.read_text(encoding="utf-8").splitlines()[0])[
        "resourceSpans"
    ]
    names = [
        a["value"]["stringValue"]
        for a in resource_spans["resource"]["attributes"]
        if a["key"] == "service.name"
    ]
    assert len(names) == 1
    return str(names[0])


def test_a_script_names_the_service(tmp_path: Path) -> None:
    """``app.py`` exports as service ``app``."""
    (tmp_path / "app.py").write_text(SCRIPT, encoding="utf-8")
    assert service_name(tmp_path, "app.py") == "app"


def test_a_module_names_the_service(tmp_path: Path) -> None:
    """``-m jobs.nightly`` exports as service ``jobs.nightly``."""
    (tmp_path / "jobs").mkdir()
    (tmp_path / "jobs" / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "jobs" / "nightly.py").write_text(SCRIPT, encoding="utf-8")
    assert service_name(tmp_path, "-m", "jobs.nightly") == "jobs.nightly"


def test_the_environment_still_names_the_service(tmp_path: Path) -> None:
    """``OTEL_SERVICE_NAME`` wins over the script's name, ``--service-name`` over both."""
    (tmp_path / "app.py").write_text(SCRIPT, encoding="utf-8")
    assert service_name(tmp_path, "app.py", OTEL_SERVICE_NAME="billing") == "billing"
    named = service_name(tmp_path, "--service-name", "cli", "app.py", OTEL_SERVICE_NAME="x")
    assert named == "cli"
