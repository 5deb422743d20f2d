"""Pass 1 of the static index: every def, class and name of every file, as scopes.

`Builder.add_file` parses a file with `ast` (nothing is imported or run) and
records each function, method and module's top-level code as a `Scope` with
its symbol table (imports, assignments, parameters: what each name may be),
and each class with its methods and attributes. `flow_xray.analysis.static.resolve`
resolves their call sites from there (pass 2).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from flow_xray.analysis.static.functions import MODULE_CODE, module_name

_TEXT_MAX = 80
Def = ast.FunctionDef | ast.AsyncFunctionDef

# A symbol-table entry: ("name", dotted) a def, class or import; ("instance", expr)
# an object of the class `expr` names; ("alias", expr) the same value as `expr`;
# ("self", class key) / ("cls", class key) a method's first parameter; ("unknown", "").
Entry = tuple[str, object]
_PRIORITY = {"unknown": 0, "alias": 1, "instance": 2, "self": 3, "cls": 3, "name": 4}


@dataclass
class Module:
    name: str
    path: str
    is_package: bool
    lines: int


@dataclass
class Class:
    key: str
    scope: Scope  # where the class statement runs (resolves its bases)
    node: ast.ClassDef
    methods: dict[str, str] = field(default_factory=dict)  # name -> function key
    attrs: dict[str, tuple[ast.expr, Scope]] = field(default_factory=dict)  # attr -> class expr


@dataclass
class Scope:
    """A function being indexed, or a module's top-level code (``node`` None)."""

    key: str
    qualname: str
    module: Module
    node: Def | None
    body: Sequence[ast.stmt]
    parent: Scope | None
    kind: str
    names: dict[str, Entry] = field(default_factory=dict)
    decorated: list[tuple[ast.expr, str]] = field(default_factory=list)  # (decorator, def key)


class Builder:
    def __init__(self) -> None:
        self.modules: dict[str, Module] = {}
        self.scopes: dict[str, Scope] = {}
        self.classes: dict[str, Class] = {}

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
        module = Module(name, path, Path(path).name == "__init__.py", source.count("\n") + 1)
        self.modules[name] = module
        scope = Scope(f"{name}.{MODULE_CODE}", MODULE_CODE, module, None, tree.body, None, "module")
        self.scopes[scope.key] = scope
        self._register(tree.body, scope, None, "")
        return None

    def _register(
        self, body: Sequence[ast.stmt], scope: Scope, cls: Class | None, prefix: str
    ) -> None:
        """Index the defs and classes of a block that runs as part of ``scope``."""
        if cls is None:
            _note_names(body, scope)
        for stmt in _defs(body):
            qual = prefix + stmt.name
            key = f"{scope.module.name}.{qual}"
            if isinstance(stmt, ast.ClassDef):
                info = Class(key, scope, stmt)
                self.classes[key] = info
                _note_class_attrs(info)
                if cls is None:
                    _put(scope.names, stmt.name, ("name", key))
                self._register(stmt.body, scope, info, qual + ".")
                continue
            kind = _def_kind(stmt, cls is not None)
            child = Scope(key, qual, scope.module, stmt, stmt.body, scope, kind)
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


# -- symbol tables ------------------------------------------------------------------------


def _put(names: dict[str, Entry], name: str, entry: Entry) -> None:
    """Record ``entry`` unless a more telling one is there (flow-insensitive)."""
    old = names.get(name)
    if old is None or _PRIORITY[entry[0]] >= _PRIORITY[old[0]]:
        names[name] = entry


def lookup(name: str, scope: Scope) -> tuple[Entry, Scope] | None:
    current: Scope | None = scope
    while current is not None:
        entry = current.names.get(name)
        if entry is not None:
            return entry, current
        current = current.parent
    return None


def _note_names(body: Sequence[ast.stmt], scope: Scope) -> None:
    """Imports and assignments of the code that runs as part of ``scope``."""
    for node in own_nodes(body, class_bodies=False, decorators=False):
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


def _note_assign(names: dict[str, Entry], target: ast.expr, value: ast.expr) -> None:
    if not isinstance(target, ast.Name):
        return
    if isinstance(value, ast.Call):
        _put(names, target.id, ("instance", value.func))
    elif isinstance(value, (ast.Name, ast.Attribute)):
        _put(names, target.id, ("alias", value))


def _note_params(scope: Scope, node: Def, cls: Class | None) -> None:
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


def _note_class_attrs(info: Class) -> None:
    """``attr = Class(...)`` / ``attr: Class`` in a class body."""
    for stmt in info.node.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target, value = stmt.targets[0], stmt.value
            if isinstance(target, ast.Name) and isinstance(value, ast.Call):
                info.attrs[target.id] = (value.func, info.scope)
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            info.attrs.setdefault(stmt.target.id, (_annotation(stmt.annotation), info.scope))


def _note_self_attrs(method: Scope, info: Class) -> None:
    """``self.attr = Class(...)`` or ``self.attr = param`` (annotated) in a method."""
    self_name = next((n for n, e in method.names.items() if e == ("self", info.key)), None)
    if self_name is None:
        return
    for node in own_nodes(method.body, class_bodies=False, decorators=False):
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


def _import_base(module: Module, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    parts = module.name.split(".")
    keep = len(parts) - node.level + (1 if module.is_package else 0)
    base = ".".join(parts[: max(keep, 0)])
    if node.module:
        return f"{base}.{node.module}" if base else node.module
    return base


# -- walking ------------------------------------------------------------------------------


def _defs(body: Sequence[ast.stmt]) -> Iterator[Def | ast.ClassDef]:
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


def own_nodes(
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


def source_order(scope: Scope) -> tuple[str, int, str]:
    return (scope.module.path, scope.node.lineno if scope.node else 0, scope.key)


# -- small readers ------------------------------------------------------------------------


def _def_kind(node: Def, in_class: bool) -> str:
    if not in_class:
        return "function"
    for deco in node.decorator_list:
        text = text_of(deco)
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


def callee(expr: ast.expr) -> ast.expr:
    return expr.func if isinstance(expr, ast.Call) else expr


def text_of(expr: ast.AST) -> str:
    text = ast.unparse(expr)
    return text if len(text) <= _TEXT_MAX else text[: _TEXT_MAX - 1] + "\u2026"
