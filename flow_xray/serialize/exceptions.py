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
import types
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Final

from flow_xray.interrupts import let_signals_through
from flow_xray.serialize.cut import CUT
from flow_xray.serialize.limits import Limits
from flow_xray.serialize.reprs import MAX_INT_BITS, Reprs, repr_once, safe_repr
from flow_xray.serialize.secrets import scrub_text
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


# One formatted frame: (file, line, function) for folding recursion, and its text.
_Frame = tuple[tuple[str, "int | None", str], str]


@dataclass(frozen=True, slots=True)
class FrameText:
    """The user frames of a traceback from one entry down, each formatted (and scrubbed) once.

    ``head`` is the ``id`` of the traceback entry they start at; ``frames``
    the innermost `_MAX_FRAMES` user frames, innermost last; ``text`` them
    as Python prints them (recursion folded); ``site`` the raising frame.
    """

    head: int
    frames: tuple[_Frame, ...]
    text: str
    site: RaiseSite | None


# Given a traceback entry below the first, the `FrameText` already made from it, or None.
Below = Callable[[TracebackType], "FrameText | None"]


def frame_text(
    tb: TracebackType | None, limits: Limits | None = None, below: Below | None = None
) -> FrameText:
    """The `FrameText` of ``tb``: only the entries above the first one `below` knows are read.

    An exception leaving N traced calls is recorded N times; each time its
    traceback has grown by the frames between two of those calls. `below`
    finds the text the inner call made, so each frame is formatted once and
    the whole error path costs O(N), not O(N²). Credentials are scrubbed from
    each frame's text under `limits`.
    """
    new: list[TracebackType] = []
    inner: FrameText | None = None
    current = tb
    while current is not None:
        if below is not None and new:
            inner = below(current)
            if inner is not None:
                break
        new.append(current)
        current = current.tb_next
    kept = inner.frames if inner is not None else ()
    room = _MAX_FRAMES - len(kept)
    if room <= 0 and inner is not None:
        return FrameText(id(tb), kept, inner.text, inner.site)
    users = [t for t in new if not _own_frame(t.tb_frame.f_code.co_filename)][-room:]
    fresh = _formatted(users, limits)
    frames = (*fresh, *kept)
    site = inner.site if inner is not None and inner.site is not None else _site(users)
    return FrameText(id(tb), frames, _folded(frames), site)


def _formatted(entries: list[TracebackType], limits: Limits | None) -> list[_Frame]:
    """Each entry's frame as ``traceback`` prints it (source line and carets included)."""
    out: list[_Frame] = []
    for entry in entries:
        single = types.TracebackType(None, entry.tb_frame, entry.tb_lasti, entry.tb_lineno)
        for summary in traceback.extract_tb(single):
            text = "".join(traceback.StackSummary.from_list([summary]).format())
            if limits is not None and limits.redact:
                text = scrub_text(text, limits)
            out.append(((summary.filename, summary.lineno, summary.name), text))
    return out


def _site(entries: list[TracebackType]) -> RaiseSite | None:
    if not entries:
        return None
    last = entries[-1]
    code = last.tb_frame.f_code
    return RaiseSite(source_path(code.co_filename), last.tb_lineno or 0, code.co_name)


_RECURSIVE_CUTOFF: Final = 3  # as `traceback.StackSummary.format` folds recursion


def _folded(frames: tuple[_Frame, ...]) -> str:
    """The frames' text, a line repeated more than 3 times in a row folded as Python does."""
    lines: list[str] = []
    last: tuple[str, int | None, str] | None = None
    count = 0
    for key, text in frames:
        if key != last:
            _repeated(lines, count)
            last, count = key, 0
        count += 1
        if count <= _RECURSIVE_CUTOFF:
            lines.append(text)
    _repeated(lines, count)
    return "".join(lines)


