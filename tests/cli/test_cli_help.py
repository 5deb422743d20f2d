"""Help and version: every command documents itself; ``python -m flow_xray`` is the CLI."""

from __future__ import annotations

import subprocess
import sys

import pytest
from click.testing import CliRunner

from flow_xray import __version__
from flow_xray.cli import cli

COMMANDS = [[], ["run"], ["view"], ["demo"], ["dot"], ["dot", "demo"], ["dot", "export"]]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c) or "flow-xray")
def test_every_command_has_help(command: list[str]) -> None:
    """`--help` on every command prints its usage and exits 0."""
    result = CliRunner().invoke(cli, [*command, "--help"], prog_name="flow-xray")
    assert result.exit_code == 0
    assert result.stdout.startswith(f"Usage: {' '.join(['flow-xray', *command])} ")


def test_run_help_shows_script_and_args() -> None:
    """`run --help` shows that the script's own arguments follow SCRIPT."""
    result = CliRunner().invoke(cli, ["run", "--help"], prog_name="flow-xray")
    assert "[OPTIONS] SCRIPT [ARGS]..." in result.stdout


def test_version_prints_package_version() -> None:
    """`--version` prints `flow-xray <version>`."""
    result = CliRunner().invoke(cli, ["--version"], prog_name="flow-xray")
    assert (result.exit_code, result.stdout) == (0, f"flow-xray {__version__}\n")


def test_python_dash_m_runs_the_cli() -> None:
    """`python -m flow_xray --version` runs the same command line."""
    proc = subprocess.run(
        [sys.executable, "-m", "flow_xray", "--version"], capture_output=True, text=True, timeout=60
    )
    assert (proc.returncode, proc.stdout) == (0, f"flow-xray {__version__}\n")
