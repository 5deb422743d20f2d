"""A run's calls matched to a `StaticIndex`: what ran, what could have, which edges are real.

A trace node is the call of an index function when its span's ``code.file.path``
and ``code.line.number`` point at that function's definition (paths compared
by their trailing parts, so a relative path recorded at run time matches the
absolute one indexed), else when its ``code.function.name`` is the function's
qualname, else when its name is the span name of exactly one traced function.

From there:

- **executed**: every index function with at least one matched call;
- **ghosts**: traced functions that did not run though an executed function
  calls them (directly or through untraced helpers), one per (caller, function),
  hung under the caller's first call; ghosts' own unrun callees nest below them.
  Only traced functions can be known not to have run: an untraced one leaves no
  span either way;
- **edges**: for each parent/child pair of matched calls, whether the source has
  that call (``confirmed``) or not (``runtime-only``: dynamic dispatch, a
  callback, a call from code outside the index), with a short reason;
- **unused**: traced functions reachable from any executed one that never ran.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Union

from flow_xray import attributes as attr
from flow_xray.analysis.static.functions import CallGraph, FunctionInfo, display_path, growing

if TYPE_CHECKING:
    from flow_xray.tree.model import TraceNode, TraceResult

TraceLike = Union["TraceResult", Iterable["TraceNode"]]
GHOST_CAP = 500  # ghost nodes drawn at most; the rest are counted
CODE_FILE = attr.CODE_FILE
CODE_LINE = attr.CODE_LINE
CODE_FUNCTION = attr.CODE_FUNCTION


@dataclass(frozen=True)
class Ghost:
    """A traced function that did not run, drawn under the call that could have made it.

    ``parent`` is the id of a trace node, or of another ghost; ``via`` lists
    the untraced functions the call would go through; ``line`` is the line of
    the call site (in the caller, or in the last of ``via``).
    """

    id: str
    function: str
    parent: str
    caller: str
    via: tuple[str, ...]
    line: int


@dataclass(frozen=True)
class Edge:
    """A parent -> child call of the run, between two matched calls."""

    parent: str
    child: str
    confirmed: bool
    note: str


@dataclass(frozen=True)
class StaticContext:
    """The result of `StaticIndex.merge`: plain data for the viewer and for queries."""

    index: CallGraph
    functions_of: Mapping[str, str]  # trace node id -> index key
    executed: frozenset[str]
    ghosts: tuple[Ghost, ...]
    ghosts_dropped: int
    edges: tuple[Edge, ...]
    unused: tuple[str, ...]

    @property
    def runtime_only(self) -> tuple[Edge, ...]:
        """The run's edges the source does not show (dynamic dispatch, callbacks)."""
        return tuple(e for e in self.edges if not e.confirmed)

    def to_dict(self) -> dict[str, Any]:
        """The ``static`` section of a viewer payload (JSON-ready)."""
        relevant = set(self.executed) | {g.function for g in self.ghosts}
        functions = self.index.functions
        callers: dict[str, list[str]] = {key: [] for key in relevant}
        for f in functions.values():
            for callee in f.callees:
                if callee in callers:
                    callers[callee].append(f.name)
        return {
            "functions": {
                key: {
                    "qualname": functions[key].qualname,
                    "path": display_path(functions[key].path),
                    "line": functions[key].line,
                    "traced": functions[key].traced,
                    "executed": key in self.executed,
                    "decorators": [d.text for d in functions[key].decorators],
                    "callers": sorted(callers[key]),
                    "callees": list(functions[key].callees),
                    "dynamic_calls": [
                        {"line": c.line, "text": c.text} for c in functions[key].calls if c.dynamic
                    ],
                }
                for key in sorted(relevant, key=lambda k: _source_order(functions[k]))
            },
            "nodes": dict(self.functions_of),
            "ghosts": [
                {
                    "id": g.id,
                    "function": g.function,
                    "parent": g.parent,
                    "caller": g.caller,
                    "via": list(g.via),
                    "line": g.line,
                }
                for g in self.ghosts
            ],
            "ghosts_dropped": self.ghosts_dropped,
            "edges": [
                {"parent": e.parent, "child": e.child, "confirmed": e.confirmed, "note": e.note}
                for e in self.edges
            ],
            "unused": list(self.unused),
            "skipped": [{"path": display_path(p), "reason": r} for p, r in self.index.skipped],
        }

    def annotate(self, data: Mapping[str, Any]) -> dict[str, Any]:
        """A copy of a trace's JSON form with the static context in it, for the viewer.

        Each matched node gets a ``static`` object (function, file, line,
        callers, callees and, for its edge from the parent, ``edge`` =
        ``"confirmed"`` / ``"runtime-only"`` with ``edge_note``); each ghost
        becomes a child node with ``ghost: true`` and status ``"ghost"``,
        after the real children; the envelope gets `to_dict` as ``static``.
        ``data`` itself is not changed.
        """
        summary = self.to_dict()
        info = summary["functions"]
        edges = {e.child: e for e in self.edges}
        out = dict(data)
        out["static"] = summary
        roots = data.get("nodes")
        copies: list[dict[str, Any]] = []
        out["nodes"] = copies
        by_id: dict[str, dict[str, Any]] = {}
        stack: list[tuple[Mapping[str, Any], list[dict[str, Any]]]] = [
            (n, copies) for n in reversed(roots if isinstance(roots, list) else [])
        ]
        while stack:
            node, siblings = stack.pop()
            if not isinstance(node, Mapping):
                continue
            copy = dict(node)
            kids: list[dict[str, Any]] = []
            copy["children"] = kids
            siblings.append(copy)
            node_id = str(node.get("id"))
            by_id.setdefault(node_id, copy)
            key = self.functions_of.get(node_id)
            if key is not None:
                copy["static"] = node_static(key, info[key], edges.get(node_id))
            children = node.get("children")
            if isinstance(children, list):
                stack.extend((c, kids) for c in reversed(children))
        for ghost in self.ghosts:  # parents come before their nested ghosts
            parent = by_id.get(ghost.parent)
            if parent is not None:
                by_id[ghost.id] = ghost_node(ghost, info, self.index, parent.get("start_ms"))
                parent["children"].append(by_id[ghost.id])
        return out


