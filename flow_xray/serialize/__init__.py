"""Values to span attributes: JSON where possible, capped, redacted, never raising.

No OpenTelemetry here. `encode` is the one path every value takes to become an
attribute: plain values by the fast paths of `fast`, anything else by the
bounded walk of `walk`, both cut to size with the markers of `cut`; `reprs`
runs a user's ``__repr__`` safely, once per call; `shapes` reads odd values
(records, buffers, arrays, mocks) without materialising them; `exceptions`
bounds exception messages and tracebacks; `limits` holds the caps; `secrets`
decides which names are redacted and which credentials are scrubbed from
text; `text` makes any string writable (lone surrogates escaped).
``set_limits`` / ``get_limits`` / ``Limits`` / ``set_redaction`` are also
importable from ``flow_xray``.
"""

from __future__ import annotations

from flow_xray.serialize.cut import TRUNCATION_MARKER
from flow_xray.serialize.encode import (
    encode_attribute,
    encode_inputs,
    encode_output,
    encode_text,
)
from flow_xray.serialize.limits import Limits, get_limits, set_limits, set_redaction
from flow_xray.serialize.reprs import safe_repr
from flow_xray.serialize.secrets import REDACTED, VALUE_RULES, is_secret_name, scrub_text
from flow_xray.serialize.text import writable
from flow_xray.serialize.walk import CYCLE, to_jsonable

__all__ = [
    "CYCLE",
    "REDACTED",
    "TRUNCATION_MARKER",
    "VALUE_RULES",
    "Limits",
    "encode_attribute",
    "encode_inputs",
    "encode_output",
    "encode_text",
    "get_limits",
    "is_secret_name",
    "safe_repr",
    "scrub_text",
    "set_limits",
    "set_redaction",
    "to_jsonable",
    "writable",
]
