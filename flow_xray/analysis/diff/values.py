"""Differences between two recorded values: key-level for JSON data, word/line-level for text.

Used by the run diff for inputs and outputs. Everything is plain data, so the
result goes straight into JSON and the diff viewer.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Any

MAX_CHANGES = 200  # key-level changes listed per value; the rest are counted
MAX_TOKENS = 4000  # text tokens per side compared finely; longer texts differ as a whole
_WORDS = re.compile(r"\s+|\w+|[^\w\s]")

# One piece of a text diff: ("equal" | "delete" | "insert", text).
TextOp = tuple[str, str]


@dataclass(frozen=True)
class KeyChange:
    """One difference inside a value.

    ``path`` locates it (``""`` for the whole value, ``messages[1].content``,
    ``["odd key"]``); ``change`` is ``added``, ``removed`` or ``changed``;
    ``text`` is a text diff when both sides are strings.
    """

    path: str
    change: str
    before: Any
    after: Any
    text: tuple[TextOp, ...] | None = None

    def to_dict(self) -> dict[str, Any]:
        """Plain data (``text`` as a list of ``[op, text]`` pairs, or null)."""
        return {
            "path": self.path,
            "change": self.change,
            "before": self.before,
            "after": self.after,
            "text": None if self.text is None else [list(op) for op in self.text],
        }


@dataclass(frozen=True)
class ValueDiff:
    """How two values differ: the key-level changes, at most `MAX_CHANGES` of them."""

    before: Any
    after: Any
    changes: tuple[KeyChange, ...]
    more: int = 0  # changes beyond MAX_CHANGES, counted but not listed

    def to_dict(self) -> dict[str, Any]:
        """Plain data: the changes (without repeating the two whole values)."""
        return {"changes": [c.to_dict() for c in self.changes], "more": self.more}


def diff_values(before: Any, after: Any) -> ValueDiff | None:
    """Return how ``after`` differs from ``before``, or None when they are equal.

    Mappings are compared key by key and lists item by item (aligned, so one
    inserted message shows as one addition, not as every later item changed),
    at any depth; two strings get a text diff. Iterative, so any depth works.

    Example::

        diff_values({"q": "tea", "k": 2}, {"q": "green tea", "k": 2}).changes[0].path  # "q"
    """
    if same(before, after):
        return None
    changes: list[KeyChange] = []
    more = 0
    # Items are a change to report or a pair of containers to open, in document order.
    stack: list[KeyChange | tuple[str, Any, Any]] = [("", before, after)]
    while stack:
        item = stack.pop()
        if isinstance(item, KeyChange):
            if len(changes) < MAX_CHANGES:
                changes.append(item)
            else:
                more += 1
            continue
        path, a, b = item
        if isinstance(a, Mapping) and isinstance(b, Mapping):
            found = _mapping_changes(path, a, b)
        elif _is_list(a) and _is_list(b):
            found = _list_changes(path, a, b)
        else:
            found = _compare(path, a, b)
        stack.extend(reversed(found))
    return ValueDiff(before, after, tuple(changes), more)


def _mapping_changes(
    path: str, a: Mapping[Any, Any], b: Mapping[Any, Any]
) -> list[KeyChange | tuple[str, Any, Any]]:
    """Key by key, in ``a``'s order then the keys only ``b`` has."""
    found: list[KeyChange | tuple[str, Any, Any]] = []
    for key in [*a, *(k for k in b if k not in a)]:
        where = _key_path(path, key)
        if key not in b:
            found.append(KeyChange(where, "removed", a[key], None))
        elif key not in a:
            found.append(KeyChange(where, "added", None, b[key]))
        else:
            found.extend(_compare(where, a[key], b[key]))
    return found


def _list_changes(path: str, a: Any, b: Any) -> list[KeyChange | tuple[str, Any, Any]]:
    """Item by item, aligned (`_align_items`)."""
    found: list[KeyChange | tuple[str, Any, Any]] = []
    for i, j, equal in _align_items(a, b):
        if j is None:
            found.append(KeyChange(f"{path}[{i}]", "removed", a[i], None))
        elif i is None:
            found.append(KeyChange(f"{path}[{j}]", "added", None, b[j]))
        elif not equal:
            found.extend(_compare(f"{path}[{j}]", a[i], b[j]))
    return found


