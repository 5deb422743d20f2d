"""Run `scenarios/llm_app.py` in a subprocess under each way of capturing, and read the trace back.

Modes:
- ``capture``: the app wraps its agent in ``trace.capture()`` and saves the result;
- ``run``: ``flow-xray run --json`` with no export option;
- ``run-otlp-json``: the same plus ``--otlp-json`` (a global provider is installed);
- ``run-otlp``: the same plus ``--otlp-endpoint`` (exporting to ``endpoint``).

Each run happens in a fresh interpreter, so instrumentors and global providers
never leak from one combination into another.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
APP = HERE / "scenarios" / "llm_app.py"
ROOT = HERE.parent.parent
MODES = ("capture", "run", "run-otlp-json")


@dataclass(frozen=True)
class AppRun:
    """What one run of the app produced."""

    trace: dict[str, Any]
    stderr: str
    user_spans: list[str]
    otlp_json: Path | None

    @property
    def totals(self) -> dict[str, Any]:
        """The JSON envelope's totals."""
        return dict(self.trace["totals"])

    def nodes(self) -> list[dict[str, Any]]:
        """Every node, pre-order."""
        out: list[dict[str, Any]] = []
        stack = list(reversed(self.trace["nodes"]))
        while stack:
            node = stack.pop()
            out.append(node)
            stack.extend(reversed(node.get("children") or []))
        return out

    def names(self) -> list[str]:
        """Node names, pre-order."""
        return [node["name"] for node in self.nodes()]


def run_app(
    url: str,
    tmp_path: Path,
    mode: str,
    *,
    instrument: str = "",
    shapes: str = "chat,fail",
    provider: str = "",
    endpoint: str | None = None,
    extra_env: dict[str, str] | None = None,
    launcher: list[str] | None = None,
    outer: list[str] | None = None,
) -> AppRun:
    """Run the app once in ``mode`` and return its trace (flow-xray JSON) and stderr.

    ``launcher`` goes between ``flow-xray run``'s options and the app; ``outer`` runs
    the whole command (``opentelemetry-instrument``).
    """
    out = tmp_path / f"trace-{mode}.json"
    otlp_json = tmp_path / f"spans-{mode}.jsonl" if mode == "run-otlp-json" else None
    user_export = tmp_path / f"user-{mode}.txt"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "FX_"))}
    env.update(
        FAKE_LLM_URL=url,
        FX_INSTRUMENT=instrument,
        FX_SHAPES=shapes,
        FX_PROVIDER=provider,
        FX_USER_EXPORT=str(user_export) if provider else "",
        PYTHONPATH=os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]),
        OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT="SPAN_ONLY",
        OTEL_SEMCONV_STABILITY_OPT_IN="gen_ai_latest_experimental",
    )
    env.update(extra_env or {})
    if mode == "capture":
        env["FX_CAPTURE"] = str(out)
        command = [sys.executable, str(APP)]
    else:
        command = [sys.executable, "-m", "flow_xray", "run", "--quiet", "--json", str(out)]
        command += ["--html", str(tmp_path / f"trace-{mode}.html")]
        if otlp_json is not None:
            command += ["--otlp-json", str(otlp_json)]
        if mode == "run-otlp":
            assert endpoint is not None
            command += ["--otlp-endpoint", endpoint]
        command += [*(launcher or []), str(APP)]
    command = [*(outer or []), *command]
    done = subprocess.run(
        command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )
    if done.returncode != 0:
        raise AssertionError(f"{mode} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    trace = json.loads(out.read_text(encoding="utf-8"))
    users = user_export.read_text(encoding="utf-8").split() if user_export.exists() else []
    return AppRun(trace, done.stderr, users, otlp_json)
