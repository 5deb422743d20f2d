"""What every format module is handed: a trace file read once, and the shape of an entry.

A format module (`flow_xray.formats.otlp_json`, ...) offers a test on a
`Parsed` file and a reader of it; `flow_xray.formats.registry` lists them as
`TraceFormat` entries. No OpenTelemetry here.
"""

from __future__ import annotations

import reprlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Final

from flow_xray.tree.model import TraceResult

#: The latest time a span can have: OTLP times are unsigned 64-bit nanoseconds since 1970
#: (about the year 2554). A time outside 0 to this is bad input, not a trace.
MAX_UNIX_NANOS: Final = 2**64 - 1
#: The longest trace, span or parent id a file may give (OTLP's are 32 and 16 hex digits).
MAX_ID_CHARS: Final = 128

_QUOTE: Final = reprlib.Repr()
_QUOTE.maxstring = _QUOTE.maxother = 40
_QUOTE.maxlist = _QUOTE.maxdict = _QUOTE.maxtuple = 3
_QUOTE.maxlevel = 2


@dataclass(frozen=True)
class Parsed:
    """A trace file read once: its first JSON document, whether it is the whole file, and all.

    ``documents`` gives every top-level JSON value of the file in order: one per
    line (JSON lines), pretty-printed objects one after another (``jq .``
    output, ``ConsoleSpanExporter``), or the single document. It may parse them
    as they are iterated (`flow_xray.formats.registry.Documents`): a reader takes
    what it needs from each and keeps none.
    """

    first: Any
    whole: bool
    documents: Iterable[Any] = ()


@dataclass(frozen=True)
class TraceFormat:
    """One file format: a name and a hint for messages, a test on the parsed file, a reader."""

    name: str
    hint: str
    recognises: Callable[[Parsed], bool]
    read: Callable[[Parsed], TraceResult]


def shown(value: Any, limit: int = 40) -> str:
    """``value`` from a file as an error message quotes it: about ``limit`` characters at most.

    A long string shows its start and its length, a huge integer its number
    of digits; nothing is converted whole (a 10 MB id costs nothing here).

    Example:
        >>> shown("ab" * 1000, 6)
        "'ababab'… (2,000 characters)"
    """
    if isinstance(value, str):
        if len(value) <= limit:
            return repr(value)
        return f"{value[:limit]!r}… ({len(value):,} characters)"
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 3 * limit:
        return f"an integer of {len(str(abs(value))):,} digits"
    try:
        return _QUOTE.repr(value)[: 2 * limit]
    except Exception:  # a value from JSON has a repr; anything else is shown by its type
        return f"a {type(value).__name__}"


def time_problem(nanos: int, what: str, given: Any) -> str | None:
    """Why ``nanos`` (from the file's ``given``) is not a span time, or None when it is one.

    A span time is 0 to `MAX_UNIX_NANOS` nanoseconds since 1970; anything else
    (before 1970, past the 64-bit range, a 401-digit number) is bad input.
    """
    if 0 <= nanos <= MAX_UNIX_NANOS:
        return None
    when = "before 1970" if nanos < 0 else "past the 64-bit nanosecond range (the year 2554)"
    return f"{what} {shown(given)} is {when}"


def id_problem(value: Any, what: str) -> str | None:
    """Why ``value`` is not an id a trace can have (a string of at most `MAX_ID_CHARS`)."""
    if isinstance(value, str) and len(value) <= MAX_ID_CHARS:
        return None
    if isinstance(value, str):
        return f"{what} {shown(value)} is not an id (longer than {MAX_ID_CHARS} characters)"
    return f"{what} must be a string, got {shown(value)}"
