"""Tracebacks of a script flow-xray ran, as Python would show them for the script.

Frames from flow-xray's own modules (the runner, the ``@trace`` wrappers)
and from `runpy` are unlinked, so the traceback starts at the user's code;
the demo agent under `flow_xray.examples` counts as user code.
"""

from __future__ import annotations

import itertools
import os
import runpy
from types import TracebackType

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_EXAMPLES_DIR = os.path.join(_PACKAGE_DIR, "examples")
_RUNPY_FILE = runpy.run_path.__code__.co_filename


def _user_frames(tb: TracebackType | None) -> TracebackType | None:
    """Unlink flow-xray's and runpy's frames from ``tb``; keep ``tb`` if nothing else is left."""
    kept: list[TracebackType] = []
    node = tb
    while node is not None:
        if not _is_own_frame(node.tb_frame.f_code.co_filename):
            kept.append(node)
        node = node.tb_next
    if not kept:  # the error is flow-xray's own: show all of it
        return tb
    for current, following in itertools.pairwise(kept):
        current.tb_next = following
    kept[-1].tb_next = None
    return kept[0]


def _is_own_frame(filename: str) -> bool:
    if filename == _RUNPY_FILE:
        return True
    return _inside(filename, _PACKAGE_DIR) and not _inside(filename, _EXAMPLES_DIR)


def _inside(filename: str, folder: str) -> bool:
    return filename.startswith(folder + os.sep)


def trim_chain(exc: BaseException) -> BaseException:
    """Trim the traceback of ``exc`` and of every exception chained to it."""
    seen: set[int] = set()
    pending: list[BaseException] = [exc]
    while pending:
        current = pending.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        current.__traceback__ = _user_frames(current.__traceback__)
        pending.extend(e for e in (current.__cause__, current.__context__) if e is not None)
    return exc
