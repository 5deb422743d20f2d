"""A type checker sees a decorated function with its original signature."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SNIPPET = """
from typing import AsyncIterator, Iterator
from flow_xray import trace

@trace
def plain(a: int, b: str = "x") -> float:
    return 1.0

@trace(kind="tool", exclude=("b",))
def configured(a: int, *, b: bytes) -> list[str]:
    return []

@trace("named")
async def coro(q: str) -> int:
    return 1

@trace
def gen(n: int) -> Iterator[int]:
    yield n

reveal_type(plain)
reveal_type(configured)
reveal_type(coro)
reveal_type(gen)
"""


@pytest.mark.slow
def test_decorated_functions_keep_their_signatures(tmp_path: Path) -> None:
    """mypy reveals the undecorated types for every decorator form."""
    # The check runs this interpreter's mypy (`python -m mypy`); a mypy elsewhere on the
    # PATH would check against another environment, or not run at all.
    pytest.importorskip(
        "mypy", reason="mypy is not importable here (pip install -e '.[dev]' to run this check)"
    )
    source = tmp_path / "snippet.py"
    source.write_text(SNIPPET)
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", str(source)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    # mypy spells builtins with or without the module prefix depending on its version.
    out = proc.stdout.replace("builtins.", "")
    assert "def (a: int, b: str =) -> float" in out, out
    assert "def (a: int, *, b: bytes) -> list[str]" in out, out
    assert "def (q: str) -> typing.Coroutine[Any, Any, int]" in out, out
    assert "def (n: int) -> typing.Iterator[int]" in out, out
    assert "error" not in out.replace("Revealed type", ""), out