def _compare(path: str, a: Any, b: Any) -> list[KeyChange | tuple[str, Any, Any]]:
    """Open two containers of one kind later; report two other values now if they differ."""
    if (isinstance(a, Mapping) and isinstance(b, Mapping)) or (_is_list(a) and _is_list(b)):
        return [(path, a, b)]
    if same(a, b):
        return []
    text = text_diff(a, b) if isinstance(a, str) and isinstance(b, str) else None
    return [KeyChange(path, "changed", a, b, text)]


def text_diff(before: str, after: str) -> tuple[TextOp, ...]:
    """Word-level ops for one-line texts, line-level for multi-line ones.

    Joining the ``equal`` and ``delete`` texts gives ``before``; the
    ``equal`` and ``insert`` texts give ``after``.
    """
    multiline = "\n" in before or "\n" in after
    split = (lambda s: s.splitlines(keepends=True)) if multiline else _WORDS.findall
    a, b = split(before), split(after)
    if len(a) > MAX_TOKENS or len(b) > MAX_TOKENS:
        return (("delete", before), ("insert", after))
    ops: list[TextOp] = []
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            _push(ops, "equal", "".join(a[i1:i2]))
            continue
        if i2 > i1:
            _push(ops, "delete", "".join(a[i1:i2]))
        if j2 > j1:
            _push(ops, "insert", "".join(b[j1:j2]))
    return tuple(ops)


def _push(ops: list[TextOp], op: str, text: str) -> None:
    if ops and ops[-1][0] == op:
        ops[-1] = (op, ops[-1][1] + text)
    elif text:
        ops.append((op, text))


def _align_items(a: Sequence[Any], b: Sequence[Any]) -> list[tuple[int | None, int | None, bool]]:
    """Pair list items in order: ``(i, j, equal)``, a missing side as None. Equal runs pair
    up, and so do the items of a replaced run, one by one."""
    keys_a, keys_b = [_canonical(v) for v in a], [_canonical(v) for v in b]
    pairs: list[tuple[int | None, int | None, bool]] = []
    matcher = SequenceMatcher(None, keys_a, keys_b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        common = min(i2 - i1, j2 - j1) if tag in ("equal", "replace") else 0
        pairs.extend((i1 + k, j1 + k, tag == "equal") for k in range(common))
        pairs.extend((i, None, False) for i in range(i1 + common, i2))
        pairs.extend((None, j, False) for j in range(j1 + common, j2))
    return pairs


def _canonical(value: Any) -> str:
    try:
        return json.dumps(value, sort_keys=True, default=repr)
    except (TypeError, ValueError):  # NaN-free by construction; odd keys or cycles
        return repr(value)


def same(a: Any, b: Any) -> bool:
    """Equal as recorded data, at any depth: ``1 == 1.0``, but ``True != 1``."""
    stack = [(a, b)]
    while stack:
        x, y = stack.pop()
        if isinstance(x, Mapping) and isinstance(y, Mapping):
            if len(x) != len(y) or any(k not in y for k in x):
                return False
            stack.extend((x[k], y[k]) for k in x)
        elif _is_list(x) and _is_list(y):
            if len(x) != len(y):
                return False
            stack.extend(zip(x, y, strict=True))
        elif isinstance(x, bool) or isinstance(y, bool):
            if type(x) is not type(y) or x != y:
                return False
        elif isinstance(x, (Mapping, list, tuple)) or isinstance(y, (Mapping, list, tuple)):
            return False
        else:
            try:
                if not bool(x == y):
                    return False
            except Exception:  # an odd value's __eq__ (loaded traces are plain data)
                return False
    return True


def _is_list(value: Any) -> bool:
    return isinstance(value, (list, tuple))


def _key_path(path: str, key: Any) -> str:
    text = str(key)
    if text.isidentifier():
        return f"{path}.{text}" if path else text
    return f"{path}[{json.dumps(text, ensure_ascii=False)}]"
