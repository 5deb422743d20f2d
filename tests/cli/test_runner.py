"""The runner library: targets resolved up front, run as __main__, process state restored."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from flow_xray.cli import runner
from flow_xray.errors import ScriptError


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_argv_and_sys_path_are_restored(tmp_path: Path) -> None:
    """After the run, sys.argv and sys.path are what they were, even if the script changed them."""
    script = write(
        tmp_path / "mess.py", "import sys\nsys.path.append('x')\nsys.argv[:] = ['changed']\n"
    )
    argv, path = list(sys.argv), list(sys.path)
    runner.run_target(runner.resolve_script(str(script), ["a"]))
    assert (sys.argv, sys.path) == (argv, path)


def test_script_sees_its_argv_and_folder(tmp_path: Path) -> None:
    """While it runs, argv is [script, *args] and the script's folder is sys.path[0]."""
    script = write(
        tmp_path / "show.py",
        "import sys\nseen = (list(sys.argv), sys.path[0])\nraise SystemExit(repr(seen))\n",
    )
    outcome = runner.run_target(runner.resolve_script(str(script), ["--flag", "v"]))
    assert outcome.exit_message == repr(([str(script), "--flag", "v"], str(tmp_path)))


def test_exit_none_is_success(tmp_path: Path) -> None:
    """sys.exit() with no code ends the run with status 0 and no message."""
    script = write(tmp_path / "bye.py", "import sys\nsys.exit()\n")
    outcome = runner.run_target(runner.resolve_script(str(script)))
    assert (outcome.exit_code, outcome.exit_message, outcome.exception) == (0, None, None)


def test_uncaught_exception_is_reported_not_raised(tmp_path: Path) -> None:
    """An exception from the script is in the outcome, its traceback starting in the script."""
    script = write(tmp_path / "boom.py", "def f():\n    raise KeyError('k')\n\nf()\n")
    outcome = runner.run_target(runner.resolve_script(str(script)))
    assert outcome.exit_code == 1 and isinstance(outcome.exception, KeyError)
    tb = outcome.exception.__traceback__
    files = []
    while tb is not None:
        files.append(tb.tb_frame.f_code.co_filename)
        tb = tb.tb_next
    assert files == [str(script), str(script)]


def test_keyboard_interrupt_is_status_130(tmp_path: Path) -> None:
    """KeyboardInterrupt in the script ends the run with status 130, marked interrupted."""
    script = write(tmp_path / "stop.py", "raise KeyboardInterrupt\n")
    outcome = runner.run_target(runner.resolve_script(str(script)))
    assert (outcome.exit_code, outcome.interrupted) == (130, True)


def test_package_without_main_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`-m pkg` for a package with no __main__ is a ScriptError, as with python -m."""
    (tmp_path / "lonelypkg").mkdir()
    write(tmp_path / "lonelypkg" / "__init__.py", "")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ScriptError, match=r"no lonelypkg\.__main__"):
        runner.resolve_module("lonelypkg")


def test_package_with_main_resolves_to_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`-m pkg` resolves to pkg/__main__.py, found from the working directory."""
    (tmp_path / "mainpkg").mkdir()
    write(tmp_path / "mainpkg" / "__init__.py", "")
    main = write(tmp_path / "mainpkg" / "__main__.py", "")
    monkeypatch.chdir(tmp_path)
    target = runner.resolve_module("mainpkg", ["x"])
    assert (target.path, target.args, target.stem) == (str(main), ("x",), "mainpkg")


def test_module_syntax_error_is_caught_up_front(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A module that does not compile is a ScriptError naming file and line."""
    write(tmp_path / "brokenmod.py", "\n\nif True\n")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ScriptError, match=r"brokenmod\.py:3: SyntaxError"):
        runner.resolve_module("brokenmod")


def test_working_directory_is_restored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A script that changes directory leaves the caller's working directory as it was."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()
    script = write(tmp_path / "move.py", "import os\nos.chdir('sub')\n")
    runner.run_target(runner.resolve_script(str(script)))
    assert Path.cwd() == tmp_path
