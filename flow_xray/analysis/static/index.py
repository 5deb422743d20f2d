"""A static call graph of Python source, built with `ast` (nothing is imported or run).

`StaticIndex.build(paths)` reads every ``.py`` file under ``paths`` and records
each function and method (`flow_xray.analysis.static.functions`). How files are
read and calls resolved is in `flow_xray.analysis.static.scan` and
`flow_xray.analysis.static.resolve`; merging the index with a trace (executed
marks, ghost nodes, runtime-only edges) in `flow_xray.analysis.static.merge`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from flow_xray.analysis.static.functions import CallGraph
from flow_xray.analysis.static.merge import StaticContext, TraceLike, merge
from flow_xray.analysis.static.resolve import index_files
from flow_xray.errors import SourceError

SKIPPED_DIRS = frozenset(
    {"__pycache__", "node_modules", "site-packages", "build", "dist", "venv", ".venv"}
)


@dataclass(frozen=True)
class StaticIndex(CallGraph):
    """Functions of some Python source by qualified name, and the calls between them.

    Example::

        index = StaticIndex.build(["src/shop"])
        index.callers("fallback_model")   # ['shop.agent.Agent.answer']
        index.unused(result)              # traced and reachable, but never ran
        result.to_html("run.html", static=index)
    """

    @classmethod
    def build(
        cls, paths: Iterable[str | os.PathLike[str]], skip_dirs: Iterable[str] = SKIPPED_DIRS
    ) -> StaticIndex:
        """Index every ``.py`` file under ``paths`` (files or folders).

        Folders are walked recursively, skipping hidden ones and those named
        in ``skip_dirs`` (by default ``__pycache__`` and virtualenv/build
        folders). A file that cannot be read or parsed is listed in
        ``skipped`` rather than failing the whole index.

        Raises:
            SourceError: a path does not exist or is neither a ``.py`` file nor a folder.
        """
        files: dict[str, None] = {}
        skip = frozenset(skip_dirs)
        for path in paths:
            files.update(dict.fromkeys(_python_files(Path(path), skip)))
        functions, skipped = index_files(list(files))
        return cls(functions, skipped)

    def merge(self, trace: TraceLike) -> StaticContext:
        """Match a run's calls to this index: executed marks, ghosts, runtime-only edges.

        ``trace`` is a `TraceResult` (or any iterable of its roots' nodes).
        """
        return merge(self, trace)

    def unused(
        self, trace: TraceLike, paths: Iterable[str | os.PathLike[str]] | None = None
    ) -> list[str]:
        """Traced functions reachable from a call that ran in ``trace`` but never run in it.

        Only traced functions can be known not to have run (an untraced one
        leaves no span either way). ``paths`` limits the answer to functions
        defined under those files or folders. Sorted by file and line.
        """
        names = self.merge(trace).unused
        if paths is None:
            return list(names)
        roots = [os.path.abspath(p) for p in paths]
        return [n for n in names if _under(self.functions[n].path, roots)]


def unused(paths: Iterable[str | os.PathLike[str]], trace: TraceLike) -> list[str]:
    """`StaticIndex.unused` in one call: index ``paths``, then compare with ``trace``.

    Example::

        with trace.capture() as result:
            shop.run_agent("hello")
        unused(["src/shop"], result)   # ['shop.agent.fallback_model']
    """
    return StaticIndex.build(paths).unused(trace)


def _python_files(path: Path, skip: frozenset[str] = SKIPPED_DIRS) -> Iterator[str]:
    if path.is_file():
        if path.suffix != ".py":
            raise SourceError(f"{path} is not a Python file (.py)")
        yield os.path.abspath(path)
        return
    if not path.is_dir():
        raise SourceError(f"no such file or folder: {path}")
    for folder, dirs, names in os.walk(path):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in skip)
        for name in sorted(names):
            if name.endswith(".py"):
                yield os.path.abspath(os.path.join(folder, name))


def _under(path: str, roots: Iterable[str]) -> bool:
    return any(path == root or path.startswith(root.rstrip(os.sep) + os.sep) for root in roots)
