"""A small reader for the subset of DOT that `parse_dot` understands.

It turns text into flat statements: ``("node", [id], attrs)`` and
``("edge", [id, id, ...], attrs)``, plus the graph's ``rankdir``. Anything
outside the subset raises `DotSyntaxError`, which `parse_dot` turns into None.
"""

from __future__ import annotations

import re

Statement = tuple[str, list[str], dict[str, str]]
_IDS = ("id", "qid")

_TOKEN = re.compile(
    r"""
    (?P<space>\s+|//[^\n]*|/\*.*?\*/|^\#[^\n]*)
    |(?P<arrow>->)
    |(?P<punct>[{}\[\];,=])
    |(?P<quoted>"(?:[^"\\]|\\.)*")
    |(?P<word>[A-Za-z_\x80-\U0010ffff][A-Za-z0-9_\x80-\U0010ffff]*|-?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?))
    """,
    re.VERBOSE | re.DOTALL | re.MULTILINE,
)
_ESCAPES = {"n": "\n", "l": "\n", "r": "\n", "\\": "\\", '"': '"'}


class DotSyntaxError(ValueError):
    """The text is not in the DOT subset flow-xray reads."""


def tokenize(text: str) -> list[tuple[str, str]]:
    """Split DOT text into ``(kind, value)`` tokens; quoted strings come back unescaped.

    Kinds: ``id`` (bare word or number), ``qid`` (quoted string), ``arrow``, ``punct``.
    Raises `DotSyntaxError` on any character outside the subset (``--``, ``<``, ``:``, ``+``).
    """
    tokens: list[tuple[str, str]] = []
    pos = 0
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if match is None:
            raise DotSyntaxError(f"unexpected {text[pos]!r} at offset {pos}")
        pos = match.end()
        kind = match.lastgroup
        if kind == "space":
            continue
        value = match.group()
        if kind == "quoted":
            tokens.append(("qid", _unquote(value[1:-1])))
        elif kind == "word":
            tokens.append(("id", value))
        else:
            tokens.append((kind or "", value))
    return tokens


def _unquote(body: str) -> str:
    return re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), "\\" + m.group(1)), body)


def parse_statements(text: str) -> tuple[list[Statement], str]:
    """Parse ``[strict] digraph [name] { ... }`` into statements and the rankdir.

    Raises:
        DotSyntaxError: the text is not a digraph in the supported subset.
    """
    tokens = tokenize(text)
    reader = _Reader(tokens)
    if reader.peek_word("strict"):
        reader.take()
    if not reader.peek_word("digraph"):
        raise DotSyntaxError("expected 'digraph'")
    reader.take()
    if reader.peek()[0] in _IDS:
        reader.take()
    reader.expect("punct", "{")
    statements: list[Statement] = []
    rankdir = "TB"
    while reader.peek() != ("punct", "}"):
        kind, value = reader.take()
        if kind == "punct" and value == ";":
            continue
        if kind not in _IDS:
            raise DotSyntaxError(f"unexpected {value!r}")
        rankdir = _statement(reader, kind, value, rankdir, statements)
    reader.take()
    if reader.peek() != ("end", ""):
        raise DotSyntaxError("text after the closing brace")
    return statements, rankdir


def _statement(
    reader: _Reader, kind: str, value: str, rankdir: str, statements: list[Statement]
) -> str:
    """Read the statement that starts with id ``value``: add it to ``statements`` (a node or
    an edge chain) or read it as a setting; return the graph's rankdir after it."""
    lowered = value.lower() if kind == "id" else ""
    if lowered in ("graph", "node", "edge") and reader.peek() == ("punct", "["):
        defaults = reader.attributes()
        return defaults.get("rankdir", rankdir) if lowered == "graph" else rankdir
    if lowered == "subgraph":
        raise DotSyntaxError("subgraphs are not supported")
    if reader.peek() == ("punct", "="):
        reader.take()
        setting = reader.expect("id")
        return setting if lowered == "rankdir" else rankdir
    if reader.peek()[0] == "arrow":
        names = [value]
        while reader.peek()[0] == "arrow":
            reader.take()
            names.append(reader.expect("id"))
        statements.append(("edge", names, reader.attributes()))
    else:
        statements.append(("node", [value], reader.attributes()))
    return rankdir


class _Reader:
    """A cursor over tokens; ``("end", "")`` marks the end."""

    def __init__(self, tokens: list[tuple[str, str]]) -> None:
        self._tokens = tokens
        self._pos = 0

    def peek(self) -> tuple[str, str]:
        return self._tokens[self._pos] if self._pos < len(self._tokens) else ("end", "")

    def peek_word(self, word: str) -> bool:
        kind, value = self.peek()
        return kind == "id" and value.lower() == word

    def take(self) -> tuple[str, str]:
        token = self.peek()
        if token[0] == "end":
            raise DotSyntaxError("unexpected end of text")
        self._pos += 1
        return token

    def expect(self, kind: str, value: str | None = None) -> str:
        got_kind, got = self.take()
        matches = got_kind in _IDS if kind == "id" else got_kind == kind
        if not matches or (value is not None and got != value):
            raise DotSyntaxError(f"expected {value or kind!r}, got {got!r}")
        return got

    def attributes(self) -> dict[str, str]:
        """Read zero or more ``[k=v, ...]`` lists; later keys win."""
        attrs: dict[str, str] = {}
        while self.peek() == ("punct", "["):
            self.take()
            while self.peek() != ("punct", "]"):
                if self.peek()[0] == "punct" and self.peek()[1] in ",;":
                    self.take()
                    continue
                key = self.expect("id")
                self.expect("punct", "=")
                attrs[key] = self.expect("id")
            self.take()
        return attrs
