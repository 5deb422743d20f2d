"""Every command honours ``OTEL_SERVICE_NAME`` and ``OTEL_RESOURCE_ATTRIBUTES`` (real subprocesses).

``flow-xray demo`` names its service ``flow-xray-demo`` only when neither the
option nor the environment names one; ``flow-xray run`` takes both too. The
OTLP JSON file's resource shows what a backend would get.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow


def _resource(path: Path) -> dict[str, str]:
    line = path.read_text(encoding="utf-8").splitlines()[0]
    (resource_spans, *_) = json.loads(line)["resourceSpans"]
    return {
        a["key"]: a["value"].get("stringValue", "")
        for a in resource_spans["resource"]["attributes"]
    }


def _run(tmp_path: Path, args: list[str], **env: str) -> dict[str, str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    out = tmp_path / "spans.jsonl"
    done = subprocess.run(
        [sys.executable, "-m", "flow_xray", *args, "--otlp-json", str(out)],
        cwd=tmp_path,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return _resource(out)


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
    resource = _run(tmp_path, ["demo", "--html", str(tmp_path / "d.html")], **env)
    assert resource["service.name"] == expected


def test_the_option_wins_and_resource_attributes_join(tmp_path: Path) -> None:
    """``--service-name`` over ``OTEL_SERVICE_NAME``; the other resource attributes are kept."""
    resource = _run(
        tmp_path,
        ["demo", "--html", str(tmp_path / "d.html"), "--service-name", "explicit"],
        OTEL_SERVICE_NAME="from-env",
        OTEL_RESOURCE_ATTRIBUTES="deployment.environment=test,team=ml",
    )
    assert resource["service.name"] == "explicit"
    assert (resource["deployment.environment"], resource["team"]) == ("test", "ml")


def test_run_honours_both_variables(tmp_path: Path) -> None:
    """``flow-xray run`` exports under the environment's service name and attributes."""
    script = tmp_path / "app.py"
    script.write_text(
        "from flow_xray import trace\n\n@trace\ndef step():\n    return 1\n\nstep()\n",
        encoding="utf-8",
    )
    resource = _run(
        tmp_path,
        ["run", "--quiet", "--html", str(tmp_path / "t.html"), str(script)],
        OTEL_SERVICE_NAME="scripted",
        OTEL_RESOURCE_ATTRIBUTES="team=ml",
    )
    assert (resource["service.name"], resource["team"]) == ("scripted", "ml")