def _repeated(lines: list[str], count: int) -> None:
    if count > _RECURSIVE_CUTOFF:
        more = count - _RECURSIVE_CUTOFF
        lines.append(f"  [Previous line repeated {more} more time{'s' if more > 1 else ''}]\n")


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
    if kind.__str__ in _BOUNDED_STR:  # a position and a reason, never the input itself
        return _head(str(exc), max_chars)
    if kind.__str__ is not BaseException.__str__:
        is_os = issubclass(kind, OSError)
        shown = (*args, exc.filename, exc.filename2) if is_os else args  # type: ignore[attr-defined]
        if not cheap_repr(shown):  # OSError's str shows its file names too
            return _from_args(exc, args, limits, max_chars, reprs)
        try:
            return _head(str(exc), max_chars)
        except BaseException:  # recording contains everything
            let_signals_through()
            return repr_once(exc, max_chars, reprs)
    if not args:
        return ""
    if all(_plain_arg(a) for a in args) and cheap_repr(args):
        return _head(str(exc), max_chars)  # exactly str(exc): built-in values, small
    if len(args) == 1:
        arg = args[0]
        if type(arg) is str:
            return _head(arg, max_chars)
        converted = to_jsonable(arg, limits, reprs)
        return converted if type(converted) is str else safe_repr(converted, max_chars)
    return safe_repr(tuple(to_jsonable(a, limits, reprs) for a in args[:20]), max_chars)


def _plain_arg(arg: object) -> bool:
    """A value whose str and repr are built-in and printable (ints up to 1024 bits)."""
    kind = type(arg)
    return kind in _PLAIN_ARGS and (kind is not int or int.bit_length(arg) <= MAX_INT_BITS)  # type: ignore[arg-type]


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
    error: Any = exc
    if issubclass(type(exc), OSError) and error.errno is not None and type(error.strerror) is str:
        text = f"[Errno {error.errno}] {_head(error.strerror, max_chars)}"
        if error.filename is not None:
            text += ": " + bounded_repr(error.filename, limits, max_chars, reprs)
            if error.filename2 is not None:
                text += " -> " + bounded_repr(error.filename2, limits, max_chars, reprs)
        return text
    if len(args) == 1:
        arg = args[0]
        return (
            _head(arg, max_chars)
            if type(arg) is str
            else bounded_repr(arg, limits, max_chars, reprs)
        )
    shown = [bounded_repr(a, limits, max_chars, reprs) for a in args[:20]]
    if len(args) > 20:
        shown.append(f"{CUT} +{len(args) - 20} more items")
    return "(" + ", ".join(shown) + ")"


# Argument types whose str and repr are the built-in ones (no user code runs).
_PLAIN_ARGS: Final = frozenset({str, int, float, bool, bytes, type(None)})
# Built-in ``__str__`` methods that show where and why, not the data: called as they are.
_BOUNDED_STR: Final = frozenset(
    {UnicodeDecodeError.__str__, UnicodeEncodeError.__str__, UnicodeTranslateError.__str__}
)


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
    if issubclass(type(exc), SyntaxError):
        try:
            return list(traceback.format_exception_only(type(exc), exc))
        except BaseException:  # recording contains everything
            let_signals_through()
            pass
    if message is None:
        message = exception_message(exc, limits, max_chars, reprs)
    lines = [f"{qualified_type(exc)}: {message}\n" if message else f"{qualified_type(exc)}\n"]
    notes: Any = getattr(exc, "__notes__", None)
    if type(notes) in (list, tuple):
        lines += [f"{_head(n, max_chars)}\n" for n in notes[:20] if type(n) is str]
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
    Credentials are scrubbed under `limits`.
    """
    return exception_text(exc, limits, max_chars, reprs, message)[0]


def exception_text(
    exc: BaseException,
    limits: Limits,
    max_chars: int = 2048,
    reprs: Reprs | None = None,
    message: str | None = None,
    below: Below | None = None,
) -> tuple[str, FrameText]:
    """`format_exception`'s text and ``exc``'s own `FrameText` (its raise site included).

    `below` lets the frames some inner call already formatted be reused (see
    `frame_text`), for ``exc`` and for the exceptions of its chain.
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
    own = FrameText(0, (), "", None)
    for item, following in reversed(chain):
        frames = frame_text(item.__traceback__, limits, below)
        if item is exc:
            own = frames
        if frames.frames:
            lines += ("Traceback (most recent call last):\n", frames.text)
        last = _last_line(item, limits, max_chars, reprs, message if item is exc else None)
        lines += [scrub_text(line, limits) if limits.redact else line for line in last]
        if _GROUP is not None and issubclass(type(item), _GROUP):
            group: Any = item
            for i, sub in enumerate(group.exceptions[:10], 1):
                lines.append(f"  +---------------- {i} ----------------\n")
                text = format_exception(sub, limits, max_chars, reprs)
                lines += [f"  | {line}\n" for line in text.splitlines()]
        if following:
            lines.append(following)
    return "".join(lines), own


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
    "Below",
    "FrameText",
    "RaiseSite",
    "exception_message",
    "exception_text",
    "format_exception",
    "frame_text",
    "qualified_type",
    "raise_site",
    "source_path",
]