def merge(index: CallGraph, trace: TraceLike) -> StaticContext:
    """Match ``trace``'s calls to ``index`` (see the module docstring)."""
    nodes = list(_nodes(trace))
    matcher = _Matcher(index)
    functions_of: dict[str, str] = {}
    for node in nodes:
        key = matcher.match(node)
        if key is not None:
            functions_of.setdefault(node.id, key)
    executed = frozenset(functions_of.values())
    reach = _TracedReach(index)
    edges = tuple(_edges(nodes, functions_of, reach))
    ghosts, dropped = _ghosts(nodes, functions_of, executed, reach)
    reachable = index.reachable(executed)
    unused = sorted(
        (k for k in reachable if k not in executed and index.functions[k].traced),
        key=lambda k: _source_order(index.functions[k]),
    )
    return StaticContext(index, functions_of, executed, ghosts, dropped, edges, tuple(unused))


def _nodes(trace: TraceLike) -> Iterator[TraceNode]:
    """Every node of a result (or of some roots), in pre-order."""
    roots = getattr(trace, "roots", None)
    for root in roots if roots is not None else trace:
        yield from root


class _Matcher:
    """Which index function a trace node is a call of."""

    def __init__(self, index: CallGraph) -> None:
        self.by_line: dict[tuple[str, int], list[FunctionInfo]] = {}
        self.by_qualname: dict[str, list[FunctionInfo]] = {}
        self.by_span_name: dict[str, list[FunctionInfo]] = {}
        for f in index.functions.values():
            if f.kind == "module":
                continue
            base = os.path.basename(f.path)
            for line in {f.first_line, f.line}:
                self.by_line.setdefault((base, line), []).append(f)
            self.by_qualname.setdefault(f.qualname, []).append(f)
            if f.traced:
                self.by_span_name.setdefault(f.span_name, []).append(f)

    def match(self, node: TraceNode) -> str | None:
        attrs = node.attributes if isinstance(node.attributes, Mapping) else {}
        path = attrs.get(CODE_FILE)
        line = attrs.get(CODE_LINE)
        qualname = attrs.get(CODE_FUNCTION)
        path = path if isinstance(path, str) and path else None
        if path is not None and isinstance(line, int) and not isinstance(line, bool):
            found = [
                f for f in self.by_line.get((_basename(path), line), ()) if _same_file(f, path)
            ]
            if len(found) > 1 and isinstance(qualname, str):
                found = [f for f in found if f.qualname == qualname] or found
            if len(found) == 1:
                return found[0].name
        if isinstance(qualname, str):
            found = list(self.by_qualname.get(qualname, ()))
            if path is not None and len(found) > 1:
                found = [f for f in found if _same_file(f, path)]
            if len(found) == 1:
                return found[0].name
        found = list(self.by_span_name.get(node.name, ()))
        return found[0].name if len(found) == 1 else None


