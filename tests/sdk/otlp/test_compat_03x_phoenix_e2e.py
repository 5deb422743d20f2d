"""End to end: a script written against 0.3.x, exported to a real OTLP backend (Phoenix).

``trace.tag`` labels and key-value tags arrive as ``flow_xray.tag.*`` attributes,
``@trace(redact={...})`` names arrive redacted, and the script's own 0.3.x calls
(``trace.run(..., raise_exceptions=True)`` in a ``try``, ``result.error``) work
under ``flow-xray run --otlp-endpoint``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.sdk.otlp.phoenix_server import Phoenix
from tests.sdk.otlp.test_phoenix_llm_e2e import flat  # Phoenix nests attributes by their dots

pytestmark = pytest.mark.e2e
PROJECT = "flow-xray-e2e-compat03"
SCRIPT = """
from flow_xray import trace


@trace(redact={"ssn"}, kind="tool")
def lookup(customer: dict) -> dict:
    trace.tag("cache-miss", region="eu", attempt=2)
    return {"plan": "pro", "ssn": customer["ssn"]}


@trace
def fail() -> None:
    raise ValueError("no such customer")


result = trace.run(lookup, {"name": "Ann", "ssn": "123-45-6789"})
assert result.error is None, result.error
try:
    trace.run(fail, raise_exceptions=True)
except ValueError as exc:
    print("raised:", exc)
"""


def test_tags_and_redaction_land_in_phoenix(phoenix: Phoenix, tmp_path: Path) -> None:
    """The tool span in Phoenix has the tags as attributes and no trace of the SSN."""
    script = tmp_path / "app03.py"
    script.write_text(textwrap.dedent(SCRIPT), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env["OTEL_RESOURCE_ATTRIBUTES"] = f"openinference.project.name={PROJECT}"
    command = [
        *(sys.executable, "-m", "flow_xray", "run", "--quiet"),
        *("--html", str(tmp_path / "trace.html")),
        *("--otlp-endpoint", phoenix.http_url, "--otlp-protocol", "http/protobuf"),
        str(script),
    ]
    done = subprocess.run(
        command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "raised: no such customer"

    spans = {s["name"]: s for s in phoenix.wait_for_spans(PROJECT, 2, timeout_s=20)}
    assert set(spans) == {"lookup", "fail"}
    attributes = flat(spans["lookup"]["attributes"])
    assert attributes["flow_xray.tag.cache-miss"] is True
    assert attributes["flow_xray.tag.region"] == "eu"
    assert attributes["flow_xray.tag.attempt"] == 2
    assert "123-45-6789" not in str(spans["lookup"])
    assert '"ssn":"[REDACTED]"' in attributes["input.value"].replace(" ", "")
    assert spans["fail"]["status_code"] == "ERROR"
