"""Make a Jaeger answer fit to keep as a golden file: no paths of the machine it ran on.

Run once against a live Jaeger to refresh ``golden/jaeger_trace.json``::

    FLOW_XRAY_E2E=1 FLOW_XRAY_SAVE_GOLDEN=1 python -m pytest tests/backends/test_jaeger_view_e2e.py

Absolute paths before the repository's own files (``.../tests/backends/x.py``,
``.../flow_xray/x.py``) and of the interpreter are cut to what follows them;
everything else, values and layout, is kept as Jaeger returned it.
"""

from __future__ import annotations

import json
import re
from typing import Any

# An absolute path up to a repository folder, or any absolute path to a Python file.
_REPO_PATH = re.compile(r"/[^\s\"',]*?/((?:tests/backends|flow_xray)/)")
_OTHER_PATH = re.compile(r"/[^\s\"',]*/([^/\s\"',]+\.py)")
_MACHINE_TAGS = ("host.name", "process.executable.path", "process.command_args", "process.owner")


def trim(value: Any) -> Any:
    """``value`` with machine paths cut and machine-describing process tags replaced."""
    if isinstance(value, str):
        return _OTHER_PATH.sub(r"\1", _REPO_PATH.sub(r"\1", value))
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
