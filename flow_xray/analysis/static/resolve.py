"""Parse source files and resolve their call sites: the engine behind `StaticIndex.build`.

A call is resolved to an index function where the source says which one it is:

- a plain name through local, enclosing and module scopes and imports
  (relative imports and package re-exports included), builtins last;
- ``self.m()`` / ``cls.m()`` / ``super().m()`` through the class and its bases;
- ``obj.m()`` when ``obj`` was made by ``Class(...)`` or annotated with a class:
  a local, a parameter, a module variable, a class attribute or ``self.attr``;
- ``Class(...)`` to ``Class.__init__``, ``obj(...)`` to ``__call__``;
- decorators, default values and class bases are calls and uses of the scope
  that defines the function or class.

Anything else is a dynamic call site. Resolution is flow-insensitive (any
assignment of a name counts) and bounded, so it always ends.
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Sequence

from flow_xray.analysis.static.functions import (
    MODULE_CODE,
    CallSite,
    Decorator,
    FunctionInfo,
    Reference,
)
from flow_xray.analysis.static.scan import (
    Builder,
    Entry,
    Scope,
    callee,
    lookup,
    own_nodes,
    source_order,
    text_of,
)

_BUILTINS = frozenset(dir(builtins))
_DEPTH = 24  # resolution steps before giving up (aliases of aliases, re-exports)
# A resolved value: ("name", dotted) or ("instance", class key).
_Ref = tuple[str, str]
_LITERALS: dict[type[ast.AST], str] = {
    ast.JoinedStr: "str",
    ast.List: "list",
    ast.ListComp: "list",
    ast.Dict: "dict",
    ast.DictComp: "dict",
    ast.Set: "set",
    ast.SetComp: "set",
    ast.Tuple: "tuple",
}


def index_files(
    files: Sequence[str],
) -> tuple[dict[str, FunctionInfo], tuple[tuple[str, str], ...]]:
    """Parse ``files`` and return the index functions by key, plus the files skipped."""
    builder = Builder()
    skipped: list[tuple[str, str]] = []
    for path in files:
        reason = builder.add_file(path)
        if reason is not None:
            skipped.append((path, reason))
    return _finish(builder), tuple(skipped)


def _finish(builder: Builder) -> dict[str, FunctionInfo]:
    resolver = _Resolver(builder)
    calls: dict[str, list[CallSite]] = {}
    refs: dict[str, list[Reference]] = {}
    decorators: dict[str, list[Decorator]] = {key: [] for key in builder.scopes}
    for scope in builder.scopes.values():
        calls[scope.key], refs[scope.key] = resolver.uses(scope)
        for expr, key in scope.decorated:
            ref = resolver.resolve(callee(expr), scope)
            name = ref[1] if ref is not None and ref[0] == "name" else None
            decorators[key].append(Decorator(text_of(expr), name))
    tracing = _tracing_functions(calls, resolver.trace_calls)
    out: dict[str, FunctionInfo] = {}
    for scope in sorted(builder.scopes.values(), key=source_order):
        decos = tuple(decorators[scope.key])
        traced, span_name, span_kind = _span_facts(scope, decos, tracing)
        node = scope.node
        line = node.lineno if node is not None else 1
        out[scope.key] = FunctionInfo(
            name=scope.key,
            module=scope.module.name,
            qualname=scope.qualname,
            path=scope.module.path,
            line=line,
            first_line=min([line, *(d.lineno for d in node.decorator_list)]) if node else 1,
            end_line=(node.end_lineno or line) if node else scope.module.lines,
            kind=scope.kind,
            is_async=isinstance(node, ast.AsyncFunctionDef),
            decorators=decos,
            calls=tuple(calls[scope.key]),
            references=tuple(refs[scope.key]),
            traced=traced,
            span_name=span_name,
            span_kind=span_kind,
        )
    return out


def _span_facts(
    scope: Scope, decorators: Sequence[Decorator], tracing: dict[str, ast.Call | None]
) -> tuple[bool, str, str]:
    """(traced, span name, span kind) from ``@trace(...)`` or a decorator that traces."""
    default = scope.qualname  # @trace's default span name is the full __qualname__
    node = scope.node
    if node is None:
        return False, default, "chain"
    for expr, deco in zip(node.decorator_list, decorators, strict=True):
        options: ast.Call | None = None
        if _is_trace(deco.name or text_of(callee(expr))):
            options = expr if isinstance(expr, ast.Call) else None
        elif deco.name in tracing:
            options = tracing[deco.name]
        else:
            continue
        name, kind = _trace_options(options)
        return True, name or default, kind or "chain"
    return False, default, "chain"


def _tracing_functions(
    calls: dict[str, list[CallSite]], trace_calls: dict[tuple[str, int], ast.Call]
) -> dict[str, ast.Call | None]:
    """Index functions that call ``trace`` (in their body or a nested function): decorators
    that trace what they decorate. Each with its ``trace(...)`` call, to read the options."""
    found: dict[str, ast.Call | None] = {}
    for key, sites in calls.items():
        for site in sites:
            if _is_trace(site.name or site.text):
                owner = key.split(".<locals>.")[0]
                found.setdefault(owner, trace_calls.get((key, site.line)))
    return found


class _Resolver:
    def __init__(self, builder: Builder) -> None:
        self.b = builder
        self.module_names = sorted(builder.modules, key=len, reverse=True)
        # (scope key, line) -> a `trace(...)` call there, whose options name the spans
        self.trace_calls: dict[tuple[str, int], ast.Call] = {}
        self._bases: dict[str, list[str]] = {}

    def uses(self, scope: Scope) -> tuple[list[CallSite], list[Reference]]:
        """The call sites and function references of everything that runs in ``scope``."""
        sites: list[CallSite] = []
        refs: list[Reference] = []
        skip: set[int] = set()  # call callees and attribute bases: not uses by themselves
        # `@name` is a call of `name` with the function, made where the def runs.
        applied = {id(d) for d, _ in scope.decorated if isinstance(d, (ast.Name, ast.Attribute))}
        for node in own_nodes(scope.body, class_bodies=True, decorators=True):
            if isinstance(node, ast.Attribute):
                skip.add(id(node.value))
            if isinstance(node, ast.Call):
                skip.add(id(node.func))
                sites.append(self._call_site(node, scope))
            elif id(node) in applied and isinstance(node, (ast.Name, ast.Attribute)):
                sites.append(self._call_site(ast.Call(node, [], [], lineno=node.lineno), scope))
            elif isinstance(node, (ast.Name, ast.Attribute)) and isinstance(node.ctx, ast.Load):
                if id(node) in skip:
                    continue
                ref = self.resolve(node, scope)
                if ref is not None and ref[0] == "name" and ref[1] in self.b.scopes:
                    refs.append(Reference(node.lineno, ref[1]))
        return sites, refs

    def _call_site(self, call: ast.Call, scope: Scope) -> CallSite:
        text = text_of(call.func)
        ref = self.resolve(call.func, scope)
        if _is_trace(text) or (ref is not None and _is_trace(ref[1])):
            self.trace_calls[(scope.key, call.lineno)] = call
        if ref is None:
            return CallSite(call.lineno, text, None, None, True)
        kind, name = ref
        if kind == "instance":
            return CallSite(call.lineno, text, name, self.method(name, "__call__"), False)
        if name in self.b.classes:
            return CallSite(call.lineno, text, name, self.method(name, "__init__"), False)
        return CallSite(call.lineno, text, name, name if name in self.b.scopes else None, False)

    def resolve(self, expr: ast.expr, scope: Scope, depth: int = 0) -> _Ref | None:
        """What ``expr`` names in ``scope``: a dotted name, an instance of a class, or None."""
        if depth > _DEPTH:
            return None
        if isinstance(expr, ast.Name):
            found = lookup(expr.id, scope)
            if found is None:
                return ("name", f"builtins.{expr.id}") if expr.id in _BUILTINS else None
            entry, where = found
            return self._entry(entry, where, depth + 1)
        if isinstance(expr, ast.Attribute):
            return self._attribute(expr, scope, depth)
        if isinstance(expr, ast.Call):
            made = self.resolve(expr.func, scope, depth + 1)
            if made is not None and made[0] == "name" and made[1] in self.b.classes:
                return ("instance", made[1])
            return None
        if isinstance(expr, ast.Constant) and expr.value is not None:
            return ("name", f"builtins.{type(expr.value).__name__}")  # "; ".join(...)
        if type(expr) in _LITERALS:  # [].append(...), f"...".format(...)
            return ("name", f"builtins.{_LITERALS[type(expr)]}")
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.BitOr):  # `Client | None`
            for side in (expr.left, expr.right):
                if not (isinstance(side, ast.Constant) and side.value is None):
                    return self.resolve(side, scope, depth + 1)
        return None

    def _attribute(self, expr: ast.Attribute, scope: Scope, depth: int) -> _Ref | None:
        """What ``obj.attr`` names: ``super().m`` through the bases, else an attribute of
        what ``obj`` names."""
        if _is_super(expr.value):
            cls = _method_class(scope)
            if cls is None:
                return None
            for base in self.bases(cls):
                method = self.method(base, expr.attr)
                if method is not None:
                    return ("name", method)
            return None
        base_ref = self.resolve(expr.value, scope, depth + 1)
        if base_ref is None:
            return None
        if base_ref[0] == "instance":
            return self._member(base_ref[1], expr.attr, depth + 1)
        return self.chase(f"{base_ref[1]}.{expr.attr}", depth + 1)

    def _entry(self, entry: Entry, scope: Scope, depth: int) -> _Ref | None:
        kind, value = entry
        if kind == "name" and isinstance(value, str):
            return self.chase(value, depth)
        if kind == "self" and isinstance(value, str):
            return ("instance", value)
        if kind == "cls" and isinstance(value, str):
            return ("name", value)
        if kind in ("instance", "alias") and isinstance(value, ast.expr):
            ref = self.resolve(value, scope, depth)
            if kind == "alias" or ref is None:
                return ref
            return ("instance", ref[1]) if ref[0] == "name" and ref[1] in self.b.classes else None
        return None

    def chase(self, dotted: str, depth: int) -> _Ref | None:
        """Follow a dotted name through the index's modules (imports, re-exports)."""
        for _ in range(_DEPTH - depth):
            if dotted in self.b.scopes or dotted in self.b.classes:
                return ("name", dotted)
            cls_key, _, attr = dotted.rpartition(".")
            if cls_key in self.b.classes:
                return self._member(cls_key, attr, depth + 1)
            module = next((m for m in self.module_names if dotted.startswith(m + ".")), None)
            if module is None:
                return ("name", dotted)  # outside the index (or a module itself)
            first, _, rest = dotted[len(module) + 1 :].partition(".")
            entry = self.b.scopes[f"{module}.{MODULE_CODE}"].names.get(first)
            if entry is None or entry == ("name", f"{module}.{first}"):
                return ("name", dotted)
            ref = self._entry(entry, self.b.scopes[f"{module}.{MODULE_CODE}"], depth + 1)
            if ref is None:
                return None
            if ref[0] == "instance":
                return self._member(ref[1], rest, depth + 1) if rest else ref
            dotted = f"{ref[1]}.{rest}" if rest else ref[1]
        return None

    def _member(self, cls_key: str, attr: str, depth: int) -> _Ref | None:
        """``obj.attr`` (``attr`` may be dotted) for an instance or the class ``cls_key``."""
        first, _, rest = attr.partition(".")
        method = self.method(cls_key, first)
        if method is not None and not rest:
            return ("name", method)
        for key in (cls_key, *self.bases(cls_key)):
            found = self.b.classes[key].attrs.get(first)
            if found is None:
                continue
            ref = self.resolve(found[0], found[1], depth + 1)
            if ref is None or ref[1] not in self.b.classes:
                return None
            return self._member(ref[1], rest, depth + 1) if rest else ("instance", ref[1])
        return None

    def method(self, cls_key: str, name: str) -> str | None:
        """The index key of method ``name`` on ``cls_key`` or its bases (first found)."""
        for key in (cls_key, *self.bases(cls_key)):
            found = self.b.classes[key].methods.get(name)
            if found is not None:
                return found
        return None

    def bases(self, cls_key: str) -> list[str]:
        """The index classes ``cls_key`` derives from, depth first, each once."""
        if cls_key in self._bases:
            return self._bases[cls_key]
        self._bases[cls_key] = []  # a base that refers back to this class finds none
        seen: list[str] = []
        stack = [cls_key]
        while stack:
            info = self.b.classes[stack.pop()]
            found = []
            for expr in info.node.bases:
                ref = self.resolve(expr, info.scope)
                if ref is None or ref[1] not in self.b.classes:
                    continue
                if ref[1] != cls_key and ref[1] not in seen and ref[1] not in found:
                    found.append(ref[1])
            seen.extend(found)
            stack.extend(reversed(found))
        self._bases[cls_key] = seen
        return seen


def _method_class(scope: Scope) -> str | None:
    """The class whose method ``scope`` is (for ``super()``), looking through closures."""
    current: Scope | None = scope
    while current is not None:
        for entry in current.names.values():
            if entry[0] in ("self", "cls") and isinstance(entry[1], str):
                return entry[1]
        current = current.parent if current.node is not None else None
    return None


def _is_trace(name: str) -> bool:
    """Whether a callee (dotted name or text) is flow-xray's ``trace``."""
    head = name.split("(", 1)[0]
    return head.rpartition(".")[2] == "trace"


def _is_super(expr: ast.expr) -> bool:
    return (
        isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == "super"
    )


def _trace_options(call: ast.Call | None) -> tuple[str | None, str | None]:
    """The literal ``name`` and ``kind`` of a ``trace(...)`` call, when written as literals."""
    if call is None:
        return None, None
    name = kind = None
    if call.args and isinstance(call.args[0], ast.Constant) and isinstance(call.args[0].value, str):
        name = call.args[0].value
    for keyword in call.keywords:
        value = keyword.value
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            if keyword.arg == "name":
                name = value.value
            elif keyword.arg == "kind":
                kind = value.value
    return name, kind