class _TracedReach:
    """For a function: the traced functions its calls reach directly or via untraced helpers."""

    def __init__(self, index: CallGraph) -> None:
        self.index = index
        self.cache: dict[str, dict[str, tuple[tuple[str, ...], int]]] = {}

    def __call__(self, key: str) -> dict[str, tuple[tuple[str, ...], int]]:
        """Each reached traced function -> (untraced functions on the way, call line)."""
        if key in self.cache:
            return self.cache[key]
        functions = self.index.functions
        found: dict[str, tuple[tuple[str, ...], int]] = {}
        seen = {key}
        queue: list[tuple[str, tuple[str, ...]]] = [(key, ())]
        for name, via in growing(queue):
            for site in functions[name].calls:
                target = site.target
                if target is None or target in seen:
                    continue
                seen.add(target)
                if functions[target].traced:
                    found[target] = (via, site.line)
                else:
                    queue.append((target, (*via, target)))
        self.cache[key] = found
        return found

    def references(self, key: str) -> dict[str, int]:
        """Index functions used as values by ``key`` or its untraced helpers -> line."""
        functions = self.index.functions
        out: dict[str, int] = {}
        for name in (key, *{v for via, _ in self(key).values() for v in via}):
            for ref in functions[name].references:
                out.setdefault(ref.target, ref.line)
        return out


def _edges(
    nodes: Iterable[TraceNode], functions_of: Mapping[str, str], reach: _TracedReach
) -> Iterator[Edge]:
    for node in nodes:
        parent_key = functions_of.get(node.id)
        if parent_key is None:
            continue
        for child in node.children:
            child_key = functions_of.get(child.id)
            if child_key is not None:
                yield _edge(node.id, parent_key, child.id, child_key, reach)


def _edge(parent_id: str, parent: str, child_id: str, child: str, reach: _TracedReach) -> Edge:
    functions = reach.index.functions
    reached = reach(parent).get(child)
    if reached is not None:
        via, line = reached
        if via:
            helpers = " -> ".join(functions[v].qualname for v in via)
            return Edge(parent_id, child_id, True, f"called through {helpers} (line {line})")
        return Edge(parent_id, child_id, True, f"called at line {line}")
    referenced = reach.references(parent).get(child)
    if referenced is not None:
        note = f"runtime-only: passed as a value at line {referenced} (a callback)"
        return Edge(parent_id, child_id, False, note)
    dynamic = [c for c in functions[parent].calls if c.dynamic]
    if dynamic:
        sites = ", ".join(f"{c.text} (line {c.line})" for c in dynamic[:3])
        more = f" and {len(dynamic) - 3} more" if len(dynamic) > 3 else ""
        return Edge(parent_id, child_id, False, f"runtime-only: a dynamic call, e.g. {sites}{more}")
    note = "runtime-only: no call in the indexed source (made by code outside it)"
    return Edge(parent_id, child_id, False, note)


