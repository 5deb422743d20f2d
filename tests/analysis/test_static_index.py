"""StaticIndex: functions by qualified name, call sites resolved from source, nothing run."""

from __future__ import annotations

import inspect
import re
import sys
import textwrap
from pathlib import Path

import pytest
from analysis_fixtures import FIXTURES, SHOP

from flow_xray.analysis import Decorator, StaticIndex
from flow_xray.analysis.static.functions import module_name
from flow_xray.errors import SourceError


def write(folder: Path, name: str, source: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(source).lstrip("\n"), encoding="utf-8")
    return path


def test_functions_and_methods_are_keyed_by_module_and_qualname(shop_index: StaticIndex) -> None:
    """Keys are ``package.module.qualname``; module-level code is ``module.<module>``."""
    names = set(shop_index.functions)
    assert {
        "shop.agent.Agent.run",
        "shop.agent.CachedPlanner.plan",
        "shop.tools.search",
        "shop.models.fallback_model",
        "shop.cli.main",
        "shop.cli.<module>",
    } <= names


def test_self_and_attribute_calls_resolve_to_methods(shop_index: StaticIndex) -> None:
    """``self.planner.plan()`` follows ``self.planner = CachedPlanner()`` in ``__init__``;
    ``self.answer()`` is the class's own method."""
    assert shop_index.callees("Agent.run") == [
        "shop.agent.CachedPlanner.plan",
        "shop.agent.each",
        "shop.agent.Agent.answer",
    ]


def test_super_calls_resolve_to_the_base_method(shop_index: StaticIndex) -> None:
    """``super().plan()`` in a subclass is a call of the base class's ``plan``."""
    assert shop_index.callees("CachedPlanner.plan") == ["shop.agent.Planner.plan"]


def test_module_attribute_calls_follow_relative_imports(shop_index: StaticIndex) -> None:
    """``models.primary_model()`` after ``from . import models`` is shop.models.primary_model."""
    assert shop_index.callees("Agent.answer") == [
        "shop.agent.Agent._prompt",
        "shop.models.primary_model",
        "shop.models.fallback_model",
    ]


def test_package_re_exports_and_constructors_resolve(shop_index: StaticIndex) -> None:
    """``from shop import Agent`` (re-exported by shop/__init__.py) then ``Agent(...)`` calls
    ``Agent.__init__``, and ``agent.run()`` on the instance is ``Agent.run``."""
    assert shop_index.callees("shop.cli.main") == [
        "shop.agent.Agent.__init__",
        "shop.agent.Agent.run",
    ]


def test_decorators_are_resolved_and_tell_what_is_traced(shop_index: StaticIndex) -> None:
    """``@tool`` resolves to shop.tools.tool, whose body calls ``trace(kind="tool")``: the
    tools it decorates are traced as tools; a plain function is not traced."""
    search = shop_index.lookup("shop.tools.search")
    assert search.decorators == (Decorator("tool", "shop.tools.tool"),)
    assert (search.traced, search.span_name, search.span_kind) == (True, "search", "tool")
    assert shop_index.lookup("shop.agent.each").traced is False


def test_trace_arguments_give_the_span_name_and_kind(shop_index: StaticIndex) -> None:
    """``@trace("fallback", kind="llm")``: the span would be called "fallback", kind llm."""
    fallback = shop_index.lookup("fallback_model")
    assert fallback.decorators == (Decorator("trace('fallback', kind='llm')", "flow_xray.trace"),)
    assert (fallback.span_name, fallback.span_kind) == ("fallback", "llm")


def test_dynamic_call_sites_are_kept_unresolved(shop_index: StaticIndex) -> None:
    """``TOOLS[step["tool"]](...)`` cannot be named statically: a dynamic site, no target."""
    [site] = shop_index.lookup("Agent.act").calls
    assert (site.text, site.target, site.dynamic) == ("TOOLS[step['tool']]", None, True)


def test_callbacks_are_references_not_calls(shop_index: StaticIndex) -> None:
    """``each(steps, self.act)`` passes Agent.act as a value: a reference, not a callee."""
    run = shop_index.lookup("Agent.run")
    assert [r.target for r in run.references] == ["shop.agent.Agent.act"]
    assert "shop.agent.Agent.act" not in run.callees


def test_callers_lists_every_function_that_calls(shop_index: StaticIndex) -> None:
    """callers() answers from the call sites; a tool only reached by name has no caller."""
    assert shop_index.callers("fallback_model") == ["shop.agent.Agent.answer"]
    assert shop_index.callers("summarize") == ["shop.agent.Agent._prompt"]
    assert shop_index.callers("shop.tools.search") == []


def test_first_line_is_what_the_span_records(shop_index: StaticIndex) -> None:
    """``first_line`` is the decorator line, as ``co_firstlineno`` (and the span) report it."""
    sys.path.insert(0, str(FIXTURES))
    try:
        from shop import agent
    finally:
        sys.path.remove(str(FIXTURES))
    code = inspect.unwrap(agent.Agent.answer).__code__
    info = shop_index.lookup("Agent.answer")
    assert (info.first_line, info.line) == (code.co_firstlineno, code.co_firstlineno + 1)


