"""Text as a terminal may show it: nothing in it can act on the terminal.

A trace brings text flow-xray did not write (call names, error messages, ids,
what a backend answered), and a file name may hold anything. Printed raw, an
escape sequence in it can clear the screen, set the window title, rewrite the
line above or hide what follows; a bidi override can make a line read as
something else. Every line a flow-xray command prints passes `terminal_text`:
each control character (C0 but tab, DEL, C1), each bidi and line-breaking
format character and each lone surrogate becomes its visible Python escape
(``\\x1b``, ``\\u202e``, ``\\udc80``), so the text stays readable and
recognisable and does nothing. `one_line` also caps a message's length.
The standard library only: every layer may use it.
"""

from __future__ import annotations

import re
from typing import Final

# C0 controls but tab and newline, DEL and the C1 controls (ESC, CSI, OSC, ST...);
# the bidi marks, embeddings, overrides and isolates (Trojan Source, CVE-2021-42574);
# the line and paragraph separators; lone surrogates.
_ACTIVE: Final = "\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069"
_IN_BLOCK: Final = re.compile(f"[{_ACTIVE}\ud800-\udfff]")
_IN_LINE: Final = re.compile(f"[\n{_ACTIVE}\ud800-\udfff]")

#: The longest line `one_line` gives by default.
LINE_LIMIT: Final = 200


_SHORT: Final = {"\n": "\\n", "\r": "\\r"}


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    short = _SHORT.get(char)
    if short is not None:
        return short
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def terminal_text(text: str, *, newlines: bool = False) -> str:
    """``text`` with every character a terminal would act on shown as its escape.

    Tabs are kept; newlines too when ``newlines`` is true (a block of several
    lines), else they are escaped like the rest (one line stays one line).
    Returns ``text`` itself when there is nothing to escape.

    Example:
        >>> terminal_text("step\\x1b[2J\\u202eevil")
        'step\\\\x1b[2J\\\\u202eevil'
    """
    if text.isprintable():  # no control or format character at all: the common case
        return text
    pattern = _IN_BLOCK if newlines else _IN_LINE
    if pattern.search(text) is None:
        return text
    return pattern.sub(_escape, text)


def one_line(text: str, limit: int = LINE_LIMIT) -> str:
    """``text`` as one terminal-safe line of at most ``limit`` characters.

    Runs of white space (newlines included) become one space. A longer line
    is shortened word by word, the longest first (a path, a pasted id), each
    keeping its start and its end around a ``…``, so the words that say what
    went wrong stay whole; only if that is not enough is the line itself cut
    in the middle.

    Example:
        >>> one_line("cannot read /very/long/" + "x" * 300 + "/t.json: Permission denied", 60)
        'cannot read /very/long/xxxx…xxxxxx/t.json: Permission denied'
    """
    line = terminal_text(" ".join(text.split()))
    if len(line) <= limit:
        return line
    words = line.split(" ")
    excess = len(line) - limit
    while excess > 0:
        longest = max(range(len(words)), key=lambda i: len(words[i]))
        word = words[longest]
        if len(word) <= _SHORTEST_WORD:
            break
        shorter = _middle_cut(word, max(_SHORTEST_WORD, len(word) - excess))
        excess -= len(word) - len(shorter)
        words[longest] = shorter
    line = " ".join(words)
    return line if len(line) <= limit else _middle_cut(line, limit)


_SHORTEST_WORD: Final = 24


def _middle_cut(text: str, size: int) -> str:
    """``text`` in ``size`` characters: its start and end around a ``…``."""
    tail = (size - 1) // 2
    return f"{text[: size - 1 - tail]}…{text[len(text) - tail :]}"
