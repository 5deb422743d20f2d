"""The viewer's JavaScript units under Node.js (``node --test``): fast, no browser.

Each ``js/*.test.js`` file is one test here. Node is a real component: a machine
without it skips these (and fails them under ``FLOW_XRAY_E2E=1``, as CI runs).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from flow_xray.render.page import DIFF_SCRIPT_FILES, SCRIPT_FILES

JS_DIR = Path(__file__).resolve().parent
TESTS = sorted(JS_DIR.glob("*.test.js"))


ORDER = list(SCRIPT_FILES) + [n for n in DIFF_SCRIPT_FILES if n not in SCRIPT_FILES]
STATIC = Path(__file__).resolve().parents[3] / "flow_xray" / "render" / "static"


def test_every_script_is_on_a_page() -> None:
    """The namespace check loads the pages' scripts in page order: a script no page
    includes would go unchecked."""
    assert {p.name for p in TESTS} >= {"namespaces.test.js", "layout.test.js"}
    assert sorted(p.name for p in STATIC.glob("*.js")) == sorted(ORDER)


@pytest.mark.parametrize("path", TESTS, ids=[p.name for p in TESTS])
def test_js(path: Path, e2e_missing: Callable[[str], Any]) -> None:
    node = shutil.which("node")
    if node is None:
        e2e_missing("node (Node.js) is not installed")
    env = dict(os.environ, FX_SCRIPT_FILES=json.dumps(ORDER))
    done = subprocess.run(
        [node, "--test", "--test-reporter=spec", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert done.returncode == 0, done.stdout + done.stderr
