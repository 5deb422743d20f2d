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
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from flow_xray.analysis.static_index import (
    MODULE_CODE,
    CallSite,
    Decorator,
    FunctionInfo,
    Reference,
    module_name,
)

_BUILTINS = frozenset(dir(builtins))
_TEXT_MAX = 80
_DEPTH = 24  # resolution steps before giving up (aliases of aliases, re-exports)
_Def = ast.FunctionDef | ast.AsyncFunctionDef

# A symbol-table entry: ("name", dotted) a def, class or import; ("instance", expr)
# an object of the class `expr` names; ("alias", expr) the same value as `expr`;
# ("self", class key) / ("cls", class key) a method's first parameter; ("unknown", "").
_Entry = tuple[str, object]
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
_PRIORITY = {"unknown": 0, "alias": 1, "instance": 2, "self": 3, "cls": 3, "name": 4}


@dataclass
class _Module:
    name: str
    path: str
    is_package: bool
    lines: int


@dataclass
class _Class:
    key: str
    scope: _Scope  # where the class statement runs (resolves its bases)
    node: ast.ClassDef
    methods: dict[str, str] = field(default_factory=dict)  # name -> function key
    attrs: dict[str, tuple[ast.expr, _Scope]] = field(default_factory=dict)  # attr -> class expr


@dataclass
class _Scope:
    """A function being indexed, or a module's top-level code (``node`` None)."""

    key: str
    qualname: str
    module: _Module
    node: _Def | None
    body: Sequence[ast.stmt]
    parent: _Scope | None
    kind: str
    names: dict[str, _Entry] = field(default_factory=dict)
    decorated: list[tuple[ast.expr, str]] = field(default_factory=list)  # (decorator, def key)


def index_files(
    files: Sequence[str],
) -> tuple[dict[str, FunctionInfo], tuple[tuple[str, str], ...]]:
    """Parse ``files`` and return the index functions by key, plus the files skipped."""
    builder = _Builder()
    skipped: list[tuple[str, str]] = []
    for path in files:
        reason = builder.add_file(path)
        if reason is not None:
            skipped.append((path, reason))
    return builder.finish(), tuple(skipped)


class _Builder:
    def __init__(self) -> None:
        self.modules: dict[str, _Module] = {}
        self.scopes: dict[str, _Scope] = {}
        self.classes: dict[str, _Class] = {}

    # -- pass 1: every def, class and name of every file -----------------------------------

    def add_file(self, path: str) -> str | None:
        try:
            source = Path(path).read_text(encoding="utf-8-sig")
            tree = ast.parse(source, filename=path)
        except (OSError, UnicodeDecodeError, SyntaxError, ValueError) as exc:
            return f"{type(exc).__name__}: {exc}"
        name = module_name(path)
        if name in self.modules:
            return f"module {name!r} is already indexed from {self.modules[name].path}"
        module = _Module(name, path, Path(path).name == "__init__.py", source.count("\n") + 1)
        self.modules[name] = module
        scope = _Scope(
            f"{name}.{MODULE_CODE}", MODULE_CODE, module, None, tree.body, None, "module"
        )
        self.scopes[scope.key] = scope
        self._register(tree.body, scope, None, "")
        return None

    def _register(
        self, body: Sequence[ast.stmt], scope: _Scope, cls: _Class | None, prefix: str
    ) -> None:
        """Index the defs and classes of a block that runs as part of ``scope``."""
        if cls is None:
            _note_names(body, scope)
        for stmt in _defs(body):
            qual = prefix + stmt.name
            key = f"{scope.module.name}.{qual}"
            if isinstance(stmt, ast.ClassDef):
                info = _Class(key, scope, stmt)
                self.classes[key] = info
                _note_class_attrs(info)
                if cls is None:
                    _put(scope.names, stmt.name, ("name", key))
                self._register(stmt.body, scope, info, qual + ".")
                continue
            kind = _def_kind(stmt, cls is not None)
            child = _Scope(key, qual, scope.module, stmt, stmt.body, scope, kind)
            self.scopes[key] = child
            scope.decorated.extend((d, key) for d in stmt.decorator_list)
            if cls is not None:
                cls.methods[stmt.name] = key
            else:
                _put(scope.names, stmt.name, ("name", key))
            _note_params(child, stmt, cls)
            self._register(stmt.body, child, None, qual + ".<locals>.")
            if cls is not None and kind in ("method", "property"):
                _note_self_attrs(child, cls)

    # -- pass 2: resolve -------------------------------------------------------------------

    def finish(self) -> dict[str, FunctionInfo]:
        resolver = _Resolver(self)
        calls: dict[str, list[CallSite]] = {}
        refs: dict[str, list[Reference]] = {}
        decorators: dict[str, list[Decorator]] = {key: [] for key in self.scopes}
        for scope in self.scopes.values():
            calls[scope.key], refs[scope.key] = resolver.uses(scope)
            for expr, key in scope.decorated:
                ref = resolver.resolve(_callee(expr), scope)
                name = ref[1] if ref is not None and ref[0] == "name" else None
                decorators[key].append(Decorator(_text(expr), name))
        tracing = _tracing_functions(calls, resolver.trace_calls)
        out: dict[str, FunctionInfo] = {}
        for scope in sorted(self.scopes.values(), key=_source_order):
            decos = tuple(decorators[scope.key])
            traced, span_name, span_kind = self._span_facts(scope, decos, tracing)
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
        self, scope: _Scope, decorators: Sequence[Decorator], tracing: dict[str, ast.Call | None]
    ) -> tuple[bool, str, str]:
        """(traced, span name, span kind) from ``@trace(...)`` or a decorator that traces."""
        default = scope.qualname  # @trace's default span name is the full __qualname__
        node = scope.node
        if node is None:
            return False, default, "chain"
        for expr, deco in zip(node.decorator_list, decorators, strict=True):
            options: ast.Call | None = None
            if _is_trace(deco.name or _text(_callee(expr))):
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
    def __init__(self, builder: _Builder) -> None:
        self.b = builder
        self.module_names = sorted(builder.modules, key=len, reverse=True)
        # (scope key, line) -> a `trace(...)` call there, whose options name the spans
        self.trace_calls: dict[tuple[str, int], ast.Call] = {}
        self._bases: dict[str, list[str]] = {}

    def uses(self, scope: _Scope) -> tuple[list[CallSite], list[Reference]]:
        """The call sites and function references of everything that runs in ``scope``."""
        sites: list[CallSite] = []
        refs: list[Reference] = []
        skip: set[int] = set()  # call callees and attribute bases: not uses by themselves
        # `@name` is a call of `name` with the function, made where the def runs.
        applied = {id(d) for d, _ in scope.decorated if isinstance(d, (ast.Name, ast.Attribute))}
        for node in _own_nodes(scope.body, class_bodies=True, decorators=True):
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

    def _call_site(self, call: ast.Call, scope: _Scope) -> CallSite:
        text = _text(call.func)
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

    def resolve(self, expr: ast.expr, scope: _Scope, depth: int = 0) -> _Ref | None:
        """What ``expr`` names in ``scope``: a dotted name, an instance of a class, or None."""
        if depth > _DEPTH:
            return None
        if isinstance(expr, ast.Name):
            found = _lookup(expr.id, scope)
            if found is None:
                return ("name", f"builtins.{expr.id}") if expr.id in _BUILTINS else None
            entry, where = found
            return self._entry(entry, where, depth + 1)
        if isinstance(expr, ast.Attribute):
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

    def _entry(self, entry: _Entry, scope: _Scope, depth: int) -> _Ref | None:
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


