"""An exception as stored on a span: bounded message, traceback without flow-xray's frames.

``str(exc)`` of an exception carrying 50 MB of bytes builds a 200 MB string,
and ``traceback.format_exception`` builds it again; here the message of an
exception whose ``__str__`` is the built-in one (or ``KeyError``'s) is made
from its args with the bounded value walk instead, a class with its own
``__str__`` has it called only when its args are small, and the traceback is
formatted frame by frame. Frames of flow-xray's own wrappers (the ``@trace`` wrapper, stream
watchers, ``trace.run``) are left out, so the stored text shows the user's
frames only; the last frame is where the exception was raised, and
`raise_site` names it. No OpenTelemetry here.
"""

from __future__ import annotations

import builtins
import os
import traceback
from dataclasses import dataclass
from types import TracebackType
from typing import Final

from flow_xray.serialize.cut import CUT
from flow_xray.serialize.limits import Limits
from flow_xray.serialize.reprs import Reprs, repr_once, safe_repr
from flow_xray.serialize.shapes import cheap_repr, exception_args
from flow_xray.serialize.walk import bounded_repr, to_jsonable

_PACKAGE: Final = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_EXAMPLES: Final = os.path.join(_PACKAGE, "examples") + os.sep
_MAX_CHAIN: Final = 16
_MAX_FRAMES: Final = 200
_GROUP: Final = getattr(builtins, "BaseExceptionGroup", None)  # Python 3.11+


@dataclass(frozen=True, slots=True)
class RaiseSite:
    """Where an exception was raised: the last frame of its traceback outside flow-xray."""

    path: str
    line: int
    function: str


def source_path(filename: str) -> str:
    """The file path relative to the working directory when the file is under it.

    Relative paths read better in the viewer, paste into an editor opened
    there, and do not leak home folders into traces that get shared; files
    elsewhere keep their absolute path.
    """
    try:
        relative = os.path.relpath(filename)
    except ValueError:  # another drive on Windows
        return filename
    return filename if relative.startswith(os.pardir) else relative


def _own_frame(filename: str) -> bool:
    """A frame of flow-xray itself (the bundled examples are user code)."""
    return filename.startswith(_PACKAGE) and not filename.startswith(_EXAMPLES)


def user_frames(tb: TracebackType | None) -> traceback.StackSummary:
    """The frames of ``tb`` without flow-xray's own, at most the last `_MAX_FRAMES`."""
    frames = [f for f in traceback.extract_tb(tb) if not _own_frame(f.filename)]
    return traceback.StackSummary.from_list(frames[-_MAX_FRAMES:])


def exception_message(
    exc: BaseException, limits: Limits, max_chars: int, reprs: Reprs | None = None
) -> str:
    """``str(exc)``, bounded whatever the exception carries; never materialises big args.

    A class keeping the built-in ``__str__`` has its args walked under `limits`
    (reprs from the call's cache `reprs`); ``KeyError`` shows its key's repr
    the same way. A class with its own ``__str__`` (``OSError``, user classes)
    has it called only when its args are small; with a big arg (long text or
    bytes, a huge int, a long container) the message is built from bounded
    reprs of the args instead, in the format the class's own would use.
    """
    kind = type(exc)
    args = exception_args(exc)
    if kind.__str__ is KeyError.__str__ and len(args) == 1:
        return bounded_repr(args[0], limits, max_chars, reprs)
    if kind.__str__ is not BaseException.__str__:
        shown = (*args, exc.filename, exc.filename2) if isinstance(exc, OSError) else args
        if not cheap_repr(shown):  # OSError's str shows its file names too
            return _from_args(exc, args, limits, max_chars, reprs)
        try:
            return _head(str(exc), max_chars)
        except Exception:
            return repr_once(exc, max_chars, reprs)
    if not args:
        return ""
    if len(args) == 1:
        arg = args[0]
        if isinstance(arg, str):
            return _head(arg, max_chars)
        converted = to_jsonable(arg, limits, reprs)
        return converted if isinstance(converted, str) else safe_repr(converted, max_chars)
    return safe_repr(tuple(to_jsonable(a, limits, reprs) for a in args[:20]), max_chars)


