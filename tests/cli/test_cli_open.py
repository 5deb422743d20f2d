"""``--open`` says what it opened, or in one line that no browser could be started.

Run as real processes with a real ``$BROWSER`` (Python's ``webbrowser`` reads it):
a command that records the page it was given, or one that does not exist.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from flow_xray import TraceNode, TraceResult


def run_open(folder: Path, browser: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    env["BROWSER"] = browser
    return subprocess.run(
        [sys.executable, "-m", "flow_xray", *args, "--open"],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def recording_browser(folder: Path) -> Path:
    """An executable that writes the address it is asked to open to ``opened.txt``."""
    script = folder / "browser.py"
    script.write_text(
        f"#!{sys.executable}\nimport sys, pathlib\n"
        f"pathlib.Path({str(folder / 'opened.txt')!r}).write_text(sys.argv[1])\n",
        encoding="utf-8",
    )
    script.chmod(0o755)
    return script


def test_view_open_says_which_page_it_opened(tmp_path: Path) -> None:
    """The browser gets the page's file:// address, and the terminal names it."""
    TraceResult(roots=[TraceNode(id="n1", name="job", latency_ms=5.0)]).save(tmp_path / "t.json")
    done = run_open(tmp_path, str(recording_browser(tmp_path)), "view", "t.json")
    uri = (tmp_path / "t.html").resolve().as_uri()
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "opened.txt").read_text() == uri
    assert f"flow-xray: opened {uri} in a web browser" in done.stderr.splitlines()


def test_view_open_without_a_browser_says_so_in_one_line(tmp_path: Path) -> None:
    """No browser to start: the page is still written, and one line says where it is."""
    TraceResult(roots=[TraceNode(id="n1", name="job", latency_ms=5.0)]).save(tmp_path / "t.json")
    done = run_open(tmp_path, str(tmp_path / "no-such-browser"), "view", "t.json")
    uri = (tmp_path / "t.html").resolve().as_uri()
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "t.html").exists()
    said = [line for line in done.stderr.splitlines() if "browser" in line]
    assert said == [f"flow-xray: could not open a web browser; open {uri} yourself"]
