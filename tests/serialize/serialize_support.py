"""Helpers shared by the `flow_xray.serialize` tests: default limits, a strict JSON parser."""

from __future__ import annotations

import json
from typing import Any

from flow_xray.serialize import Limits

DEFAULT = Limits()


def strict_loads(text: str) -> Any:
    """Parse JSON as a standard parser would: NaN and Infinity are errors."""

    def refuse(name: str) -> Any:
        raise ValueError(f"non-standard JSON constant {name}")

    return json.loads(text, parse_constant=refuse)


def utf8_size(text: str) -> int:
    return len(text.encode("utf-8"))