# -- symbol tables ------------------------------------------------------------------------


def _put(names: dict[str, _Entry], name: str, entry: _Entry) -> None:
    """Record ``entry`` unless a more telling one is there (flow-insensitive)."""
    old = names.get(name)
    if old is None or _PRIORITY[entry[0]] >= _PRIORITY[old[0]]:
        names[name] = entry


def _lookup(name: str, scope: _Scope) -> tuple[_Entry, _Scope] | None:
    current: _Scope | None = scope
    while current is not None:
        entry = current.names.get(name)
        if entry is not None:
            return entry, current
        current = current.parent
    return None


def _note_names(body: Sequence[ast.stmt], scope: _Scope) -> None:
    """Imports and assignments of the code that runs as part of ``scope``."""
    for node in _own_nodes(body, class_bodies=False, decorators=False):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    _put(scope.names, alias.asname, ("name", alias.name))
                else:
                    first = alias.name.split(".")[0]
                    _put(scope.names, first, ("name", first))
        elif isinstance(node, ast.ImportFrom):
            base = _import_base(scope.module, node)
            for alias in node.names:
                if alias.name != "*":
                    target = f"{base}.{alias.name}" if base else alias.name
                    _put(scope.names, alias.asname or alias.name, ("name", target))
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            _note_assign(scope.names, node.targets[0], node.value)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            _put(scope.names, node.target.id, ("instance", _annotation(node.annotation)))
            if node.value is not None:
                _note_assign(scope.names, node.target, node.value)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            _put(scope.names, node.id, ("unknown", ""))


def _note_assign(names: dict[str, _Entry], target: ast.expr, value: ast.expr) -> None:
    if not isinstance(target, ast.Name):
        return
    if isinstance(value, ast.Call):
        _put(names, target.id, ("instance", value.func))
    elif isinstance(value, (ast.Name, ast.Attribute)):
        _put(names, target.id, ("alias", value))


def _note_params(scope: _Scope, node: _Def, cls: _Class | None) -> None:
    args = node.args
    params = [*args.posonlyargs, *args.args, *args.kwonlyargs]
    for extra in (args.vararg, args.kwarg):
        if extra is not None:
            scope.names[extra.arg] = ("unknown", "")
    for index, arg in enumerate(params):
        if index == 0 and cls is not None and scope.kind in ("method", "property"):
            scope.names[arg.arg] = ("self", cls.key)
        elif index == 0 and cls is not None and scope.kind == "classmethod":
            scope.names[arg.arg] = ("cls", cls.key)
        elif arg.annotation is not None:
            scope.names[arg.arg] = ("instance", _annotation(arg.annotation))
        else:
            scope.names[arg.arg] = ("unknown", "")


