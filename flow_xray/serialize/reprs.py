"""Reprs that cannot fail, stay short and deterministic, and run once per traced call.

An object's ``__repr__`` is user code: it may raise, return a non-str, or
print a memory address. `safe_repr` contains all of that; `repr_once` takes
the text from the call's `Reprs` cache when the inputs, the output or the
error message already needed it. No OpenTelemetry here.
"""

from __future__ import annotations

import re
from typing import Any, Final

from flow_xray.interrupts import let_signals_through
from flow_xray.serialize.cut import CUT
from flow_xray.serialize.text import writable

# Ints beyond this many bits become a summary string: CPython refuses to print
# ints over 4300 digits, and JSON readers lose precision long before that.
MAX_INT_BITS: Final = 1024
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")

# Reprs computed during one traced call, by object id: inputs, output and the
# error message share it, so each object's ``__repr__`` runs once per call. The
# object is kept beside its text so that its id cannot be reused meanwhile.
Reprs = dict[int, tuple[Any, str]]


def type_name(value: Any) -> str:
    """``type(value).__name__``, or ``"object"`` when even that fails; never raises."""
    try:
        return str(type(value).__name__)
    except BaseException:  # recording contains everything
        let_signals_through()
        return "object"


def safe_repr(value: Any, max_chars: int) -> str:
    """Return ``repr(value)`` cut to `max_chars` (plus marker); never raises.

    Memory addresses (`` at 0x7f…``) are dropped so output is deterministic.
    A failing ``__repr__`` gives ``"<TypeName object (repr failed: ExcType)>"``;
    an int too big to print (over 1024 bits) ``"<int bits=N>"``.
    """
    if type(value) is int and int.bit_length(value) > MAX_INT_BITS:
        return f"<int bits={int.bit_length(value)}>"
    try:
        text = repr(value)
    except BaseException as exc:  # recording contains everything
        let_signals_through()
        text = f"<{type_name(value)} object (repr failed: {type_name(exc)})>"
    text = writable(_ADDRESS.sub("", text[: max_chars + 64]))
    if len(text) > max_chars:
        text = text[: max(max_chars, 0)] + CUT
    return text


def repr_once(value: Any, max_chars: int, reprs: Reprs | None) -> str:
    """``safe_repr(value, max_chars)``, taken from `reprs` when this call already ran it.

    The cached text (cut at the cap of whoever ran it first) is cut again to
    `max_chars` when shorter is asked for. Never raises.
    """
    if reprs is None:
        return safe_repr(value, max_chars)
    key = id(value)
    found = reprs.get(key)
    if found is None or found[0] is not value:
        text = safe_repr(value, max_chars)
        reprs[key] = (value, text)
        return text
    text = found[1]
    return text if len(text) <= max_chars else text[:max_chars] + CUT


__all__ = ["MAX_INT_BITS", "Reprs", "repr_once", "safe_repr", "type_name"]
