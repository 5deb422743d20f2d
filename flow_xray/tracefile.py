"""Read a saved trace of either kind: flow-xray JSON or OTLP JSON lines."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from flow_xray.errors import TraceFileError
from flow_xray.model import TraceResult
from flow_xray.otlp_json import read_otlp_json
from flow_xray.tree import build_result


def load_trace(path: str | os.PathLike[str]) -> TraceResult:
    """Read flow-xray JSON or OTLP JSON lines, telling them apart by content.

    Raises:
        TraceFileError: the file is neither.
    """
    try:
        text = Path(path).read_text(encoding="utf-8-sig")  # tolerate a BOM
    except (OSError, UnicodeDecodeError) as exc:
        raise TraceFileError(f"cannot read {os.fspath(path)}: {exc}") from None
    if not text.strip():
        raise TraceFileError(f"{path} is empty, not a trace")
    whole = True
    try:
        data: Any = json.loads(text)
    except ValueError:
        whole = False
        # Several lines of JSON: OTLP JSON lines, if the first line says so.
        first = text.strip().splitlines()[0]
        try:
            data = json.loads(first)
        except ValueError as exc:
            raise TraceFileError(f"{path} is not a trace: not JSON ({exc})") from None
        if not (isinstance(data, Mapping) and "resourceSpans" in data):
            raise TraceFileError(
                f"{path} is not a trace: not flow-xray JSON or OTLP JSON lines"
            ) from None
    if isinstance(data, Mapping) and "resourceSpans" in data:
        # One (possibly pretty-printed) object, or one object per line.
        return build_result(read_otlp_json([json.dumps(data)] if whole else path))
    if isinstance(data, Mapping) and "nodes" in data:
        return TraceResult.from_dict(data)
    raise TraceFileError(
        f"{path} is not a trace: JSON without 'nodes' (flow-xray) or 'resourceSpans' (OTLP)"
    )
