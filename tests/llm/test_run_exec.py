"""``flow-xray run`` on a launcher that replaces its process says that no trace could be written."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow


def test_a_launcher_that_execs_says_no_trace_was_written(
    tmp_path: Path,
) -> None:
    """``flow-xray run`` on a script that replaces itself (os.execv) says why nothing is written."""
    script = tmp_path / "launcher.py"
    script.write_text(
        "import os, sys\nos.execv(sys.executable, [sys.executable, '-c', 'print(42)'])\n"
    )
    done = subprocess.run(
        [sys.executable, "-m", "flow_xray", "run", str(script)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.stdout.strip() == "42"
    assert "no trace could be written" in done.stderr
    assert not (tmp_path / "launcher_trace.html").exists()
