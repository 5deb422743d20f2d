"""The iterative JSON writer: the deep spine of a value by hand, shallow parts by ``json.dumps``."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Final

# Containers nested at most this deep are handed to the C codec whole.
SHALLOW: Final = 100


class Writer:
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