def _ghosts(
    nodes: Iterable[TraceNode],
    functions_of: Mapping[str, str],
    executed: frozenset[str],
    reach: _TracedReach,
) -> tuple[tuple[Ghost, ...], int]:
    ghosts: list[Ghost] = []
    dropped = 0
    pairs: set[tuple[str, str]] = set()
    # (parent id, caller key, functions on the ghost chain above)
    queue: list[tuple[str, str, frozenset[str]]] = []
    for node in nodes:
        key = functions_of.get(node.id)
        if key is not None:
            queue.append((node.id, key, frozenset()))
    for parent_id, caller, chain in growing(queue):
        for function, (via, line) in reach(caller).items():
            if function in executed or function in chain or (caller, function) in pairs:
                continue
            pairs.add((caller, function))
            if len(ghosts) >= GHOST_CAP:
                dropped += 1
                continue
            ghost = Ghost(f"ghost{len(ghosts) + 1}", function, parent_id, caller, via, line)
            ghosts.append(ghost)
            queue.append((ghost.id, function, chain | {function}))
    return tuple(ghosts), dropped


def node_static(key: str, info: Mapping[str, Any], edge: Edge | None) -> dict[str, Any]:
    """The ``static`` object of a matched call: its function, file, line, callers, callees,
    and for its edge from the parent ``edge`` / ``edge_note``. ``info``: the function's
    entry in `StaticContext.to_dict` ``functions``."""
    out = {
        "function": key,
        "path": info["path"],
        "line": info["line"],
        "callers": info["callers"],
        "callees": info["callees"],
    }
    if edge is not None:
        out["edge"] = "confirmed" if edge.confirmed else "runtime-only"
        out["edge_note"] = edge.note
    return out


def ghost_node(
    ghost: Ghost, functions: Mapping[str, Any], index: CallGraph, start: Any
) -> dict[str, Any]:
    """A ghost as a childless node of a trace's JSON form (``status`` and ``ghost`` say
    what it is), starting where its parent (``start``) did. ``functions``: the
    `StaticContext.to_dict` ``functions`` entries."""
    info = functions[ghost.function]
    function = index.functions[ghost.function]
    caller = index.functions[ghost.caller].qualname
    via = "".join(f" through {index.functions[v].qualname}" for v in ghost.via[-1:])
    return {
        "id": ghost.id,
        "name": function.span_name,
        "kind": function.span_kind,
        "status": "ghost",
        "ghost": True,
        "inputs": {},
        "output": None,
        "error": None,
        "latency_ms": None,
        "start_ms": start if isinstance(start, (int, float)) else 0.0,
        "meta": {},
        "attributes": {
            CODE_FUNCTION: function.qualname,
            CODE_FILE: info["path"],
            CODE_LINE: function.first_line,
        },
        "events": [],
        "children": [],
        "static": {
            "function": ghost.function,
            "path": info["path"],
            "line": info["line"],
            "callers": info["callers"],
            "callees": info["callees"],
            "note": f"not run: {caller} calls it at line {ghost.line}{via}",
        },
    }


def _source_order(f: FunctionInfo) -> tuple[str, int, str]:
    return (f.path, f.line, f.name)


def _basename(path: str) -> str:
    return path.replace("\\", "/").rsplit("/", 1)[-1]


def _same_file(function: FunctionInfo, recorded: str) -> bool:
    """Whether a recorded path names the file ``function`` is in.

    The path may be relative (to where the program ran) or from another
    checkout: it matches when it ends with the module's own path
    (``shop/agent.py`` for ``shop.agent``, ``shop/__init__.py`` for ``shop``).
    """
    parts = [p for p in recorded.replace("\\", "/").split("/") if p not in ("", ".")]
    indexed = function.path.replace("\\", "/").split("/")
    tail = len(function.module.split(".")) + (indexed[-1] == "__init__.py")
    return len(parts) >= tail and parts[-tail:] == indexed[-tail:]
