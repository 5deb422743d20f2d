"""Helpers shared by the multi-process tests."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from flow_xray.tree.model import TraceNode, TraceResult

SCRIPTS = Path(__file__).parent / "scripts"
# fork is the inner loop's; spawn and forkserver start a fresh interpreter per worker (slow).
START_METHODS = (
    "fork",
    pytest.param("spawn", marks=pytest.mark.slow),
    pytest.param("forkserver", marks=pytest.mark.slow),
)

Cli = Callable[..., subprocess.CompletedProcess[str]]


def traced(flow_xray: Cli, script: str, *args: str, **env: str) -> TraceResult:
    """``flow-xray run --json trace.json scripts/SCRIPT ARGS...``; fails unless it exits 0."""
    proc = flow_xray("run", "--quiet", "--json", "trace.json", str(SCRIPTS / script), *args, **env)
    assert proc.returncode == 0, proc.stderr
    return TraceResult.load("trace.json")


def only(result: TraceResult, name: str) -> TraceNode:
    """The one node called ``name``."""
    nodes = [node for node in result if node.name == name]
    assert len(nodes) == 1, f"{len(nodes)} nodes named {name!r}"
    return nodes[0]