def test_lookup_names_ambiguous_and_missing_functions(shop_index: StaticIndex) -> None:
    """A short name matching two functions, or none, raises KeyError naming the problem."""
    with pytest.raises(KeyError, match=re.escape("ambiguous: shop.agent.CachedPlanner.plan")):
        shop_index.lookup("plan")
    with pytest.raises(KeyError, match="no function 'nope'"):
        shop_index.lookup("nope")


def test_module_level_instances_resolve_their_methods() -> None:
    """The demo agent's ``llm = FakeChatClient()``, then ``llm.create(...)``, calls
    FakeChatClient.create."""
    examples = Path(__file__).resolve().parents[2] / "flow_xray" / "examples"
    index = StaticIndex.build([examples])
    callees = index.callees("research_agent")
    assert callees[0] == "flow_xray.examples.demo_agent.FakeChatClient.create"


def test_nested_functions_and_classes_are_indexed(tmp_path: Path) -> None:
    """A def inside a def is ``outer.<locals>.inner``; calling it from outer resolves."""
    write(
        tmp_path,
        "nest.py",
        """
        def outer():
            def inner():
                return 1
            class Local:
                def method(self):
                    return inner()
            return Local().method()
        """,
    )
    index = StaticIndex.build([tmp_path])
    assert index.callees("nest.outer") == ["nest.outer.<locals>.Local.method"]
    assert index.callees("nest.outer.<locals>.Local.method") == ["nest.outer.<locals>.inner"]


def test_annotated_parameters_and_string_annotations_resolve(tmp_path: Path) -> None:
    """``def f(c: "Client")`` then ``c.send()`` is Client.send; an unannotated one is dynamic."""
    write(
        tmp_path,
        "ann.py",
        """
        class Client:
            def send(self): ...
        def typed(c: "Client"):
            c.send()
        def untyped(c):
            c.send()
        """,
    )
    index = StaticIndex.build([tmp_path])
    assert index.callees("ann.typed") == ["ann.Client.send"]
    assert [c.dynamic for c in index.lookup("ann.untyped").calls] == [True]


def test_cyclic_aliases_and_bases_end(tmp_path: Path) -> None:
    """``a = b; b = a`` and classes that derive from each other resolve to nothing, quickly."""
    write(
        tmp_path,
        "cyc.py",
        """
        a = b
        b = a
        class A(B): ...
        class B(A):
            def m(self):
                self.n()
        def f():
            a()
            B().m()
        """,
    )
    index = StaticIndex.build([tmp_path])
    assert [c.dynamic for c in index.lookup("cyc.f").calls] == [True, False, False]
    assert index.callees("cyc.f") == ["cyc.B.m"]


def test_building_runs_nothing(tmp_path: Path) -> None:
    """Indexing a file whose import would write a file and exit leaves no trace of running."""
    marker = tmp_path / "ran.txt"
    write(tmp_path, "boom.py", f"open({str(marker)!r}, 'w').write('ran')\nraise SystemExit(3)\n")
    index = StaticIndex.build([tmp_path / "boom.py"])
    assert "boom.<module>" in index.functions
    assert not marker.exists()


def test_unparseable_files_are_skipped_with_the_reason(tmp_path: Path) -> None:
    """A syntax error in one file does not stop the others from being indexed."""
    write(tmp_path, "good.py", "def ok():\n    return 1\n")
    write(tmp_path, "bad.py", "def broken(:\n")
    index = StaticIndex.build([tmp_path])
    assert "good.ok" in index.functions
    [(path, reason)] = index.skipped
    assert path.endswith("bad.py") and reason.startswith("SyntaxError")


def test_hidden_and_virtualenv_folders_are_not_walked(tmp_path: Path) -> None:
    """``.venv``, ``__pycache__`` and dot-folders under a path are left out."""
    write(tmp_path, "app.py", "def main(): ...\n")
    write(tmp_path, ".venv/lib.py", "def vendored(): ...\n")
    write(tmp_path, ".hidden/x.py", "def hidden(): ...\n")
    assert list(StaticIndex.build([tmp_path]).functions) == ["app.<module>", "app.main"]


def test_missing_paths_and_non_python_files_raise_source_error(tmp_path: Path) -> None:
    """A path that is not there, or a file that is not .py, is a SourceError."""
    with pytest.raises(SourceError, match="no such file or folder"):
        StaticIndex.build([tmp_path / "missing"])
    write(tmp_path, "notes.txt", "hello")
    with pytest.raises(SourceError, match="not a Python file"):
        StaticIndex.build([tmp_path / "notes.txt"])


def test_module_names_follow_package_folders() -> None:
    """A file's module name walks up every folder that has an ``__init__.py``."""
    assert module_name(SHOP / "agent.py") == "shop.agent"
    assert module_name(SHOP / "__init__.py") == "shop"


def test_to_dict_is_plain_json_data(shop_index: StaticIndex) -> None:
    """The index as JSON: every function with its decorators and call sites."""
    import json

    data = json.loads(json.dumps(shop_index.to_dict()))
    act = next(f for f in data["functions"] if f["name"] == "shop.agent.Agent.act")
    assert act["decorators"] == ["trace"]
    assert act["calls"][0]["dynamic"] is True