def _note_class_attrs(info: _Class) -> None:
    """``attr = Class(...)`` / ``attr: Class`` in a class body."""
    for stmt in info.node.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target, value = stmt.targets[0], stmt.value
            if isinstance(target, ast.Name) and isinstance(value, ast.Call):
                info.attrs[target.id] = (value.func, info.scope)
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            info.attrs.setdefault(stmt.target.id, (_annotation(stmt.annotation), info.scope))


def _note_self_attrs(method: _Scope, info: _Class) -> None:
    """``self.attr = Class(...)`` or ``self.attr = param`` (annotated) in a method."""
    self_name = next((n for n, e in method.names.items() if e == ("self", info.key)), None)
    if self_name is None:
        return
    for node in _own_nodes(method.body, class_bodies=False, decorators=False):
        if not isinstance(node, (ast.Assign, ast.AnnAssign)):
            continue
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        for target in targets:
            if not (
                isinstance(target, ast.Attribute)
                and isinstance(target.value, ast.Name)
                and target.value.id == self_name
            ):
                continue
            if isinstance(node, ast.AnnAssign):
                info.attrs.setdefault(target.attr, (_annotation(node.annotation), method))
            elif isinstance(node.value, ast.Call):
                info.attrs.setdefault(target.attr, (node.value.func, method))
            elif isinstance(node.value, ast.Name):
                entry = method.names.get(node.value.id)
                if entry is not None and entry[0] == "instance" and isinstance(entry[1], ast.expr):
                    info.attrs.setdefault(target.attr, (entry[1], method))


def _import_base(module: _Module, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    parts = module.name.split(".")
    keep = len(parts) - node.level + (1 if module.is_package else 0)
    base = ".".join(parts[: max(keep, 0)])
    if node.module:
        return f"{base}.{node.module}" if base else node.module
    return base


def _method_class(scope: _Scope) -> str | None:
    """The class whose method ``scope`` is (for ``super()``), looking through closures."""
    current: _Scope | None = scope
    while current is not None:
        for entry in current.names.values():
            if entry[0] in ("self", "cls") and isinstance(entry[1], str):
                return entry[1]
        current = current.parent if current.node is not None else None
    return None


# -- walking ------------------------------------------------------------------------------


def _defs(body: Sequence[ast.stmt]) -> Iterator[_Def | ast.ClassDef]:
    """The defs and classes of a block, inside compound statements too, in source order."""
    stack = list(reversed(body))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            yield node
            continue
        children = [c for c in ast.iter_child_nodes(node) if isinstance(c, ast.stmt)]
        for handler in getattr(node, "handlers", ()):
            children.extend(handler.body)
        for case in getattr(node, "cases", ()):
            children.extend(case.body)
        stack.extend(reversed(sorted(children, key=lambda c: (c.lineno, c.col_offset))))


def _own_nodes(
    body: Sequence[ast.AST], *, class_bodies: bool, decorators: bool
) -> Iterator[ast.AST]:
    """Every node that runs as part of a block, not descending into nested function bodies.

    ``decorators``: include what runs when a nested def or class statement
    runs (decorators, defaults, bases); ``class_bodies``: the statements of
    nested class bodies too (they run with the block).
    """
    stack: list[ast.AST] = list(reversed(body))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if decorators:
                args = node.args
                stack.extend(reversed([*node.decorator_list, *args.defaults]))
                stack.extend(d for d in args.kw_defaults if d is not None)
            continue
        if isinstance(node, ast.ClassDef):
            if decorators:
                stack.extend(reversed([*node.decorator_list, *node.bases]))
                stack.extend(k.value for k in node.keywords)
            if class_bodies:
                stack.extend(reversed(node.body))
            continue
        yield node
        stack.extend(reversed(list(ast.iter_child_nodes(node))))


def _source_order(scope: _Scope) -> tuple[str, int, str]:
    return (scope.module.path, scope.node.lineno if scope.node else 0, scope.key)


# -- small readers ------------------------------------------------------------------------


def _def_kind(node: _Def, in_class: bool) -> str:
    if not in_class:
        return "function"
    for deco in node.decorator_list:
        text = _text(deco)
        if text in ("staticmethod", "classmethod"):
            return text
        if text.endswith(("property", ".setter", ".getter", ".deleter")):
            return "property"
    return "method"


def _annotation(expr: ast.expr) -> ast.expr:
    """An annotation as an expression: ``"Client"`` (a string annotation) parsed."""
    if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
        try:
            return ast.parse(expr.value, mode="eval").body
        except SyntaxError:
            return expr
    return expr


def _callee(expr: ast.expr) -> ast.expr:
    return expr.func if isinstance(expr, ast.Call) else expr


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


def _text(expr: ast.AST) -> str:
    text = ast.unparse(expr)
    return text if len(text) <= _TEXT_MAX else text[: _TEXT_MAX - 1] + "\u2026"
