"""Every span attribute key lives in `flow_xray.attributes`, and every key there is used.

Two copies of one key drift apart (they did: the tree read three response-id
spellings, recording one). So no module but ``attributes.py`` may spell a key:
a string literal in the package that looks like an attribute key (a dotted name
in a namespace the attributes module uses, such as ``gen_ai.`` or ``llm.``)
fails this test, wherever it stands (constants, f-string pieces, dict keys).
Docstrings, logger names, module paths and prose are not keys.
"""

from __future__ import annotations

import ast
import importlib.util
import re
from pathlib import Path

from flow_xray import attributes

PACKAGE = Path(attributes.__file__).parent
ATTRIBUTES = Path(attributes.__file__)

# A key: dotted lowercase words (`gen_ai.usage.input_tokens`, `llm.input_messages.`).
_KEY = re.compile(r"^[a-z][a-z0-9_]*\.[a-z0-9_.{}]*$")


def key_values() -> dict[str, str]:
    """The attributes module's string constants (keys and key prefixes), by name."""
    return {
        name: value
        for name, value in vars(attributes).items()
        if name.isupper() and isinstance(value, str)
    }


def namespaces() -> set[str]:
    """The first word of every dotted key the attributes module defines."""
    return {value.split(".")[0] for value in key_values().values() if "." in value}


def _skipped(tree: ast.AST) -> set[int]:
    """Constants that are not keys: docstrings and logger names (``getLogger("x.y")``)."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (
            isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
        ):
            skipped.add(id(body[0].value))
        if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "getLogger":
            skipped.update(id(arg) for arg in node.args)
    return skipped


def _is_module(text: str) -> bool:
    return text.startswith("flow_xray.") and importlib.util.find_spec(text) is not None


def key_literals(path: Path, spaces: set[str]) -> list[tuple[int, str]]:
    """``(line, literal)`` for each string in ``path`` that looks like an attribute key."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = _skipped(tree)
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in skipped
        and _KEY.match(node.value)
        and node.value.split(".")[0] in spaces
        and not _is_module(node.value)
    ]


def test_no_attribute_key_is_spelled_outside_the_attributes_module() -> None:
    """Only ``flow_xray/attributes.py`` holds attribute-key literals; the rest name them."""
    spaces = namespaces()
    found = [
        f"{path.relative_to(PACKAGE.parent)}:{line}: {text!r}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if path != ATTRIBUTES
        for line, text in key_literals(path, spaces)
    ]
    assert found == []


def test_the_check_finds_a_key_literal(tmp_path: Path) -> None:
    """The scan sees a key in an assignment, a dict, an f-string piece; not in a docstring,
    a logger name or a module path."""
    module = tmp_path / "m.py"
    module.write_text(
        '"""gen_ai.usage.input_tokens in a docstring is prose."""\n'
        'KEY = "gen_ai.usage.input_tokens"\n'
        'd = {"llm.token_count.total": 1}\n'
        'f = f"llm.input_messages.{1}.message.role"\n'
        "import logging\n"
        'logging.getLogger("flow_xray.otlp")\n'
        'MODULE = "flow_xray.tree.model"\n',
        encoding="utf-8",
    )
    assert key_literals(module, namespaces()) == [
        (2, "gen_ai.usage.input_tokens"),
        (3, "llm.token_count.total"),
        (4, "llm.input_messages."),
    ]


def test_every_key_in_the_attributes_module_is_used() -> None:
    """A key nothing reads or writes is dead: each constant is named outside the module
    (or by another constant of it, as the read-order tuples name the deprecated keys)."""
    source = {path: path.read_text(encoding="utf-8") for path in PACKAGE.rglob("*.py")}
    own = source.pop(ATTRIBUTES)
    unused = []
    for name in key_values():
        word = re.compile(rf"\b{name}\b")
        inside = len(word.findall(own)) > 1  # named again after its definition
        if not inside and not any(word.search(text) for text in source.values()):
            unused.append(name)
    assert unused == []
