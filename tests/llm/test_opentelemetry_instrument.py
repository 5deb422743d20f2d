"""Under ``opentelemetry-instrument``, an endpoint given twice is exported to once.

``opentelemetry-instrument`` (with ``opentelemetry-distro``) installs an SDK
provider exporting to ``OTEL_EXPORTER_OTLP_ENDPOINT`` and loads every installed
instrumentor. ``flow-xray run --otlp-endpoint`` with the same URL must not add
a second exporter: every span reaches the backend once.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn

import pytest

from tests.llm.fake_llm import FakeLLM
from tests.llm.harness import APP, ROOT
from tests.sdk.otlp.conftest import OtlpHttpReceiver

_LAUNCH = "\n".join(
    (
        "import sys",
        "from opentelemetry.instrumentation.auto_instrumentation import run",
        "sys.exit(run())",
    )
)

pytestmark = pytest.mark.slow


def test_same_endpoint_from_option_and_environment_exports_each_span_once(
    fake_llm: FakeLLM,
    otlp_receiver: OtlpHttpReceiver,
    tmp_path: Path,
    need: Callable[[str], None],
    e2e_missing: Callable[[str], NoReturn],
) -> None:
    """Every span name arrives as often as it occurs in the trace: no duplicate exporter."""
    need("openai", "anthropic", "opentelemetry.distro")
    if importlib.util.find_spec("opentelemetry.instrumentation.auto_instrumentation") is None:
        e2e_missing("opentelemetry-instrument is not installed (opentelemetry-instrumentation)")
    # The `opentelemetry-instrument` console script, run by this interpreter
    # (a virtualenv sharing system packages has no script of its own).
    launcher = [sys.executable, "-c", _LAUNCH]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "FX_"))}
    env.update(
        FAKE_LLM_URL=fake_llm.url,
        FX_SHAPES="chat",
        PYTHONPATH=str(ROOT),
        OTEL_TRACES_EXPORTER="otlp",
        OTEL_METRICS_EXPORTER="none",
        OTEL_LOGS_EXPORTER="none",
        OTEL_EXPORTER_OTLP_PROTOCOL="http/protobuf",
        OTEL_EXPORTER_OTLP_ENDPOINT=otlp_receiver.url,
        OTEL_BSP_SCHEDULE_DELAY="100",
    )
    trace_json = tmp_path / "trace.json"
    command = [*launcher, sys.executable, "-m", "flow_xray", "run", "--quiet"]
    command += ["--json", str(trace_json), "--otlp-endpoint", otlp_receiver.url, str(APP)]
    done = subprocess.run(
        command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=180
    )
    assert done.returncode == 0, done.stderr[-3000:]
    from flow_xray.formats.registry import load_trace

    in_trace = Counter(node.name for node in load_trace(trace_json))
    received = Counter(otlp_receiver.span_names())
    assert in_trace["agent"] == 1 and len(in_trace) > 2  # instrumentors' spans are there too
    assert received == in_trace
