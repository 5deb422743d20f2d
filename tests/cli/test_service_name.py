"""Every command names its service as a user expects (real subprocesses).

``OTEL_SERVICE_NAME`` and ``OTEL_RESOURCE_ATTRIBUTES`` are honoured by every
command; without them, ``flow-xray demo`` names its service ``flow-xray-demo``
and ``flow-xray run`` names it after the script or module it runs (``app`` for
``app.py``; the SDK's own default would be ``unknown_service:python3``);
``--service-name`` wins over all. The OTLP JSON file's resource shows what a
backend would get.
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


def resource(tmp_path: Path, command: str, *args: str, **env: str) -> dict[str, str]:
    """Run ``flow-xray COMMAND --otlp-json spans.jsonl ARGS`` in ``tmp_path`` with only
    ``env``'s OTEL_ variables; the exported spans' resource attributes."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    out = tmp_path / "spans.jsonl"
    done = subprocess.run(
        [sys.executable, "-m", "flow_xray", command, "--otlp-json", str(out), *args],
        cwd=tmp_path,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    line = out.read_text(encoding="utf-8").splitlines()[0]
    (resource_spans, *_) = json.loads(line)["resourceSpans"]
    attributes = resource_spans["resource"]["attributes"]
    assert [a["key"] for a in attributes].count("service.name") == 1
    return {a["key"]: a["value"].get("stringValue", "") for a in attributes}


def service_name(tmp_path: Path, *args: str, **env: str) -> str:
    """``flow-xray run -q ARGS``'s service name."""
    return resource(tmp_path, "run", "-q", *args, **env)["service.name"]


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({}, "flow-xray-demo"),
        ({"OTEL_SERVICE_NAME": "my-agent"}, "my-agent"),
        ({"OTEL_RESOURCE_ATTRIBUTES": "service.name=from-attrs,team=ml"}, "from-attrs"),
    ],
)
def test_demo_takes_the_service_name_from_the_environment(
    tmp_path: Path, env: dict[str, str], expected: str
) -> None:
    """The demo's default name gives way to the standard variables."""
    found = resource(tmp_path, "demo", "--html", str(tmp_path / "d.html"), **env)
    assert found["service.name"] == expected


def test_the_option_wins_and_resource_attributes_join(tmp_path: Path) -> None:
    """``--service-name`` over ``OTEL_SERVICE_NAME``; the other resource attributes are kept."""
    found = resource(
        tmp_path,
        "demo",
        "--html",
        str(tmp_path / "d.html"),
        "--service-name",
        "explicit",
        OTEL_SERVICE_NAME="from-env",
        OTEL_RESOURCE_ATTRIBUTES="deployment.environment=test,team=ml",
    )
    assert found["service.name"] == "explicit"
    assert (found["deployment.environment"], found["team"]) == ("test", "ml")


def test_run_honours_both_variables(tmp_path: Path) -> None:
    """``flow-xray run`` exports under the environment's service name and attributes."""
    (tmp_path / "app.py").write_text(SCRIPT, encoding="utf-8")
    found = resource(
        tmp_path,
        "run",
        "--quiet",
        "--html",
        str(tmp_path / "t.html"),
        "app.py",
        OTEL_SERVICE_NAME="scripted",
        OTEL_RESOURCE_ATTRIBUTES="team=ml",
    )
    assert (found["service.name"], found["team"]) == ("scripted", "ml")


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
