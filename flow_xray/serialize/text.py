"""Text that can always be written: lone surrogates become visible escapes.

Python strings may hold lone surrogates (``os.fsdecode`` gives them for file
names that are not UTF-8, ``"\\udc80"``); UTF-8 cannot encode them, so one in
a trace would make writing the HTML, the JSON or OTLP fail. `writable`
replaces each by its visible escape (the six characters ``\\udc80``), which
is what the viewer and every backend then show. The value path
(`flow_xray.serialize.encode`) applies it to everything a traced program
passes; the writers (`TraceResult.save` / ``to_html``, the OTLP exporters)
apply it to what foreign spans bring. No OpenTelemetry here.
"""

from __future__ import annotations

import re
from typing import Any, Final

_SURROGATE: Final = re.compile("[\ud800-\udfff]")


def has_unwritable(text: str) -> bool:
    """Whether ``text`` holds a lone surrogate (a character UTF-8 cannot encode)."""
    return not text.isascii() and _SURROGATE.search(text) is not None


def writable(text: str) -> str:
    """``text`` with lone surrogates replaced by their ``\\udcXX`` escapes; itself if it has none.

    Example:
        >>> writable("report-\\udc80.csv")
        'report-\\\\udc80.csv'
    """
    if text.isascii() or _SURROGATE.search(text) is None:
        return text
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def writable_data(value: Any) -> Any:
    """A copy of JSON-like data (dicts, lists, tuples, str) with every string made `writable`.

    Keys too. Walks iteratively, so any nesting depth works; other values are
    kept as they are. Meant for the rare document that `has_unwritable` text.
    """
    if isinstance(value, str):
        return writable(value)
    if not isinstance(value, (dict, list, tuple)):
        return value
    root: Any = {} if isinstance(value, dict) else []
    stack: list[tuple[Any, Any]] = [(value, root)]
    while stack:
        source, target = stack.pop()
        pairs = source.items() if isinstance(source, dict) else enumerate(source)
        for key, item in pairs:
            kept: Any = item
            if isinstance(item, (dict, list, tuple)):
                kept = {} if isinstance(item, dict) else []
                stack.append((item, kept))
            elif isinstance(item, str):
                kept = writable(item)
            if isinstance(target, dict):
                target[writable(key) if isinstance(key, str) else key] = kept
            else:
                target.append(kept)
    return root


__all__ = ["has_unwritable", "writable", "writable_data"]
