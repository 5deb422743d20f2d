"""Every process-wide change flow-xray makes, each with install / uninstall, in one registry.

A *patch* describes one change to something the whole process shares — a
class or module attribute (`AttributePatch`: ``ProxyTracer._tracer``,
``subprocess.Popen.__init__``, ``os.execv``, ...; `AdoptedWrapper` for the one
made before flow-xray loads), a logger's filters (`LoggerFilter`), an
`atexit` entry (`AtExit`), fork hooks (`ForkHook`) — and how to undo it. A
patch is a plain description; this module alone keeps which patches are
installed (by name) and what they replaced. `install` and
`uninstall` are idempotent; `uninstall_all`, which ``flow_xray.shutdown()``
calls after flushing, undoes every installed patch, newest first. Whatever
needs a patch installs it again when next needed, so a capture after
shutdown works as before.

Fork hooks cannot be unregistered from `os`: one dispatcher is registered
with `os.register_at_fork` when the first fork hook is installed, and it calls
the installed hooks in the order `os.register_at_fork` itself uses (``before``
newest first, the ``after`` ones oldest first); uninstalling a hook takes it
out of the dispatcher's lists. A hook that raises is logged and the others
still run.

Example::

    patches.install(AtExit("flow-xray exporters", shutdown))
    patches.uninstall_all()  # atexit no longer calls shutdown
"""

from __future__ import annotations

import atexit
import logging
import os
import threading
from collections.abc import Callable, Mapping
from typing import Any, Final, cast

logger = logging.getLogger("flow_xray")

_MISSING: Final = object()


class Patch:
    """One process-wide change; subclasses say how to apply it (`apply`) and undo it (`restore`).

    ``name`` identifies the change: installing a second patch of an installed
    patch's name changes nothing.
    """

    def __init__(self, name: str) -> None:
        self.name = name

    def apply(self) -> object | None:
        """Make the change; return what `restore` needs (None: it cannot apply here)."""
        raise NotImplementedError

    def restore(self, applied: object) -> None:
        """Undo the change, given what `apply` returned."""
        raise NotImplementedError


class AttributePatch(Patch):
    """Replace attributes of one object (a class, a module) with wrappers of their originals.

    ``target`` returns the object (called at install time, so a module such as
    ``multiprocessing.pool`` loads only then); ``wrappers`` maps each attribute
    to a function taking the original and returning its replacement, or None
    when this Python's original is not what the wrapper expects (then nothing
    is changed). Uninstalling puts each original object back, unless another
    library has replaced the attribute since (its replacement is left alone).
    """

    def __init__(
        self,
        name: str,
        target: Callable[[], object],
        wrappers: Mapping[str, Callable[[Any], Any]],
    ) -> None:
        super().__init__(name)
        self.target = target
        self.wrappers = wrappers

    def apply(self) -> object | None:
        owner = self.target()
        own = vars(owner)
        changes: list[tuple[str, object, object]] = []
        for attribute, wrap in self.wrappers.items():
            original = own.get(attribute, _MISSING)
            replacement = wrap(getattr(owner, attribute) if original is _MISSING else original)
            if replacement is None:
                return None
            changes.append((attribute, original, replacement))
        for attribute, _, replacement in changes:
            setattr(owner, attribute, replacement)
        return owner, changes

    def restore(self, applied: object) -> None:
        owner, changes = cast("tuple[object, list[tuple[str, object, object]]]", applied)
        for attribute, original, replacement in changes:
            if vars(owner).get(attribute) is not replacement:
                logger.debug("flow-xray: %s.%s was replaced since; left as is", owner, attribute)
            elif original is _MISSING:
                delattr(owner, attribute)  # it was inherited: the class's own entry goes
            else:
                setattr(owner, attribute, original)


class AdoptedWrapper(Patch):
    """A wrapper installed before flow-xray could load, taken into the registry.

    The attribute ``attribute`` of ``target()`` is adopted when it carries the
    ``marker`` attribute; uninstalling puts back its ``__wrapped__`` (the
    original it wraps). Installing again after that changes nothing: the
    wrapper is gone.
    """

    def __init__(
        self, name: str, target: Callable[[], object], attribute: str, marker: str
    ) -> None:
        super().__init__(name)
        self.target = target
        self.attribute = attribute
        self.marker = marker

    def apply(self) -> object | None:
        owner = self.target()
        wrapper = vars(owner).get(self.attribute)
        if not getattr(wrapper, self.marker, False) or not hasattr(wrapper, "__wrapped__"):
            return None
        return owner, wrapper

    def restore(self, applied: object) -> None:
        owner, wrapper = cast("tuple[object, Any]", applied)
        original = wrapper.__wrapped__
        if vars(owner).get(self.attribute) is wrapper:
            setattr(owner, self.attribute, original)