def _from_args(
    exc: BaseException,
    args: tuple[object, ...],
    limits: Limits,
    max_chars: int,
    reprs: Reprs | None,
) -> str:
    """The message of an exception with big args, from bounded reprs of them.

    ``OSError`` keeps its ``[Errno N] strerror: 'filename'`` form; others show
    a single arg as ``str`` would (text as is, the rest by repr) and several
    as a tuple.
    """
    if isinstance(exc, OSError) and exc.errno is not None and isinstance(exc.strerror, str):
        text = f"[Errno {exc.errno}] {_head(exc.strerror, max_chars)}"
        if exc.filename is not None:
            text += ": " + bounded_repr(exc.filename, limits, max_chars, reprs)
            if exc.filename2 is not None:
                text += " -> " + bounded_repr(exc.filename2, limits, max_chars, reprs)
        return text
    if len(args) == 1:
        arg = args[0]
        return (
            _head(arg, max_chars)
            if isinstance(arg, str)
            else bounded_repr(arg, limits, max_chars, reprs)
        )
    shown = [bounded_repr(a, limits, max_chars, reprs) for a in args[:20]]
    if len(args) > 20:
        shown.append(f"{CUT} +{len(args) - 20} more items")
    return "(" + ", ".join(shown) + ")"


def _head(text: str, max_chars: int) -> str:
    """``text`` cut near ``max_chars``; the caller's `encode_text` marks the cut and scrubs."""
    return text if len(text) <= max_chars else text[: max_chars + 256]


def qualified_type(exc: BaseException) -> str:
    """``module.Qualname`` of the exception's type (just the name for builtins)."""
    kind = type(exc)
    module = kind.__module__
    return kind.__qualname__ if module == "builtins" else f"{module}.{kind.__qualname__}"


def _last_line(
    exc: BaseException, limits: Limits, max_chars: int, reprs: Reprs | None, message: str | None
) -> list[str]:
    if isinstance(exc, SyntaxError):
        try:
            return list(traceback.format_exception_only(type(exc), exc))
        except Exception:
            pass
    if message is None:
        message = exception_message(exc, limits, max_chars, reprs)
    lines = [f"{qualified_type(exc)}: {message}\n" if message else f"{qualified_type(exc)}\n"]
    notes = getattr(exc, "__notes__", None)
    if isinstance(notes, (list, tuple)):
        lines += [f"{_head(n, max_chars)}\n" for n in notes[:20] if isinstance(n, str)]
    return lines


def format_exception(
    exc: BaseException,
    limits: Limits,
    max_chars: int = 2048,
    reprs: Reprs | None = None,
    message: str | None = None,
) -> str:
    """The traceback text of ``exc`` (and its causes), as Python prints it, minus flow-xray frames.

    Each message is bounded by ``max_chars``; the chain is followed up to 16
    deep. `reprs` is the call's repr cache; `message` is ``exc``'s own message
    when the caller already has it from `exception_message` (not computed twice).
    """
    chain: list[tuple[BaseException, str]] = []
    seen: set[int] = set()
    current: BaseException | None = exc
    link = ""
    while current is not None and id(current) not in seen and len(chain) < _MAX_CHAIN:
        seen.add(id(current))
        chain.append((current, link))
        if current.__cause__ is not None:
            current, link = current.__cause__, _CAUSE
        elif current.__context__ is not None and not current.__suppress_context__:
            current, link = current.__context__, _CONTEXT
        else:
            current = None
    lines: list[str] = []
    for item, following in reversed(chain):
        frames = user_frames(item.__traceback__)
        if frames:
            lines.append("Traceback (most recent call last):\n")
            lines += frames.format()
        lines += _last_line(item, limits, max_chars, reprs, message if item is exc else None)
        if _GROUP is not None and isinstance(item, _GROUP):
            for i, sub in enumerate(item.exceptions[:10], 1):
                lines.append(f"  +---------------- {i} ----------------\n")
                text = format_exception(sub, limits, max_chars, reprs)
                lines += [f"  | {line}\n" for line in text.splitlines()]
        if following:
            lines.append(following)
    return "".join(lines)


_CAUSE: Final = "\nThe above exception was the direct cause of the following exception:\n\n"
_CONTEXT: Final = "\nDuring handling of the above exception, another exception occurred:\n\n"


def raise_site(exc: BaseException) -> RaiseSite | None:
    """The frame that raised ``exc``: the last of its traceback outside flow-xray, or None."""
    frames = user_frames(exc.__traceback__)
    if not frames:
        return None
    last = frames[-1]
    return RaiseSite(source_path(last.filename), last.lineno or 0, last.name)


__all__ = [
    "RaiseSite",
    "exception_message",
    "format_exception",
    "qualified_type",
    "raise_site",
    "source_path",
]
