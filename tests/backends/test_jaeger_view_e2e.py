"""End to end: a trace downloaded from a real Jaeger opens in `flow-xray view` as the local one.

The agent's trace goes through exporters/jaeger.yaml into Jaeger v2; what
Jaeger's query API returns for it is saved as a file and read back. Jaeger
keeps microseconds, so times are compared to the microsecond; everything
else must be the trace `flow-xray run` saved locally.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest

from flow_xray import TraceResult
from flow_xray.render.payload import read_page
from tests.backends.golden_trim import dumps
from tests.backends.landing import Landed, land
from tests.backends.servers import Collector, Jaeger

pytestmark = pytest.mark.e2e

GOLDEN = Path(__file__).resolve().parent / "golden" / "jaeger_trace.json"
TIMES = ("latency_ms", "start_ms", "time_ms")


@pytest.fixture(scope="module")
def downloaded(
    jaeger_collector: Collector, jaeger: Jaeger, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Landed, Path]:
    """The agent's trace as Jaeger's API returns it, saved to a file."""
    tmp_path = tmp_path_factory.mktemp("run-jaeger-view")
    landed = land(jaeger_collector, jaeger, tmp_path, "flow-xray-e2e-jaeger-view")
    path = tmp_path / "jaeger.json"
    path.write_text(json.dumps(landed.body), encoding="utf-8")
    if os.environ.get("FLOW_XRAY_SAVE_GOLDEN") == "1":
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_text(dumps(landed.body), encoding="utf-8")
    return landed, path


def _split_times(value: Any, times: list[float]) -> Any:
    """``value`` without its time fields, which are appended to ``times`` in walk order."""
    if isinstance(value, dict):
        kept = {}
        for key, item in value.items():
            if key in TIMES and isinstance(item, float):
                times.append(item)
            else:
                kept[key] = _split_times(item, times)
        return kept
    if isinstance(value, list):
        return [_split_times(item, times) for item in value]
    return value


def test_jaeger_download_loads_as_the_local_tree(downloaded: tuple[Landed, Path]) -> None:
    """Nodes (ids, nesting, kinds, inputs, outputs, errors, usage, attributes) match the local run.

    Times (start, latency, event offsets) agree to Jaeger's microsecond.
    """
    landed, path = downloaded
    loaded_times: list[float] = []
    local_times: list[float] = []
    loaded = _split_times(TraceResult.load(path).to_dict()["nodes"], loaded_times)
    local = _split_times(landed.run.result.to_dict()["nodes"], local_times)
    assert loaded == local
    assert loaded_times == pytest.approx(local_times, abs=0.002)


def test_jaeger_download_has_the_local_totals(downloaded: tuple[Landed, Path]) -> None:
    """Calls, errors, tokens and cost are the local run's; wall time to the microsecond."""
    landed, path = downloaded
    loaded = asdict(TraceResult.load(path).totals)
    local = asdict(landed.run.result.totals)
    assert loaded.pop("wall_time_ms") == pytest.approx(local.pop("wall_time_ms"), abs=0.002)
    assert loaded == local
    assert (loaded["nodes"], loaded["errors"], loaded["total_tokens"]) == (5, 1, 160)


def test_flow_xray_view_renders_the_jaeger_download(
    downloaded: tuple[Landed, Path], tmp_path: Path
) -> None:
    """`flow-xray view jaeger.json` exits 0 and writes a viewer naming every call."""
    _, path = downloaded
    html = tmp_path / "jaeger.html"
    completed = subprocess.run(
        [sys.executable, "-m", "flow_xray", "view", str(path), "--html", str(html)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert completed.returncode == 0, completed.stderr
    names = {row["name"] for row in read_page(html.read_text(encoding="utf-8"))["nodes"]}
    assert {"agent", "plan", "search", "rank", "fetch"} <= names


def _shape(value: Any) -> Any:
    """The structure of a Jaeger answer: keys, tag keys and types, list lengths; no values."""
    if isinstance(value, dict):
        if "key" in value and "type" in value:
            return ("tag", value["key"], value["type"])
        return {key: _shape(item) for key, item in value.items()}
    if isinstance(value, list):
        return sorted(
            (_shape(item) for item in value), key=lambda item: json.dumps(item, sort_keys=True)
        )
    return type(value).__name__


def test_golden_copy_has_the_shape_jaeger_returns_now(downloaded: tuple[Landed, Path]) -> None:
    """tests/backends/golden/jaeger_trace.json has the keys and tag types this Jaeger returns."""
    landed, _ = downloaded
    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))
    assert _shape(golden) == _shape(landed.body)
