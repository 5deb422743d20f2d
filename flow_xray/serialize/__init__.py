"""Values to span attributes: JSON where possible, capped, redacted, never raising.

No OpenTelemetry here. `encode` is the one path every value takes to become an
attribute; `limits` holds the caps; `secrets` decides which names are redacted.
``set_limits`` / ``get_limits`` / ``Limits`` are also importable from ``flow_xray``.
"""

from __future__ import annotations

from flow_xray.serialize.encode import (
    CYCLE,
    TRUNCATION_MARKER,
    encode_attribute,
    encode_inputs,
    encode_output,
    encode_text,
    safe_repr,
    to_jsonable,
)
from flow_xray.serialize.limits import Limits, get_limits, set_limits
from flow_xray.serialize.secrets import REDACTED, is_secret_name

__all__ = [
    "CYCLE",
    "REDACTED",
    "TRUNCATION_MARKER",
    "Limits",
    "encode_attribute",
    "encode_inputs",
    "encode_output",
    "encode_text",
    "get_limits",
    "is_secret_name",
    "safe_repr",
    "set_limits",
    "to_jsonable",
]
