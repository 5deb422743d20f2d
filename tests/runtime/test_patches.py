"""The patch registry: install / uninstall by name, idempotent, originals put back."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import textwrap
import types
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from flow_xray.runtime import patches


class Target:
    """A stand-in for a class flow-xray patches."""

    def greet(self) -> str:
        return "hello"


class Child(Target):
    """Inherits ``greet``: a patch of it must not leave an entry behind."""


def _loud(original: Callable[..., str]) -> Callable[..., str]:
    def greet(self: Any) -> str:
        return original(self).upper()

    return greet


@pytest.fixture
def clean() -> Iterator[None]:
    """Whatever a test installs under a ``test-`` name is uninstalled afterwards."""
    yield
    for name in patches.installed():
        if name.startswith("test-"):
            patches.uninstall(name)


def test_an_attribute_patch_installs_and_uninstalls_to_the_original_object(clean: None) -> None:
    """Installing replaces the attribute; uninstalling puts the very same object back."""
    original = Target.__dict__["greet"]
    patch = patches.AttributePatch("test-greet", lambda: Target, {"greet": _loud})
    assert patches.install(patch)
    assert Target().greet() == "HELLO" and patches.is_installed("test-greet")
    patches.uninstall("test-greet")
    assert Target.__dict__["greet"] is original and not patches.is_installed("test-greet")


def test_installing_twice_changes_nothing_the_second_time(clean: None) -> None:
    """A second install (or another patch of the same name) does not wrap the wrapper."""
    patch = patches.AttributePatch("test-greet", lambda: Target, {"greet": _loud})
    assert patches.install(patch)
    installed = Target.__dict__["greet"]
    assert patches.install(patch)
    assert patches.install(patches.AttributePatch("test-greet", lambda: Target, {"greet": _loud}))
    assert Target.__dict__["greet"] is installed and Target().greet() == "HELLO"


def test_uninstalling_twice_or_unknown_names_is_harmless(clean: None) -> None:
    """Uninstall is idempotent, and a name never installed is ignored."""
    original = Target.__dict__["greet"]
    patches.install(patches.AttributePatch("test-greet", lambda: Target, {"greet": _loud}))
    patches.uninstall("test-greet")
    patches.uninstall("test-greet")
    patches.uninstall("test-never-installed")
    assert Target.__dict__["greet"] is original


def test_a_patch_of_an_inherited_attribute_leaves_no_entry_behind(clean: None) -> None:
    """The subclass had no ``greet`` of its own before, and has none after."""
    patches.install(patches.AttributePatch("test-child", lambda: Child, {"greet": _loud}))
    assert "greet" in vars(Child) and Child().greet() == "HELLO"
    patches.uninstall("test-child")
    assert "greet" not in vars(Child) and Child().greet() == "hello"


def test_a_patch_that_does_not_apply_changes_nothing(clean: None) -> None:
    """A wrapper refusing this Python's original (None) leaves every attribute as it was."""
    original = Target.__dict__["greet"]
    refusing = patches.AttributePatch(
        "test-refused", lambda: Target, {"greet": _loud, "other": lambda original: None}
    )
    assert not patches.install(refusing)
    assert Target.__dict__["greet"] is original and not patches.is_installed("test-refused")


def test_a_replacement_made_by_someone_else_since_is_left_alone(clean: None) -> None:
    """Uninstalling does not undo another library's later patch of the same attribute."""
    original = Target.__dict__["greet"]
    patches.install(patches.AttributePatch("test-greet", lambda: Target, {"greet": _loud}))

    def theirs(self: Any) -> str:
        return "theirs"

    Target.greet = theirs  # type: ignore[method-assign]
    try:
        patches.uninstall("test-greet")
        assert Target.__dict__["greet"] is theirs
    finally:
        Target.greet = original  # type: ignore[method-assign]


def test_uninstall_all_undoes_every_patch(clean: None) -> None:
    """``uninstall_all`` (what shutdown calls) leaves nothing installed."""
    original = Target.__dict__["greet"]
    patches.install(patches.AttributePatch("test-greet", lambda: Target, {"greet": _loud}))
    patches.install(patches.AttributePatch("test-child", lambda: Child, {"greet": _loud}))
    patches.uninstall_all()
    assert patches.installed() == ()
    assert Target.__dict__["greet"] is original and "greet" not in vars(Child)


