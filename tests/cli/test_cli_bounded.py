"""Huge traces on the command line: ``run --max-spans`` and the progress line while writing."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_support import SCRIPTS, invoke

import flow_xray.cli.progress
from flow_xray.tree.model import TraceResult

Cli = Callable[..., subprocess.CompletedProcess[str]]


def test_max_spans_bounds_the_trace_and_the_summary_says_how_many_were_dropped(
    flow_xray: Cli, tmp_path: Path
) -> None:
    """--max-spans 20 keeps 20 calls plus the failure; the rest are counted as dropped."""
    proc = flow_xray(
        "run", "--max-spans", "20", "--json", "t.json", str(SCRIPTS / "many_calls.py"), "300"
    )
    assert proc.returncode == 0, proc.stderr
    result = TraceResult.load(tmp_path / "t.json")
    assert len(result) == 21 and result.dropped_spans == 280
    assert [n.inputs["i"] for n in result if n.status == "error"] == [150]
    assert "280 more calls dropped" in proc.stderr


@pytest.mark.parametrize("bad", ["0", "-3", "many"])
def test_a_bad_max_spans_is_one_error_line(flow_xray: Cli, bad: str) -> None:
    """--max-spans takes a positive count; anything else is a usage error, exit 2."""
    proc = flow_xray("run", "--max-spans", bad, str(SCRIPTS / "many_calls.py"), "3")
    assert proc.returncode == 2
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith("error:") and "--max-spans" in line


def test_writing_that_takes_a_while_says_so(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Past the threshold, run names the file it is writing and how long that took."""
    monkeypatch.setattr(flow_xray.cli.progress, "SHOW_AFTER_S", 0.0)
    result = invoke("run", "--html", "out.html", str(SCRIPTS / "many_calls.py"), "50")
    assert result.exit_code == 0, result.stderr
    assert "flow-xray: writing out.html…" in result.stderr
    assert "flow-xray: writing out.html: done in" in result.stderr


def test_quick_writing_and_quiet_runs_print_no_progress(tmp_path: Path) -> None:
    """Below the threshold (a small trace), or with --quiet, there is no progress line."""
    result = invoke("run", "--html", "out.html", str(SCRIPTS / "many_calls.py"), "5")
    assert result.exit_code == 0 and "writing" not in result.stderr
    result = invoke("run", "-q", "--html", "o.html", str(SCRIPTS / "many_calls.py"), "5")
    assert result.exit_code == 0 and result.stderr == ""


def test_view_reports_progress_on_a_slow_file(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """view says when reading the trace and writing the page take longer than the threshold."""
    assert (
        invoke("run", "-q", "--json", "t.json", str(SCRIPTS / "many_calls.py"), "20").exit_code == 0
    )
    monkeypatch.setattr(flow_xray.cli.progress, "SHOW_AFTER_S", 0.0)
    result = invoke("view", "t.json", "--html", "v.html")
    assert result.exit_code == 0, result.stderr
    assert "flow-xray: reading t.json…" in result.stderr
    assert "flow-xray: writing v.html: done in" in result.stderr
