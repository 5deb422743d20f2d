"""0.3.x's static context, keyed by ``__qualname__``: `QualnameIndex` and `merge_by_qualname`.

0.3.6 shipped ``flow_xray.static_index`` (``build_index(paths)``: functions by
``__qualname__``, the ``(caller, callee)`` calls, four queries) and
``flow_xray.merge`` (``merge_trace_with_static``: each function executed or
not, each edge seen at run time, in the source, or both). Those modules are
thin names over this one, and this one is a view of the real static context:
files are read and calls resolved by `StaticIndex.build` (`scan`, `resolve`),
a run's calls matched to functions by `flow_xray.analysis.static.merge`. What
is here is 0.3's key space -- ``Class.method`` without the module,
``<module>`` for a module's own code, a callee the source does not resolve by
its last name (``obj.execute()`` -> ``execute``) -- and 0.3's queries over it.
No OpenTelemetry here.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from flow_xray.analysis.static.functions import (
    MODULE_CODE,
    CallSite,
    Decorator,
    FunctionInfo,
    growing,
)
from flow_xray.analysis.static.index import SKIPPED_DIRS, StaticIndex
from flow_xray.analysis.static.merge import TraceLike, merge

MODULE_CALLER = MODULE_CODE  # 0.3's caller of a module's top-level calls (and of roots)
ENTRY_POINTS = ("main", "__main__")
_DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")


@dataclass
class FuncDef:
    """One function or method as 0.3 listed it: ``file`` relative to the folder indexed
    (or to a file's own folder), ``lineno`` the ``def`` line, ``decorators`` by last name."""

    qualname: str
    name: str
    file: str
    lineno: int
    decorators: list[str] = field(default_factory=list)


class QualnameIndex:
    """0.3.6's ``StaticIndex``: ``functions`` by qualname, ``calls``, ``files``, four queries.

    Made by `build_index`; ``QualnameIndex()`` is an empty one to fill by hand
    (``index.functions[q] = FuncDef(...)``, ``index.calls = {(a, b)}``).
    ``source`` is the `StaticIndex` it was built from (None for one filled by
    hand): the viewer and `merge_by_qualname` use it, so they see what the
    source shows (module paths, lines, calls through untraced helpers);
    changing ``functions`` / ``calls`` of a built index changes only the queries.
    """

    def __init__(self, source: StaticIndex | None = None, roots: Sequence[str] = ()) -> None:
        self.functions: dict[str, FuncDef] = {}
        self.calls: set[tuple[str, str]] = set()
        self.files: set[str] = set()
        self.source = source
        if source is not None:
            _project(self, source, roots)

    def callers(self, name: str) -> list[str]:
        """Functions with a call to ``name`` (a qualname), sorted."""
        return sorted({caller for caller, callee in self.calls if callee == name})

    def callees(self, name: str) -> list[str]:
        """What ``name`` calls: functions of the index by qualname, anything else by its
        last name (``print``, ``dumps``), sorted."""
        return sorted({callee for caller, callee in self.calls if caller == name})

    def blast_radius(self, name: str) -> list[str]:
        """Every function that reaches ``name`` through calls (its callers, theirs, ...), sorted."""
        callers_of: dict[str, set[str]] = {}
        for caller, callee in self.calls:
            callers_of.setdefault(callee, set()).add(caller)
        seen: set[str] = set()
        queue = [name]
        for current in growing(queue):
            for caller in sorted(callers_of.get(current, ())):
                if caller not in seen:
                    seen.add(caller)
                    queue.append(caller)
        seen.discard(name)
        return sorted(seen)

    def unused(self, entry_points: Iterable[str] = ENTRY_POINTS) -> list[str]:
        """Functions nothing in the index calls or passes as a value, but for ``entry_points``
        (qualnames or plain names). Candidates, not a verdict: a dynamic call is not seen."""
        entry = set(entry_points)
        used = {callee for _, callee in self.calls} | _referenced(self.source) | entry
        return sorted(q for q, f in self.functions.items() if q not in used and f.name not in entry)

    def static_index(self) -> StaticIndex:
        """The `StaticIndex` the viewer shows: ``source``, or for an index filled by hand
        one made from its ``functions`` and ``calls`` (every function counted as traced)."""
        if self.source is not None:
            return self.source
        return StaticIndex(_functions_of(self.functions, self.calls))


def build_index(
    paths: Iterable[str | os.PathLike[str]], *, exclude_dirs: Iterable[str] = SKIPPED_DIRS
) -> QualnameIndex:
    """0.3.6's ``build_index``: index the ``.py`` files under ``paths`` (files or folders).

    Folders are walked recursively, skipping hidden folders and those named in
    ``exclude_dirs``; a file that does not parse is left out (it is in
    ``files``, and in ``source.skipped`` with the reason).

    Raises:
        SourceError: a path does not exist or is neither a ``.py`` file nor a folder.

    Example::

        index = build_index(["agent.py"])
        index.callers("Agent.plan"), index.blast_radius("call_database"), index.unused()
    """
    paths = list(paths)
    source = StaticIndex.build(paths, skip_dirs=exclude_dirs)
    roots = [os.path.abspath(p if os.path.isdir(p) else os.path.dirname(p) or ".") for p in paths]
    return QualnameIndex(source, roots)


def as_static_index(index: StaticIndex | QualnameIndex) -> StaticIndex:
    """The `StaticIndex` of either kind of index (``to_html(static_index=...)`` takes both)."""
    return index.static_index() if isinstance(index, QualnameIndex) else index


@dataclass(frozen=True)
class MergedNode:
    """A function by 0.3's name: whether it ran (``executed``) and is in the index (``static``)."""

    name: str
    executed: bool
    static: bool

    @property
    def status(self) -> str:
        """``"executed"``, or ``"reachable-but-not-executed"`` for a function only the
        source has."""
        return "executed" if self.executed else "reachable-but-not-executed"


@dataclass(frozen=True)
class MergedEdge:
    """A call ``caller -> callee``: seen at run time (``runtime``), in the source (``static``)."""

    caller: str
    callee: str
    runtime: bool
    static: bool

    @property
    def status(self) -> str:
        """``"both"``, ``"runtime-only"`` or ``"static-only"``."""
        if self.runtime and self.static:
            return "both"
        return "runtime-only" if self.runtime else "static-only"


@dataclass(frozen=True)
class MergedGraph:
    """0.3.6's ``merge_trace_with_static`` result: nodes by name, edges by ``(caller, callee)``."""

    nodes: dict[str, MergedNode]
    edges: dict[tuple[str, str], MergedEdge]


def merge_by_qualname(trace: TraceLike, index: QualnameIndex) -> MergedGraph:
    """0.3.6's ``merge_trace_with_static``: one run and the source, joined by function.

    A call is the function `flow_xray.analysis.static.merge` matches it to (by
    its span's file and line, else its qualname; then named by that
    function's qualname, whatever the span was called), or its span name when
    it matches none. Nodes: every function that ran, and every one of the
    index. Edges: every parent -> child call of the run (``<module>`` -> each
    root) and every call of the index; an edge of the run is ``static`` when
    the index has it or the source makes that call through untraced helpers.
    """
    source = index.static_index()
    context = merge(source, trace)
    functions = source.functions

    def key(node_id: str, name: str) -> str:
        matched = context.functions_of.get(node_id)
        return name if matched is None else functions[matched].qualname

    roots = getattr(trace, "roots", None)
    runtime: set[tuple[str, str]] = set()
    keys: dict[str, str] = {}
    stack = [(MODULE_CALLER, root) for root in (roots if roots is not None else trace)]
    while stack:
        caller, node = stack.pop()
        here = keys[node.id] = key(node.id, node.name)
        runtime.add((caller, here))
        stack.extend((here, child) for child in node.children)
    confirmed = {(keys[e.parent], keys[e.child]) for e in context.edges if e.confirmed}
    executed = set(keys.values())
    nodes = {
        name: MergedNode(name, name in executed, name in index.functions)
        for name in sorted(executed | set(index.functions))
    }
    edges = {
        pair: MergedEdge(*pair, pair in runtime, pair in index.calls or pair in confirmed)
        for pair in sorted(runtime | index.calls)
    }
    return MergedGraph(nodes, edges)


def _project(view: QualnameIndex, source: StaticIndex, roots: Sequence[str]) -> None:
    """Fill ``view`` with ``source`` in 0.3's key space (the first of two same qualnames wins)."""
    functions = source.functions
    named = {k: MODULE_CALLER if f.kind == "module" else f.qualname for k, f in functions.items()}
    view.files.update(_label(path, roots) for path, _ in source.skipped)
    for key, f in functions.items():
        view.files.add(_label(f.path, roots))
        if f.kind != "module" and f.qualname not in view.functions:
            view.functions[f.qualname] = FuncDef(
                f.qualname,
                f.qualname.rsplit(".", 1)[-1],
                _label(f.path, roots),
                f.line,
                [_last_name(d.text.split("(", 1)[0]) for d in f.decorators],
            )
        for site in f.calls:
            callee = named[site.target] if site.target is not None else _bare(site)
            if callee:
                view.calls.add((named[key], callee))


def _bare(site: CallSite) -> str | None:
    """An unresolved callee by its last name, as 0.3 recorded it; None for ``t[k]()`` and
    other calls of no name."""
    name = site.name or (site.text if _DOTTED.fullmatch(site.text) else None)
    return _last_name(name) if name else None


def _last_name(dotted: str) -> str:
    return dotted.strip().rsplit(".", 1)[-1]


def _label(path: str, roots: Sequence[str]) -> str:
    """``path`` relative to the first of ``roots`` it is under (as 0.3 showed files)."""
    for root in roots:
        if path.startswith(root.rstrip(os.sep) + os.sep):
            return os.path.relpath(path, root)
    return path


def _referenced(source: StaticIndex | None) -> set[str]:
    """Qualnames of the functions the source passes as values (callbacks, tables)."""
    if source is None:
        return set()
    functions = source.functions
    return {functions[r.target].qualname for f in functions.values() for r in f.references}


def _functions_of(
    functions: Mapping[str, FuncDef], calls: Iterable[tuple[str, str]]
) -> dict[str, FunctionInfo]:
    """A hand-filled 0.3 index as `FunctionInfo`s (qualnames as keys, every one traced)."""
    sites: dict[str, list[CallSite]] = {}
    for caller, callee in sorted(calls):
        if caller in functions:
            target = callee if callee in functions else None
            site = CallSite(functions[caller].lineno, callee, callee, target, False)
            sites.setdefault(caller, []).append(site)
    return {
        q: FunctionInfo(
            name=q,
            module=Path(f.file).stem,
            qualname=q,
            path=f.file,
            line=f.lineno,
            first_line=f.lineno,
            end_line=f.lineno,
            kind="function",
            is_async=False,
            decorators=tuple(Decorator(d, d) for d in f.decorators),
            calls=tuple(sites.get(q, ())),
            references=(),
            traced=True,
            span_name=q,
            span_kind="chain",
        )
        for q, f in functions.items()
    }