def test_a_logger_filter_is_added_and_removed(clean: None) -> None:
    """`LoggerFilter` adds its filter to each named logger, and takes it off again."""
    quiet = logging.Filter("nothing-passes")
    names = ("tests.runtime.a", "tests.runtime.b")
    patches.install(patches.LoggerFilter("test-filter", names, quiet))
    patches.install(patches.LoggerFilter("test-filter", names, quiet))
    assert [logging.getLogger(n).filters for n in names] == [[quiet], [quiet]]
    patches.uninstall("test-filter")
    assert [logging.getLogger(n).filters for n in names] == [[], []]


_EXIT_SCRIPT = textwrap.dedent(
    """
    import atexit, json
    from flow_xray.runtime import patches
    from flow_xray.sdk import provider

    atexit.register(lambda: print(json.dumps(patches.installed())))  # runs last
    patches.install(provider._SHUTDOWN_AT_EXIT)
    patches.install(provider._SHUTDOWN_AT_EXIT)
    patches.install(patches.AtExit("gone", lambda: print("gone ran")))
    patches.uninstall("gone")
    kept = patches.AtExit("kept", lambda: print("kept ran"))
    patches.install(kept)
    patches.install(kept)
    """
)


def test_atexit_entries_run_once_and_not_at_all_once_uninstalled() -> None:
    """`AtExit` registers its function once; uninstalled, it never runs; the exit flush
    (``configure``'s shutdown) runs once and leaves no patch installed. Fresh interpreter."""
    out = subprocess.run(
        [sys.executable, "-c", _EXIT_SCRIPT], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["kept ran", "[]"]


def test_an_adopted_wrapper_is_undone_to_what_it_wraps(clean: None) -> None:
    """A marked wrapper made before flow-xray loaded is adopted; uninstalling unwraps it."""

    def original() -> str:
        return "original"

    def wrapper() -> str:
        return "wrapped"

    wrapper.__wrapped__ = original  # type: ignore[attr-defined]
    wrapper._test_marker = True  # type: ignore[attr-defined]
    module = types.ModuleType("stand_in")
    module.call = wrapper  # type: ignore[attr-defined]
    patch = patches.AdoptedWrapper("test-adopted", lambda: module, "call", "_test_marker")
    assert patches.install(patch) and module.call is wrapper  # type: ignore[attr-defined]
    patches.uninstall("test-adopted")
    assert module.call is original  # type: ignore[attr-defined]
    assert not patches.install(patch)  # nothing marked left to adopt


_FORK_SCRIPT = textwrap.dedent(
    """
    import json, os
    from flow_xray.runtime import patches

    log = []
    def hook(name):
        return patches.ForkHook(
            name,
            before=lambda: log.append(f"{name}:before"),
            after_in_parent=lambda: log.append(f"{name}:parent"),
            after_in_child=lambda: log.append(f"{name}:child"),
        )

    def boom():
        raise RuntimeError("a failing hook")

    patches.install(hook("first"))
    patches.install(patches.ForkHook("failing", before=boom, after_in_child=boom))
    patches.install(hook("second"))
    patches.install(hook("second"))
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.write(write, json.dumps(log).encode())
        os._exit(0)
    os.waitpid(pid, 0)
    child = json.loads(os.read(read, 65536))
    patches.uninstall("second")
    del log[:]
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    print(json.dumps({"child": child, "after_uninstall": log}))
    """
)


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="no os.fork here")
def test_fork_hooks_run_in_os_order_and_uninstall_empties_them() -> None:
    """``before`` newest first, ``after`` oldest first, a failing hook skipped; uninstall stops it.

    Run in a fresh interpreter: forking the test process itself is not safe.
    """
    out = subprocess.run(
        [sys.executable, "-c", _FORK_SCRIPT], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    seen = json.loads(out.stdout)
    assert seen["child"] == ["second:before", "first:before", "first:child", "second:child"]
    assert seen["after_uninstall"] == ["first:before", "first:parent"]
