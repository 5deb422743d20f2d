"""Make a Jaeger answer fit to keep as a golden file: no paths of the machine it ran on.

Run once against a live Jaeger to refresh ``golden/jaeger_trace.json``::

    FLOW_XRAY_E2E=1 FLOW_XRAY_SAVE_GOLDEN=1 python -m pytest tests/backends/test_jaeger_view_e2e.py

Paths of the repository's files become relative to it, other absolute paths
to Python files keep only the file name; everything else, values and layout,
is kept as Jaeger returned it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
# Any other absolute path to a Python file (an interpreter's or a library's).
_OTHER_PATH = re.compile(r"(?<![\w/.])/(?:[^\s\"',/]+/)+([^\s\"',/]+\.py)")
_MACHINE_TAGS = ("host.name", "process.executable.path", "process.command_args", "process.owner")


def trim(value: Any) -> Any:
    """``value`` with machine paths cut and machine-describing process tags replaced."""
    if isinstance(value, str):
        return _OTHER_PATH.sub(r"\1", value.replace(f"{REPO}/", ""))
    if isinstance(value, list):
        return [trim(item) for item in value]
    if isinstance(value, dict):
        if value.get("key") in _MACHINE_TAGS and "value" in value:
            return {**value, "value": "<machine>" if value.get("type") == "string" else 0}
        return {key: trim(item) for key, item in value.items()}
    return value


def dumps(body: Any) -> str:
    """The trimmed answer as stable, readable JSON text."""
    return json.dumps(trim(body), indent=1, sort_keys=True) + "\n"
