"""What the static index records: functions, their call sites, and the call graph over them.

Each function and method is recorded by qualified name
(``package.module.Class.method``, nested functions as ``outer.<locals>.inner``,
module-level code as ``module.<module>``) with its decorators and its call
sites (`FunctionInfo`); `CallGraph` answers who calls whom. Built from source
by `flow_xray.analysis.static.index.StaticIndex`. No OpenTelemetry here.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

MODULE_CODE = "<module>"


@dataclass(frozen=True)
class CallSite:
    """One call in a function's body.

    ``name`` is the dotted name the callee resolves to, possibly outside the
    index (``json.dumps``); ``target`` is the index function the call runs (a
    class call runs ``__init__``); ``dynamic`` marks a callee computed at run
    time (``table[key](...)``, a parameter called as a function, ``getattr``)
    that the static pass cannot name.
    """

    line: int
    text: str
    name: str | None
    target: str | None
    dynamic: bool


@dataclass(frozen=True)
class Reference:
    """An index function used as a value: passed as a callback or stored in a table."""

    line: int
    target: str


@dataclass(frozen=True)
class Decorator:
    """A decorator as written (``text``) and the dotted name it resolves to, when known."""

    text: str
    name: str | None


@dataclass(frozen=True)
class FunctionInfo:
    """A function, a method or a module's top-level code.

    ``name`` is the index key (``module.qualname``) and ``qualname`` Python's
    ``__qualname__``. ``first_line`` is where the decorators start (what
    ``code.co_firstlineno`` and so the span's ``code.line.number`` report),
    ``line`` the ``def`` line. ``traced`` says whether a call writes a span;
    ``span_name`` / ``span_kind`` are the name and kind that span would have.
    """

    name: str
    module: str
    qualname: str
    path: str
    line: int
    first_line: int
    end_line: int
    kind: str  # function | method | classmethod | staticmethod | property | module
    is_async: bool
    decorators: tuple[Decorator, ...]
    calls: tuple[CallSite, ...]
    references: tuple[Reference, ...]
    traced: bool
    span_name: str
    span_kind: str

    @property
    def callees(self) -> tuple[str, ...]:
        """Index functions this one calls directly, in order of first call, each once."""
        return tuple(dict.fromkeys(c.target for c in self.calls if c.target is not None))


@dataclass(frozen=True)
class CallGraph:
    """Functions by qualified name, and the direct calls between them: what a
    `StaticIndex` knows, and all a run is matched against (`flow_xray.analysis.static.merge`)."""

    functions: Mapping[str, FunctionInfo]
    skipped: tuple[tuple[str, str], ...] = ()  # (path, reason) of files that did not parse

    def lookup(self, name: str) -> FunctionInfo:
        """The function called ``name``: a full name, a qualname, or a unique dotted suffix.

        Raises:
            KeyError: no function, or more than one, has that name.
        """
        if name in self.functions:
            return self.functions[name]
        found = [f for f in self.functions.values() if f.qualname == name]
        if not found:
            found = [f for f in self.functions.values() if f.name.endswith("." + name)]
        if len(found) == 1:
            return found[0]
        if not found:
            raise KeyError(f"no function {name!r} in the static index")
        raise KeyError(f"{name!r} is ambiguous: {', '.join(sorted(f.name for f in found))}")

    def callees(self, name: str) -> list[str]:
        """Index functions that ``name`` (see `lookup`) calls directly, in call order."""
        return list(self.lookup(name).callees)

    def callers(self, name: str) -> list[str]:
        """Index functions with a call site that runs ``name`` (see `lookup`), sorted."""
        target = self.lookup(name).name
        return sorted(f.name for f in self.functions.values() if target in f.callees)

    def reachable(self, start: Iterable[str]) -> dict[str, tuple[str, ...]]:
        """Every function reachable from the index keys ``start`` by direct calls.

        Returns:
            Each reached function with the shortest call path to it (a start
            first, the function last); a start appears only if it is reached again.
        """
        paths: dict[str, tuple[str, ...]] = {}
        queue: list[tuple[str, tuple[str, ...]]] = [(s, (s,)) for s in start if s in self.functions]
        for name, path in growing(queue):
            for callee in self.functions[name].callees:
                if callee not in paths:
                    paths[callee] = (*path, callee)
                    queue.append((callee, paths[callee]))
        return paths

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON: every function with its decorators and call sites."""
        return {
            "functions": [function_dict(f) for f in self.functions.values()],
            "skipped": [{"path": display_path(p), "reason": r} for p, r in self.skipped],
        }


def display_path(path: str) -> str:
    """``path`` relative to the working directory when under it, as spans record paths."""
    try:
        relative = os.path.relpath(path)
    except ValueError:  # another drive on Windows
        return path
    return path if relative.startswith(os.pardir) else relative


def function_dict(f: FunctionInfo) -> dict[str, Any]:
    """One function as plain data (``path`` shown as `display_path`)."""
    return {
        "name": f.name,
        "qualname": f.qualname,
        "module": f.module,
        "path": display_path(f.path),
        "line": f.line,
        "kind": f.kind,
        "traced": f.traced,
        "decorators": [d.text for d in f.decorators],
        "calls": [
            {"line": c.line, "text": c.text, "target": c.target, "dynamic": c.dynamic}
            for c in f.calls
        ],
    }


def module_name(path: str | os.PathLike[str]) -> str:
    """The dotted module name of a file: its stem under every enclosing package folder."""
    file = Path(path)
    parts = [] if file.name == "__init__.py" else [file.stem]
    folder = file.parent
    while (folder / "__init__.py").is_file() and folder.parent != folder:
        parts.insert(0, folder.name)
        folder = folder.parent
    return ".".join(parts) or file.parent.name


_Item = TypeVar("_Item")


def growing(queue: list[_Item]) -> Iterator[_Item]:
    """Iterate a list that grows while it is read (a breadth-first queue)."""
    head = 0
    while head < len(queue):
        yield queue[head]
        head += 1