class LoggerFilter(Patch):
    """Put ``log_filter`` first on the loggers named ``loggers``.

    First, because a logger's filters run in order and the OTLP exporters' own
    ``DuplicateFilter`` drops a record whose message template repeats within 20 s:
    behind it, a second export's error would never reach ``log_filter``.
    """

    def __init__(self, name: str, loggers: tuple[str, ...], log_filter: logging.Filter) -> None:
        super().__init__(name)
        self.loggers = loggers
        self.log_filter = log_filter

    def apply(self) -> object | None:
        for name in self.loggers:
            filters = logging.getLogger(name).filters
            if self.log_filter not in filters:
                filters.insert(0, self.log_filter)
        return True

    def restore(self, applied: object) -> None:
        for name in self.loggers:
            logging.getLogger(name).removeFilter(self.log_filter)


class AtExit(Patch):
    """Have `atexit` call ``function`` when the interpreter exits."""

    def __init__(self, name: str, function: Callable[[], object]) -> None:
        super().__init__(name)
        self.function = function

    def apply(self) -> object | None:
        atexit.register(self.function)
        return True

    def restore(self, applied: object) -> None:
        atexit.unregister(self.function)


class ForkHook(Patch):
    """Callables run around ``os.fork()``, as `os.register_at_fork` would run them."""

    def __init__(
        self,
        name: str,
        *,
        before: Callable[[], object] | None = None,
        after_in_parent: Callable[[], object] | None = None,
        after_in_child: Callable[[], object] | None = None,
    ) -> None:
        super().__init__(name)
        self.before = before
        self.after_in_parent = after_in_parent
        self.after_in_child = after_in_child

    def apply(self) -> object | None:
        global _fork_hooks, _dispatching
        if not _dispatching and hasattr(os, "register_at_fork"):
            os.register_at_fork(
                before=_before_fork,
                after_in_parent=_after_fork_in_parent,
                after_in_child=_after_fork_in_child,
            )
            _dispatching = True
        _fork_hooks = (*_fork_hooks, self)
        return True

    def restore(self, applied: object) -> None:
        global _fork_hooks
        _fork_hooks = tuple(hook for hook in _fork_hooks if hook is not self)


# --- the registry ------------------------------------------------------------

# name -> (the patch, what its `apply` returned), in install order.
_installed: dict[str, tuple[Patch, object]] = {}
_lock = threading.RLock()
_fork_hooks: tuple[ForkHook, ...] = ()
_dispatching = False


def install(patch: Patch) -> bool:
    """Apply ``patch`` unless a patch of its name is installed; False when it cannot apply here.

    A patch that raises while applying is logged and left uninstalled (False).
    """
    if patch.name in _installed:  # the common case, without the lock
        return True
    with _lock:
        if patch.name in _installed:
            return True
        try:
            applied = patch.apply()
        except Exception:  # an unusual stdlib or library must not stop the rest from working
            logger.debug("flow-xray: could not install %s", patch.name, exc_info=True)
            return False
        if applied is None:
            logger.debug("flow-xray: %s does not apply to this Python", patch.name)
            return False
        _installed[patch.name] = (patch, applied)
    return True


def uninstall(name: str) -> None:
    """Undo the patch named ``name``, if installed."""
    with _lock:
        entry = _installed.pop(name, None)
        if entry is None:
            return
        patch, applied = entry
        try:
            patch.restore(applied)
        except Exception:  # undoing must never raise (it runs at exit too)
            logger.debug("flow-xray: could not uninstall %s", name, exc_info=True)


def is_installed(name: str) -> bool:
    """Whether the patch named ``name`` is installed."""
    return name in _installed


def installed() -> tuple[str, ...]:
    """The names of the installed patches, in install order."""
    return tuple(_installed)


def fork_hooks() -> tuple[str, ...]:
    """The names of the fork hooks the dispatcher runs, in install order."""
    return tuple(hook.name for hook in _fork_hooks)


def uninstall_all() -> None:
    """Undo every installed patch, newest first (``flow_xray.shutdown()`` calls this)."""
    with _lock:
        for name in reversed(tuple(_installed)):
            uninstall(name)


# --- the fork dispatcher -------------------------------------------------------


def _run(hook: ForkHook, step: Callable[[], object] | None) -> None:
    if step is None:
        return
    try:
        step()
    except Exception:
        logger.debug("flow-xray: fork hook %s failed", hook.name, exc_info=True)


def _before_fork() -> None:
    for hook in reversed(_fork_hooks):
        _run(hook, hook.before)


def _after_fork_in_parent() -> None:
    for hook in _fork_hooks:
        _run(hook, hook.after_in_parent)


def _after_fork_in_child() -> None:
    global _lock
    _lock = threading.RLock()  # another thread may have held it at the fork
    for hook in _fork_hooks:
        _run(hook, hook.after_in_child)
