"""Atomic file writes: a reader never sees half a file, and a failure leaves none."""

from __future__ import annotations

import os


def write_text_atomic(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` as UTF-8 (``\\n`` line ends) through a temporary file and a rename.

    Raises:
        OSError: the file cannot be written; nothing is left behind.
    """
    target = os.fspath(path)
    tmp = f"{target}.tmp{os.getpid()}"
    try:
        with open(tmp, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
        os.replace(tmp, target)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise
