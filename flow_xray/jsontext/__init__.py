"""JSON text at any nesting depth: the standard C codec when it can, an iterative one when not.

Python's ``json`` recurses once per nesting level: past the recursion limit it
raises `RecursionError`, and with a raised limit (``sys.setrecursionlimit``,
which a deeply recursive traced program may have done) Python 3.10 and 3.11
overflow the C stack and crash instead. A trace is deep when calls are (a
100,000-call recursion is a 100,000-level ``children`` nesting), so every
trace file flow-xray reads or writes goes through here.

The fast path is plain ``json``, used only while the recursion limit is one at
which it can fail but not crash (`SAFE_RECURSION_LIMIT`). When it fails, or
cannot be trusted, the value is split: containers at most `SHALLOW` levels
deep go to the C codec whole, the deep spine around them is walked here with
an explicit stack. The text is the same either way (``json.dumps``' default
separators, ``ensure_ascii=False``). Stdlib only.

This module holds the public calls and picks the path; the iterative writer is
`flow_xray.jsontext.encode`, the iterative readers `flow_xray.jsontext.decode`.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any, Final

from flow_xray.jsontext.decode import (
    DECODER,
    WHITESPACE,
    Irregular,
    decode_deep,
    decode_spine,
    spine_of,
)
from flow_xray.jsontext.encode import SHALLOW, Writer
from flow_xray.jsontext.text import JsonText, gc_paused

__all__ = [
    "SAFE_RECURSION_LIMIT",
    "SHALLOW",
    "JsonText",
    "dumps",
    "gc_paused",
    "loads",
    "raw_decode",
]

# Up to this recursion limit a too-deep value makes the C codec raise, not crash.
SAFE_RECURSION_LIMIT: Final = 10_000


def _fast() -> bool:
    return sys.getrecursionlimit() <= SAFE_RECURSION_LIMIT


def dumps(
    value: Any,
    *,
    indent: int | None = None,
    allow_nan: bool = True,
    default: Callable[[Any], Any] | None = None,
) -> str:
    """``json.dumps(value, ensure_ascii=False, ...)`` for a value of any nesting depth.

    Raises:
        ValueError: a circular reference, or NaN/inf with ``allow_nan=False``.
        TypeError: a value or key JSON cannot hold and ``default`` does not turn into one.
    """
    if _fast():
        try:
            return json.dumps(
                value, ensure_ascii=False, indent=indent, allow_nan=allow_nan, default=default
            )
        except RecursionError:
            pass
    with gc_paused():
        return Writer(indent, allow_nan, default).write(value)


def loads(text: str) -> Any:
    """``json.loads(text)`` for a document of any nesting depth.

    Raises:
        json.JSONDecodeError: the text is not one JSON document.
    """
    value, end = raw_decode(text, WHITESPACE.match(text, 0).end())  # type: ignore[union-attr]
    end = WHITESPACE.match(text, end).end()  # type: ignore[union-attr]
    if end != len(text):
        raise json.JSONDecodeError("Extra data", text, end)
    return value


def raw_decode(text: str, index: int = 0) -> tuple[Any, int]:
    """``json.JSONDecoder().raw_decode(text, index)`` for a value of any nesting depth.

    Returns the value and the index just past it.

    Raises:
        json.JSONDecodeError: no JSON value starts at ``index``.
    """
    if _fast():
        try:
            return DECODER.raw_decode(text, index)
        except RecursionError:
            pass
    with gc_paused():
        spine = spine_of(text, index)
        try:
            return decode_spine(text, index, spine)
        except (Irregular, ValueError, KeyError):
            # Not the regular shape the quick way expects (or not JSON at all): the
            # member-by-member parse gives the value, or the exact place of the error.
            return decode_deep(text, index, spine.deep)
