"""Nothing a trace brings can act on the terminal: every CLI line is escaped by one sanitizer.

`flow_xray.terminal.terminal_text` shows each control character (C0 but tab,
DEL, C1), each bidi control and line separator and each lone surrogate as its
visible escape. Checked as a property over any text, then on what the
commands print: ``diff``'s lines and summary, ``view``'s and ``run``'s summary
lines and warnings, and ``error:`` lines (at most 200 characters), from call
names, file names and file contents made to clear the screen, set the window
title, rewrite the line or reverse it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from hypothesis import example, given, settings, strategies as st

from flow_xray import TraceResult
from flow_xray.cli import cli
from flow_xray.terminal import LINE_LIMIT, one_line, terminal_text

# Characters with Unicode's Bidi_Control property (the Trojan Source set and the marks).
BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
HOSTILE = [
    "\x1b[2J\x1b[H",  # clear the screen
    "\x1b]0;pwned\x07",  # set the window title
    "\x1b]8;;http://evil.example\x1b\\link\x1b]8;;\x1b\\",  # a hyperlink
    "\x9b31m",  # a C1 CSI
    "ok\rerror: fake",  # overwrite the line
    "one\ntwo",  # a second line
    "\u202eevil.exe\u202c",  # reversed text
    "\u2066isolated\u2069",
    "bell\x07del\x7f",
    "line\u2028separator",
    "surrogate \udc80",
]


def acts_on_a_terminal(char: str) -> bool:
    """A character a terminal acts on, or that changes how a line reads."""
    category = unicodedata.category(char)
    return (category == "Cc" and char != "\t") or category in ("Zl", "Zp", "Cs") or char in BIDI


any_text = st.text(st.characters(exclude_categories=()), max_size=60)


@settings(max_examples=100, deadline=None)
@given(any_text)
@example("\x1b[2J")
@example("\u202e\udc80\x9b")
def test_no_character_that_acts_on_a_terminal_survives(text: str) -> None:
    """For any text: the output holds none, encodes as UTF-8, and a second pass changes nothing."""
    shown = terminal_text(text)
    assert not any(acts_on_a_terminal(c) for c in shown)
    shown.encode("utf-8")
    assert terminal_text(shown) == shown
    block = terminal_text(text, newlines=True)
    assert not any(acts_on_a_terminal(c) for c in block.replace("\n", ""))


@settings(max_examples=200, deadline=None)
@given(st.text(st.characters(exclude_categories=("Cc", "Cs", "Zl", "Zp", "Cf")), max_size=60))
def test_ordinary_text_is_left_as_it_is(text: str) -> None:
    """Letters, digits, symbols, spaces, emoji, CJK, combining marks: unchanged."""
    assert terminal_text(text) is text or terminal_text(text) == text


@settings(max_examples=200, deadline=None)
@given(any_text, st.integers(min_value=30, max_value=300))
def test_one_line_is_one_short_safe_line(text: str, limit: int) -> None:
    line = one_line(text * 20, limit)
    assert len(line) <= limit and "\n" not in line
    assert not any(acts_on_a_terminal(c) for c in line)


def test_escapes_are_the_python_spellings() -> None:
    assert terminal_text("a\x1b[2Jb\rc\nd\te\u202ef\udc80") == (
        "a\\x1b[2Jb\\rc\\nd\te\\u202ef\\udc80"
    )
    assert terminal_text("a\nb", newlines=True) == "a\nb"
    assert terminal_text("naïve 😀 漢字 e\u0301") == "naïve 😀 漢字 e\u0301"


def test_one_line_shortens_the_longest_word_first() -> None:
    """A 10 MB id in a message: the message's own words stay whole, the id is cut."""
    message = "error: t.json: traceId '" + "a" * 10_000_000 + "' is not a 16-byte hex id"
    line = one_line(message)
    assert len(line) == LINE_LIMIT
    assert line.startswith("error: t.json: traceId 'aaa") and line.endswith(
        "' is not a 16-byte hex id"
    )


# --- what the commands print ---------------------------------------------------------------


def trace_file(path: Path, names: list[str], **fields: object) -> Path:
    nodes = [{"name": name, "latency_ms": 1.0, "children": [], **fields} for name in names]
    TraceResult.from_dict({"nodes": nodes}).save(path)
    return path


def clean(result: Result) -> None:
    """Nothing the terminal would act on, on either stream (newlines end lines)."""
    for stream in (result.stdout, result.stderr):
        assert not any(acts_on_a_terminal(c) for c in stream.replace("\n", "")), repr(stream)


def test_diff_lines_show_hostile_call_names_as_text(tmp_path: Path) -> None:
    a = trace_file(tmp_path / "a.json", ["agent"])
    b = trace_file(tmp_path / "b.json", ["agent", *HOSTILE])
    done = CliRunner().invoke(cli, ["diff", str(a), str(b)])
    assert done.exit_code == 1, done.output
    clean(done)
    assert "\\x1b]0;pwned\\x07" in done.stdout and "\\u202eevil.exe" in done.stdout
    assert "ok\\rerror: fake" in done.stdout
    # Each name stays on its own line: one line per added call, then the summary.
    assert len(done.stdout.splitlines()) == len(HOSTILE) + 1


def test_view_and_its_summary_with_a_hostile_file_name(tmp_path: Path) -> None:
    path = trace_file(tmp_path / "t\x1b[2J\u202e.json", ["a"])
    out = tmp_path / "o\x1b]0;x\x07.html"
    done = CliRunner().invoke(cli, ["view", str(path), "--html", str(out)])
    assert done.exit_code == 0, done.output
    clean(done)
    assert out.is_file() and "o\\x1b]0;x\\x07.html" in done.stderr


@pytest.mark.parametrize("bad", HOSTILE)
def test_error_lines_from_file_contents_are_escaped_and_short(tmp_path: Path, bad: str) -> None:
    """A trace id holding control characters: one escaped `error:` line of at most 200."""
    span = {
        "traceId": bad * 50,
        "spanId": "00f067aa0ba902b7",
        "name": "x",
        "startTimeUnixNano": "1",
        "endTimeUnixNano": "2",
    }
    path = tmp_path / "spans.jsonl"
    path.write_text(
        json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}) + "\n",
        encoding="utf-8",
    )
    done = CliRunner().invoke(cli, ["view", str(path)])
    assert done.exit_code == 2
    clean(done)
    (line,) = done.stderr.splitlines()
    assert line.startswith("error: ") and len(line) <= LINE_LIMIT and "traceId" in line


@pytest.mark.slow
def test_run_prints_only_safe_lines_for_a_hostile_script(tmp_path: Path) -> None:
    """A real `flow-xray run` of a script whose name and calls are hostile, exporting to a
    dead endpoint (the loss warning too): flow-xray's own lines act on nothing."""
    script = tmp_path / "job\x1b[2J.py"
    script.write_text(
        "from flow_xray import trace\n"
        f"for name in {HOSTILE!r}:\n"
        "    trace(name=name)(lambda: None)()\n",
        encoding="utf-8",
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    done = subprocess.run(
        [sys.executable, "-m", "flow_xray", "run", "--json", "t\u202e.json", str(script)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        errors="surrogateescape",
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert not any(acts_on_a_terminal(c) for c in done.stderr.replace("\n", ""))
    assert "job\\x1b[2J_trace.html" in done.stderr
    assert len(TraceResult.load(tmp_path / "t\u202e.json")) == len(HOSTILE)
