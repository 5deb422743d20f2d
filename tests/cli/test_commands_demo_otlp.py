"""`flow-xray demo` can also export its spans, to check a backend set-up end to end."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from flow_xray.cli import cli
from flow_xray.formats.registry import load_trace


@pytest.mark.usefixtures("otel_globals")  # in-process, `--otlp-json` installs a global provider
def test_demo_writes_otlp_json_lines_that_view_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """demo --otlp-json writes the demo's spans as OTLP JSON that loads back as the same tree."""
    monkeypatch.chdir(tmp_path)
    out = CliRunner().invoke(cli, ["demo", "--otlp-json", "spans.jsonl", "--html", "demo.html"])
    assert out.exit_code == 0, out.output
    reread = load_trace(tmp_path / "spans.jsonl")
    assert reread.find("research_agent") is not None
    assert reread.totals.nodes == 14
    assert reread.totals.total_tokens > 0


def test_demo_rejects_a_bad_otlp_header(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A malformed --otlp-header is one error line, exit 2."""
    monkeypatch.chdir(tmp_path)
    out = CliRunner().invoke(cli, ["demo", "--otlp-header", "nonsense"])
    assert out.exit_code == 2
    assert out.output.strip().splitlines()[-1].startswith("error:")


@pytest.mark.slow
def test_otlp_details_without_a_destination_are_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--service-name with nowhere to send spans warns instead of silently doing nothing."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_ENDPOINT", raising=False)
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", raising=False)
    out = CliRunner().invoke(cli, ["demo", "--service-name", "svc"])
    assert out.exit_code == 0
    assert "warning: --service-name ignored" in out.stderr
