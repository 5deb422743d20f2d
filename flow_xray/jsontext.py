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
"""

from __future__ import annotations

import gc
import json
import json.decoder
import json.scanner
import re
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Final

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
# Containers nested at most this deep are handed to the C codec whole.
SHALLOW: Final = 100

_DECODER: Final = json.JSONDecoder()
_SCAN: Final[Any] = json.scanner.make_scanner(_DECODER)  # type: ignore[arg-type]  # typeshed types it as a class
_SCANSTRING: Final[Any] = json.decoder.scanstring  # type: ignore[attr-defined]  # untyped in typeshed
_WHITESPACE: Final = re.compile(r"[ \t\n\r]*")
# The next bracket, or string that holds a bracket or an escape (skipped whole), after
# plain text and plain strings: what the depth pre-pass looks at.
_STRUCTURE: Final = re.compile(
    r'(?:[^"\[\]{}]+|"[^"\\\[\]{}]*")*([\[\]{}]|"[^"\\]*(?:\\.[^"\\]*)*")', re.S
)


class JsonText(str):
    """A value already written as JSON text (what flow-xray stored on a span).

    Producers hand it over instead of the parsed value when the consumer would
    only write it as JSON again (the viewer page's packed details): the text
    goes in as it is. It is a `str`, so anything else reads it as text.
    """

    __slots__ = ()


def _fast() -> bool:
    return sys.getrecursionlimit() <= SAFE_RECURSION_LIMIT


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic GC in a block that allocates many objects and no cycles.

    Each collection scans every tracked object, so a block growing a
    million-call structure is about 2x faster without them (codec slow paths,
    `TraceResult.to_html`)."""
    paused = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if paused:
            gc.enable()


# --- writing ---------------------------------------------------------------------


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
        return _Writer(indent, allow_nan, default).write(value)


class _Writer:
    """The iterative encoder: the deep spine by hand, shallow parts by ``json.dumps``."""

    def __init__(
        self, indent: int | None, allow_nan: bool, default: Callable[[Any], Any] | None
    ) -> None:
        self.indent = indent
        self.allow_nan = allow_nan
        self.default = default
        self.item_sep = ", " if indent is None else ","
        self.heights: dict[int, int] = {}

    def chunk(self, value: Any, level: int) -> str:
        text = json.dumps(
            value,
            ensure_ascii=False,
            indent=self.indent,
            allow_nan=self.allow_nan,
            default=self.default,
        )
        if self.indent is not None and level:
            # JSON strings hold no raw newline, so every newline is layout.
            text = text.replace("\n", "\n" + " " * (self.indent * level))
        return text

    def newline(self, level: int) -> str:
        return "" if self.indent is None else "\n" + " " * (self.indent * level)

    def write(self, value: Any) -> str:
        self._measure(value)
        heights = self.heights
        out: list[str] = []
        # Items: a str is emitted as is; a tuple (value, level) is encoded.
        todo: list[Any] = [(value, 0)]
        while todo:
            item = todo.pop()
            if type(item) is str:
                out.append(item)
                continue
            current, level = item
            if heights.get(id(current), 0) <= SHALLOW:
                out.append(self.chunk(current, level))
            elif isinstance(current, dict):
                todo.extend(reversed(self._object(current, level)))
            else:
                todo.extend(reversed(self._array(current, level)))
        return "".join(out)

    def _array(self, items: list[Any] | tuple[Any, ...], level: int) -> list[Any]:
        if not items:
            return ["[]"]
        parts: list[Any] = ["["]
        for position, item in enumerate(items):
            if position:
                parts.append(self.item_sep)
            parts.append(self.newline(level + 1))
            parts.append((item, level + 1))
        parts.append(self.newline(level) + "]")
        return parts

    def _object(self, mapping: dict[Any, Any], level: int) -> list[Any]:
        if not mapping:
            return ["{}"]
        parts: list[Any] = ["{"]
        heights = self.heights
        run: dict[str, Any] = {}  # shallow members in a row, encoded together (no indent)
        first = True
        for key, member in mapping.items():
            name = self._key(key)
            if self.indent is None and heights.get(id(member), 0) <= SHALLOW:
                run[name] = member
                continue
            if run:
                parts.append(("" if first else self.item_sep) + self.chunk(run, level)[1:-1])
                first, run = False, {}
            if not first:
                parts.append(self.item_sep)
            first = False
            parts.append(self.newline(level + 1))
            parts.append(json.dumps(name, ensure_ascii=False) + ": ")
            parts.append((member, level + 1))
        if run:
            parts.append(("" if first else self.item_sep) + self.chunk(run, level)[1:-1])
        parts.append(self.newline(level) + "}")
        return parts

    def _key(self, key: Any) -> str:
        """A mapping key as ``json.dumps`` spells it."""
        if isinstance(key, str):
            return key
        if key is True or key is False or key is None:
            return json.dumps(key)
        if isinstance(key, (int, float)):
            return json.dumps(key, allow_nan=self.allow_nan)
        raise TypeError(f"keys must be str, int, float, bool or None, not {type(key).__name__}")

    def _measure(self, value: Any) -> None:
        """Record the nesting height of every container (post-order, iteratively).

        Raises:
            ValueError: a container contains itself.
        """
        heights = self.heights
        on_path: set[int] = set()
        stack: list[tuple[Any, bool]] = [(value, False)]
        while stack:
            current, done = stack.pop()
            key = id(current)
            if done:
                on_path.discard(key)
                members = current.values() if isinstance(current, dict) else current
                heights[key] = 1 + max((heights.get(id(m), 0) for m in members), default=0)
                continue
            if not isinstance(current, (dict, list, tuple)) or key in heights:
                continue
            if key in on_path:
                raise ValueError("Circular reference detected")
            on_path.add(key)
            stack.append((current, True))
            members = current.values() if isinstance(current, dict) else current
            stack.extend((m, False) for m in members if isinstance(m, (dict, list, tuple)))


# --- reading ---------------------------------------------------------------------


def loads(text: str) -> Any:
    """``json.loads(text)`` for a document of any nesting depth.

    Raises:
        json.JSONDecodeError: the text is not one JSON document.
    """
    value, end = raw_decode(text, _WHITESPACE.match(text, 0).end())  # type: ignore[union-attr]
    end = _WHITESPACE.match(text, end).end()  # type: ignore[union-attr]
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
            return _DECODER.raw_decode(text, index)
        except RecursionError:
            pass
    with gc_paused():
        spine = _spine(text, index)
        try:
            return _decode_spine(text, index, spine)
        except (_Irregular, ValueError, KeyError):
            # Not the regular shape the quick way expects (or not JSON at all): the
            # member-by-member parse gives the value, or the exact place of the error.
            return _decode_deep(text, index, spine.deep)


@dataclass
class _Spine:
    """The deep brackets of a value (`_spine`): which they are, their deep members, their ends."""

    deep: set[int] = field(default_factory=set)
    members: dict[int, list[int]] = field(default_factory=dict)  # opener -> deep members' openers
    closes: dict[int, int] = field(default_factory=dict)  # opener -> its closing bracket


def _spine(text: str, index: int) -> _Spine:
    """The brackets, in the value at ``index``, whose contents nest past `SHALLOW`."""
    spine = _Spine()
    deep, members, closes = spine.deep, spine.members, spine.closes
    opened: list[list[int]] = []  # [position, height of the deepest member so far]
    for match in _STRUCTURE.finditer(text, index):
        start = match.start(1)
        char = text[start]
        if char == '"':
            continue
        if char in "[{":
            opened.append([start, 0])
            continue
        if not opened:
            break  # malformed: the parser reports it
        position, below = opened.pop()
        height = below + 1
        if height > SHALLOW:
            deep.add(position)
            closes[position] = start
            if opened:
                members.setdefault(opened[-1][0], []).append(position)
        if not opened:
            break  # the end of the value
        if height > opened[-1][1]:
            opened[-1][1] = height
    for position, _ in opened:  # never closed: parsed by hand, which reports where
        deep.add(position)
    return spine


def _skip(text: str, index: int) -> int:
    return _WHITESPACE.match(text, index).end()  # type: ignore[union-attr]


def _member_key(text: str, index: int) -> tuple[str, int]:
    """The ``"key":`` at ``index``; returns the key and the index of its value."""
    if text[index : index + 1] != '"':
        raise json.JSONDecodeError("Expecting property name enclosed in double quotes", text, index)
    key, index = _SCANSTRING(text, index + 1)
    index = _skip(text, index)
    if text[index : index + 1] != ":":
        raise json.JSONDecodeError("Expecting ':' delimiter", text, index)
    return key, _skip(text, index + 1)


class _Irregular(Exception):
    """The text around a deep object is not as `_decode_spine` expects."""


def _key_start(text: str, cursor: int, value_at: int) -> int:
    """Where the ``"key":`` before the value at ``value_at`` starts (not before ``cursor``)."""
    end = value_at - 1
    while end >= cursor and text[end] in " \t\n\r":
        end -= 1
    if end < cursor or text[end] != ":":
        raise _Irregular
    end -= 1
    while end >= cursor and text[end] in " \t\n\r":
        end -= 1
    if end < cursor or text[end] != '"':
        raise _Irregular
    start = text.rfind('"', cursor, end)
    while start > cursor and (start - cursor - len(text[cursor:start].rstrip("\\"))) % 2:
        start = text.rfind('"', cursor, start)  # an escaped quote inside the key
    if start < cursor or _SCANSTRING(text, start + 1)[1] != end + 1:
        raise _Irregular
    return start


def _shallow_members(into: dict[str, Any], text: str, before_key: bool) -> None:
    """Add the members in ``text`` (a run of shallow ``"k": v`` pairs) to ``into``, in C."""
    run = text.strip()
    if before_key and run:
        if run[-1] != ",":
            raise _Irregular
        run = run[:-1]
    if run:
        into.update(_DECODER.decode("{" + run + "}"))


def _advance(text: str, frame: list[Any], closes: dict[int, int]) -> int:
    """Read the deep object of ``frame`` up to its next deep member (returns where that
    member's value starts) or to its end (returns -1 - the index past it)."""
    target, _, members, done, opener, cursor = frame
    if done < len(members):
        value_at = members[done]
        start = _key_start(text, cursor, value_at)
        _shallow_members(target, text[cursor:start], before_key=True)
        frame[1] = _SCANSTRING(text, start + 1)[0]
        frame[3] = done + 1
        return int(value_at)
    close = closes[opener]
    _shallow_members(target, text[cursor:close], before_key=False)
    return -1 - (close + 1)


def _decode_spine(text: str, index: int, spine: _Spine) -> tuple[Any, int]:
    """Parse the value at ``index`` the quick way: a deep object's shallow members in one C
    call per run between its deep members, only the deep members by hand."""
    stack: list[list[Any]] = []  # objects: [dict, key, deep members, done, opener, cursor]
    position = index
    while True:
        opened, value, position = _open_spine(text, position, spine, stack)
        if opened:
            continue
        done, value, position = _close_spine(text, value, position, spine.closes, stack)
        if done:
            return value, position


def _open_spine(
    text: str, position: int, spine: _Spine, stack: list[list[Any]]
) -> tuple[bool, Any, int]:
    """Start the value at ``position``: ``(True, None, next)`` after opening a container
    that has members (pushed on ``stack``), else ``(False, value, end)``."""
    char = text[position : position + 1]
    if position in spine.deep and char == "{":
        frame: list[Any] = [{}, None, spine.members.get(position, ()), 0, position, position + 1]
        at = _advance(text, frame, spine.closes)
        if at >= 0:
            stack.append(frame)
            return True, None, at
        return False, frame[0], -1 - at
    if position in spine.deep and char == "[":
        return _open_list(text, position, stack)
    try:
        value, end = _SCAN(text, position)
    except StopIteration:
        raise _Irregular from None
    return False, value, end


def _open_list(text: str, position: int, stack: list[list[Any]]) -> tuple[bool, Any, int]:
    """Open the list whose ``[`` is at ``position``: pushed on ``stack`` when it has items
    (``(True, None, first item)``), else ``(False, [], end)``."""
    position = _skip(text, position + 1)
    if text[position : position + 1] != "]":
        stack.append([[], _LIST])
        return True, None, position
    return False, [], position + 1


def _close_spine(
    text: str, value: Any, position: int, closes: dict[int, int], stack: list[list[Any]]
) -> tuple[bool, Any, int]:
    """Hand ``value`` to its container and close every container that ends here:
    ``(True, value, end)`` when the outermost one closed, else ``(False, None, next)``
    with ``next`` the position of the next value to parse."""
    while stack:
        frame = stack[-1]
        container = frame[0]
        position = _skip(text, position)
        char = text[position : position + 1]
        if frame[1] is _LIST:
            container.append(value)
            if char == ",":
                return False, None, _skip(text, position + 1)
            if char != "]":
                raise _Irregular
            position += 1
        else:
            container[frame[1]] = value
            if char == ",":
                frame[5] = position + 1
                at = _advance(text, frame, closes)
                if at >= 0:
                    return False, None, at
                position = -1 - at
            elif char != "}" or frame[3] != len(frame[2]) or closes[frame[4]] != position:
                raise _Irregular
            else:
                position += 1
        stack.pop()
        value = container
    return True, value, position


_LIST: Final = object()  # the "key" of a list under construction


def _decode_deep(text: str, index: int, deep: set[int]) -> tuple[Any, int]:
    """Parse the value at ``index``: the brackets in ``deep`` by hand, the rest by the C scanner."""
    stack: list[list[Any]] = []  # [container, key or _LIST]
    position = index
    while True:
        opened, value, position = _open_deep(text, position, deep, stack)
        if opened:
            continue
        done, value, position = _close_deep(text, value, position, stack)
        if done:
            return value, position


def _open_deep(
    text: str, position: int, deep: set[int], stack: list[list[Any]]
) -> tuple[bool, Any, int]:
    """Start the value at ``position``, as `_open_spine` does for `_decode_deep`."""
    char = text[position : position + 1]
    if position in deep and char == "{":
        position = _skip(text, position + 1)
        if text[position : position + 1] != "}":
            key, position = _member_key(text, position)
            stack.append([{}, key])
            return True, None, position
        return False, {}, position + 1
    if position in deep and char == "[":
        return _open_list(text, position, stack)
    try:
        value, end = _SCAN(text, position)
    except StopIteration as stop:
        raise json.JSONDecodeError("Expecting value", text, stop.value) from None
    return False, value, end


def _close_deep(
    text: str, value: Any, position: int, stack: list[list[Any]]
) -> tuple[bool, Any, int]:
    """Hand ``value`` to its container, closing every container that ends here (as
    `_close_spine` does for `_decode_deep`)."""
    while stack:
        frame = stack[-1]
        container, key = frame
        if key is _LIST:
            container.append(value)
        else:
            container[key] = value
        position = _skip(text, position)
        char = text[position : position + 1]
        if char == ",":
            position = _skip(text, position + 1)
            if key is not _LIST:
                frame[1], position = _member_key(text, position)
            return False, None, position
        if char != ("]" if key is _LIST else "}"):
            raise json.JSONDecodeError("Expecting ',' delimiter", text, position)
        position += 1
        stack.pop()
        value = container
    return True, value, position
