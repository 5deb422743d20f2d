"""The iterative JSON readers: a deep value's spine by hand, shallow parts by the C scanner.

`decode_spine` is the quick way (a deep object's shallow members in one C call
per run between its deep members); `decode_deep` reads member by member and
reports the exact place of an error.
"""

from __future__ import annotations

import json
import json.decoder
import json.scanner
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Final

from flow_xray.jsontext.encode import SHALLOW

DECODER: Final = json.JSONDecoder()
_SCAN: Final[Any] = json.scanner.make_scanner(DECODER)  # type: ignore[arg-type]  # typeshed types it as a class
_SCANSTRING: Final[Any] = json.decoder.scanstring  # type: ignore[attr-defined]  # untyped in typeshed
WHITESPACE: Final = re.compile(r"[ \t\n\r]*")
# What the depth pre-pass skips: plain text and strings without a bracket or an escape.
# Matched alone (it cannot fail, so never backtracks): a search for what follows it
# backtracked through every split of a long run of plain text (digits, spaces) with no
# bracket after it, in time doubling with each character.
_PLAIN: Final = re.compile(r'(?:[^"\[\]{}]+|"[^"\\\[\]{}]*")*')
_STRING: Final = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)  # one whole, with escapes


def _structure(text: str, index: int) -> Iterator[int]:
    """The positions from ``index`` on of each bracket, and of each string that holds a
    bracket or an escape: what the depth pre-pass looks at, in one pass over the text."""
    end = len(text)
    at = index
    while True:
        at = _PLAIN.match(text, at).end()  # type: ignore[union-attr]  # (it always matches)
        if at >= end:
            return
        if text[at] != '"':
            yield at
            at += 1
            continue
        found = _STRING.match(text, at)
        if found is None:  # a string never closed: read on past its quote
            at += 1
            continue
        yield at
        at = found.end()


@dataclass
class _Spine:
    """The deep brackets of a value (`_spine`): which they are, their deep members, their ends."""

    deep: set[int] = field(default_factory=set)
    members: dict[int, list[int]] = field(default_factory=dict)  # opener -> deep members' openers
    closes: dict[int, int] = field(default_factory=dict)  # opener -> its closing bracket


def spine_of(text: str, index: int) -> _Spine:
    """The brackets, in the value at ``index``, whose contents nest past `SHALLOW`."""
    spine = _Spine()
    deep, members, closes = spine.deep, spine.members, spine.closes
    opened: list[list[int]] = []  # [position, height of the deepest member so far]
    for start in _structure(text, index):
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
    return WHITESPACE.match(text, index).end()  # type: ignore[union-attr]


def _member_key(text: str, index: int) -> tuple[str, int]:
    """The ``"key":`` at ``index``; returns the key and the index of its value."""
    if text[index : index + 1] != '"':
        raise json.JSONDecodeError("Expecting property name enclosed in double quotes", text, index)
    key, index = _SCANSTRING(text, index + 1)
    index = _skip(text, index)
    if text[index : index + 1] != ":":
        raise json.JSONDecodeError("Expecting ':' delimiter", text, index)
    return key, _skip(text, index + 1)


class Irregular(Exception):
    """The text around a deep object is not as `_decode_spine` expects."""


def _key_start(text: str, cursor: int, value_at: int) -> int:
    """Where the ``"key":`` before the value at ``value_at`` starts (not before ``cursor``)."""
    end = value_at - 1
    while end >= cursor and text[end] in " \t\n\r":
        end -= 1
    if end < cursor or text[end] != ":":
        raise Irregular
    end -= 1
    while end >= cursor and text[end] in " \t\n\r":
        end -= 1
    if end < cursor or text[end] != '"':
        raise Irregular
    start = text.rfind('"', cursor, end)
    while start > cursor and (start - cursor - len(text[cursor:start].rstrip("\\"))) % 2:
        start = text.rfind('"', cursor, start)  # an escaped quote inside the key
    if start < cursor or _SCANSTRING(text, start + 1)[1] != end + 1:
        raise Irregular
    return start


def _shallow_members(into: dict[str, Any], text: str, before_key: bool) -> None:
    """Add the members in ``text`` (a run of shallow ``"k": v`` pairs) to ``into``, in C."""
    run = text.strip()
    if before_key and run:
        if run[-1] != ",":
            raise Irregular
        run = run[:-1]
    if run:
        into.update(DECODER.decode("{" + run + "}"))


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


def decode_spine(text: str, index: int, spine: _Spine) -> tuple[Any, int]:
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
        raise Irregular from None
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
                raise Irregular
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
                raise Irregular
            else:
                position += 1
        stack.pop()
        value = container
    return True, value, position


_LIST: Final = object()  # the "key" of a list under construction


def decode_deep(text: str, index: int, deep: set[int]) -> tuple[Any, int]:
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
