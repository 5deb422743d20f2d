"""Helpers shared by the command-line tests."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner, Result

from flow_xray.cli import cli

SCRIPTS = Path(__file__).parent / "scripts"


def invoke(*args: str) -> Result:
    """Run ``flow-xray ARGS...`` in-process with click's runner (stderr kept separate)."""
    return CliRunner().invoke(cli, list(args), prog_name="flow-xray", catch_exceptions=False)
