"""0.3.6's static context (``flow_xray.static_index``, ``flow_xray.merge``), as its users call it.

``build_index(paths)`` indexes source by ``__qualname__`` (``callers``,
``callees``, ``blast_radius``, ``unused``); ``merge_trace_with_static(result,
index)`` joins a run with it (edges ``both`` / ``runtime-only`` /
``static-only``, nodes ``executed`` / ``reachable-but-not-executed``);
``result.to_html(path, static_index=index)`` shows it. Both modules are thin
names over `flow_xray.analysis.static`; where the answers are better than
0.3.6's (calls through untraced helpers, callbacks, a path that does not
exist) the test says so.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType

import pytest

from flow_xray import trace
from flow_xray.errors import SourceError
from flow_xray.export_html import trace_to_standalone_html
from flow_xray.merge import merge_trace_with_static
from flow_xray.render.payload import read_page
from flow_xray.static_index import FuncDef, StaticIndex, build_index

LoadModule = Callable[[Path], ModuleType]


def index_source(tmp_path: Path, source: str, name: str = "mod.py") -> StaticIndex:
    path = tmp_path / name
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    return build_index([path])


@pytest.fixture
def load_module() -> Iterator[LoadModule]:
    """Import a file as a uniquely named module; forget it afterwards."""
    names: list[str] = []

    def load(path: Path) -> ModuleType:
        name = f"flow_xray_compat03_{path.stem}_{len(names)}"
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        names.append(name)
        spec.loader.exec_module(module)
        return module

    yield load
    for name in names:
        sys.modules.pop(name, None)


# --- build_index and its queries ---------------------------------------------------------


def test_flat_function_calls(tmp_path: Path) -> None:
    """``callees`` and ``callers`` by plain function name, sorted."""
    index = index_source(
        tmp_path,
        """
        def plan():
            return 1

        def answer(x):
            return x

        def agent():
            result = plan()
            return answer(result)
        """,
    )
    assert index.callees("agent") == ["answer", "plan"]
    assert index.callers("plan") == ["agent"]
    assert index.callers("answer") == ["agent"]


def test_method_calls_use_qualname(tmp_path: Path) -> None:
    """Methods are ``Class.method``; ``self.m()`` is the class's own method."""
    index = index_source(
        tmp_path,
        """
        class Agent:
            def plan(self):
                return self.choose_tool()

            def choose_tool(self):
                return "search"
        """,
    )
    assert {"Agent.plan", "Agent.choose_tool"} <= set(index.functions)
    assert index.callees("Agent.plan") == ["Agent.choose_tool"]
    assert index.callers("Agent.choose_tool") == ["Agent.plan"]


def test_nested_function_qualname_matches_runtime(tmp_path: Path) -> None:
    """A nested function is ``outer.<locals>.inner``, as its ``__qualname__`` says."""
    index = index_source(
        tmp_path,
        """
        def outer():
            def inner():
                return 1
            return inner()
        """,
    )
    assert "outer.<locals>.inner" in index.functions
    assert index.callees("outer") == ["outer.<locals>.inner"]


def test_blast_radius_is_transitive(tmp_path: Path) -> None:
    """Every caller, and callers of callers; not the function itself."""
    index = index_source(
        tmp_path,
        """
        def a():
            return b()

        def b():
            return c()

        def c():
            return 1
        """,
    )
    assert index.blast_radius("c") == ["a", "b"]
    assert index.blast_radius("b") == ["a"]
    assert index.blast_radius("a") == []


def test_unused_excludes_entry_points_and_called_functions(tmp_path: Path) -> None:
    """Never called, not ``main``: the candidates."""
    index = index_source(
        tmp_path,
        """
        def helper():
            return 1

        def used():
            return helper()

        def main():
            return used()

        def orphan():
            return 2
        """,
    )
    assert index.unused() == ["orphan"]
    assert index.unused(entry_points=()) == ["main", "orphan"]


def test_unused_leaves_out_functions_passed_as_callbacks(tmp_path: Path) -> None:
    """Better than 0.3.6: a function handed to ``map`` or stored in a table is used."""
    index = index_source(
        tmp_path,
        """
        def double(x):
            return 2 * x

        def route():
            return 1

        TABLE = {"route": route}

        def main(xs):
            return list(map(double, xs))
        """,
    )
    assert index.unused() == []


def test_attribute_call_on_unknown_object_records_bare_name(tmp_path: Path) -> None:
    """A callee the source cannot name is recorded by its last name."""
    index = index_source(
        tmp_path,
        """
        import json

        def run(obj):
            print(json.dumps(obj))
            return obj.execute()
        """,
    )
    assert index.callees("run") == ["dumps", "execute", "print"]


def test_function_records_and_module_code(tmp_path: Path) -> None:
    """``FuncDef``: qualname, name, the file relative to the folder indexed, the ``def``
    line, decorators by name; module-level calls come from ``<module>``."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "agent.py").write_text(
        textwrap.dedent(
            """
            from flow_xray import trace

            class Agent:
                @trace(kind="agent")
                def plan(self):
                    return 1

            Agent().plan()
            """
        ),
        encoding="utf-8",
    )
    index = build_index([tmp_path])
    assert index.functions["Agent.plan"] == FuncDef(
        qualname="Agent.plan",
        name="plan",
        file=str(Path("pkg") / "agent.py"),
        lineno=6,
        decorators=["trace"],
    )
    assert index.files == {str(Path("pkg") / "agent.py")}
    assert ("<module>", "Agent.plan") in index.calls


def test_directory_indexing_walks_py_files_and_skips_excluded_dirs(tmp_path: Path) -> None:
    """Folders are walked; ``__pycache__`` (and virtualenvs, build output) are skipped."""
    (tmp_path / "a.py").write_text("def foo():\n    return bar()\n", encoding="utf-8")
    (tmp_path / "b.py").write_text("def bar():\n    return 1\n", encoding="utf-8")
    excluded = tmp_path / "__pycache__"
    excluded.mkdir()
    (excluded / "c.py").write_text("def should_not_appear():\n    return 1\n", encoding="utf-8")

    index = build_index([tmp_path])

    assert {"foo", "bar"} <= set(index.functions)
    assert "should_not_appear" not in index.functions
    assert index.callers("bar") == ["foo"]


def test_exclude_dirs_names_the_folders_to_skip(tmp_path: Path) -> None:
    """``build_index(paths, exclude_dirs={...})`` replaces the default folder list."""
    (tmp_path / "vendor").mkdir()
    (tmp_path / "vendor" / "lib.py").write_text("def vendored():\n    pass\n", encoding="utf-8")
    (tmp_path / "app.py").write_text("def app():\n    pass\n", encoding="utf-8")
    assert set(build_index([tmp_path], exclude_dirs={"vendor"}).functions) == {"app"}
    assert set(build_index([tmp_path]).functions) == {"app", "vendored"}


def test_syntax_error_file_is_skipped_not_raised(tmp_path: Path) -> None:
    """A file that does not parse is left out (and named in ``source.skipped``)."""
    (tmp_path / "broken.py").write_text("def foo(:\n", encoding="utf-8")
    index = build_index([tmp_path])
    assert index.functions == {}
    assert index.source is not None and len(index.source.skipped) == 1


def test_a_path_that_does_not_exist_is_an_error(tmp_path: Path) -> None:
    """Unlike 0.3.6, which indexed nothing for it silently: a typo is a clear error."""
    with pytest.raises(SourceError, match="no such file"):
        build_index([tmp_path / "missing"])


# --- merge_trace_with_static -------------------------------------------------------------


def static_index(functions: list[str], calls: list[tuple[str, str]]) -> StaticIndex:
    """A hand-built index, as 0.3.6's own tests made them."""
    index = StaticIndex()
    for i, name in enumerate(functions):
        index.functions[name] = FuncDef(qualname=name, name=name, file="mod.py", lineno=i + 1)
    index.calls = set(calls)
    return index


@trace
def b() -> int:
    return 1


@trace
def a() -> int:
    return b()


def test_runtime_edge_confirmed_by_static_is_both() -> None:
    """A call that ran and that the index has: ``both``; both functions ``executed``."""
    merged = merge_trace_with_static(trace.run(a), static_index(["a", "b"], [("a", "b")]))
    edge = merged.edges[("a", "b")]
    assert (edge.runtime, edge.static, edge.status) == (True, True, "both")
    assert merged.nodes["a"].status == merged.nodes["b"].status == "executed"


def test_runtime_edge_missing_from_static_is_runtime_only() -> None:
    """A call the index does not have (dynamic dispatch, say): ``runtime-only``."""
    merged = merge_trace_with_static(trace.run(a), static_index(["a", "b"], []))
    edge = merged.edges[("a", "b")]
    assert (edge.runtime, edge.static, edge.status) == (True, False, "runtime-only")
    assert merged.edges[("<module>", "a")].status == "runtime-only"


@trace
def choose_tool() -> str:
    return call_database()


@trace
def call_database() -> str:
    return "db"


def test_static_edge_not_executed_is_static_only() -> None:
    """A branch the source allows but this run did not take."""
    static = static_index(
        ["choose_tool", "call_database", "call_email"],
        [("choose_tool", "call_database"), ("choose_tool", "call_email")],
    )
    merged = merge_trace_with_static(trace.run(choose_tool), static)
    assert merged.edges[("choose_tool", "call_database")].status == "both"
    not_taken = merged.edges[("choose_tool", "call_email")]
    assert (not_taken.runtime, not_taken.static, not_taken.status) == (False, True, "static-only")
    node = merged.nodes["call_email"]
    assert (node.executed, node.static, node.status) == (False, True, "reachable-but-not-executed")


def test_executed_function_missing_from_static_index() -> None:
    """A function the index never saw still shows as executed."""
    node = merge_trace_with_static(trace.run(b), static_index([], [])).nodes["b"]
    assert (node.executed, node.static, node.status) == (True, False, "executed")


def test_static_function_never_executed() -> None:
    """Every function of the index is a node, executed or not."""
    merged = merge_trace_with_static(trace.run(b), static_index(["b", "unused_elsewhere"], []))
    node = merged.nodes["unused_elsewhere"]
    assert (node.executed, node.static, node.status) == (False, True, "reachable-but-not-executed")


AGENT_SOURCE = """
from flow_xray import trace


class Agent:
    @trace
    def plan(self):
        return self.choose_tool()

    @trace
    def choose_tool(self):
        return "search"
"""


def test_traced_qualname_matches_static_index_qualname(
    tmp_path: Path, load_module: LoadModule
) -> None:
    """Against a real file: the run's node names and the index's qualnames agree."""
    path = tmp_path / "agent_mod.py"
    path.write_text(AGENT_SOURCE, encoding="utf-8")
    result = trace.run(load_module(path).Agent().plan)
    executed = {node.name for node in result}
    assert executed == {"Agent.plan", "Agent.choose_tool"}

    index = build_index([path])
    assert executed <= set(index.functions)
    merged = merge_trace_with_static(result, index)
    assert merged.nodes["Agent.plan"].status == "executed"
    assert merged.edges[("Agent.plan", "Agent.choose_tool")].status == "both"


ROUTER_SOURCE = '''
from flow_xray import trace


@trace
def call_search(query):
    return "results"


@trace
def call_database(query):
    if "customers" in query:
        raise RuntimeError("table locked")
    return "rows"


@trace
def fallback(query):
    return "echo"


@trace
def audit_log(event):
    """Wired up by name, as a plugin registry would: the source shows no call."""


def _dispatch(kind, query):
    if kind == "search":
        return call_search(query)
    if kind == "database":
        return call_database(query)
    return fallback(query)


@trace("route")
def choose_tool(kind, query):
    globals()["audit_log"]("dispatch:" + kind)
    return _dispatch(kind, query)


@trace
def agent(query):
    return choose_tool("database", query)
'''


@pytest.fixture
def router(tmp_path: Path, load_module: LoadModule) -> tuple[ModuleType, Path]:
    path = tmp_path / "router.py"
    path.write_text(ROUTER_SOURCE, encoding="utf-8")
    return load_module(path), path


def test_the_router_scenario(router: tuple[ModuleType, Path]) -> None:
    """0.3.6's static-context demo (a failing branch, untaken ones, a dynamic call), with a
    span renamed by ``@trace("route")`` and the branches behind an untraced helper: the
    call is keyed by its function's qualname, and a call the source makes through the
    helper is ``both`` (0.3.6 said ``runtime-only``)."""
    module, path = router
    result = trace.run(module.agent, "select * from customers")
    assert isinstance(result.error, RuntimeError)
    index = build_index([path])
    merged = merge_trace_with_static(result, index)
    status = {pair: edge.status for pair, edge in merged.edges.items()}
    assert status[("agent", "choose_tool")] == "both"
    assert status[("choose_tool", "call_database")] == "both"
    assert status[("choose_tool", "audit_log")] == "runtime-only"
    assert status[("_dispatch", "call_search")] == "static-only"
    assert status[("_dispatch", "fallback")] == "static-only"
    assert merged.nodes["fallback"].status == "reachable-but-not-executed"
    assert merged.nodes["call_database"].status == "executed"
    assert index.blast_radius("call_database") == ["_dispatch", "agent", "choose_tool"]
    assert [c for c in index.callees("_dispatch") if c in index.functions] == [
        "call_database",
        "call_search",
        "fallback",
    ]


def test_to_html_with_static_index_draws_the_untaken_branches(
    router: tuple[ModuleType, Path], tmp_path: Path
) -> None:
    """``result.to_html(path, title=..., static_index=index)``: the page holds the static
    context, the branches that did not run as ghosts under the call that could run them."""
    module, path = router
    result = trace.run(module.agent, "select * from customers")
    out = tmp_path / "static_context_demo.html"
    result.to_html(str(out), title="Static context demo", static_index=build_index([path]))
    static = read_page(out.read_text(encoding="utf-8"))["static"]
    ghosts = sorted(static["functions"][g["function"]]["qualname"] for g in static["ghosts"])
    assert ghosts == ["call_search", "fallback"]
    assert trace_to_standalone_html(result, static_index=build_index([path])).startswith(
        "<!DOCTYPE html>"
    )


def test_to_html_with_a_hand_built_index(tmp_path: Path) -> None:
    """A hand-filled index shows too: its static-only callees are the ghosts."""
    static = static_index(
        ["choose_tool", "call_database", "call_email"],
        [("choose_tool", "call_database"), ("choose_tool", "call_email")],
    )
    page = trace.run(choose_tool).to_html(static_index=static)
    assert [g["function"] for g in read_page(page)["static"]["ghosts"]] == ["call_email"]


def test_static_and_static_index_together_are_refused(router: tuple[ModuleType, Path]) -> None:
    """They are one option under two names: giving both is a TypeError."""
    module, path = router
    index = build_index([path])
    with pytest.raises(TypeError, match="static_index"):
        trace.run(module.fallback, "q").to_html(static=index, static_index=index)


PROGRAM_03 = (
    ROUTER_SOURCE
    + """

if __name__ == "__main__":
    import asyncio
    from pathlib import Path

    from flow_xray.merge import merge_trace_with_static
    from flow_xray.static_index import build_index

    result = trace.run(agent, "select * from customers")
    index = build_index([__file__])
    result.to_html("trace.html", title="router", static_index=index)
    Path("diff.html").write_text(result.diff(trace.run(agent, "select 1")))
    merged = merge_trace_with_static(result, index)
    print("error:", result.error)
    print("blast radius:", index.blast_radius("call_database"))
    print("not taken:", sorted(n for n, m in merged.nodes.items() if not m.executed))

    async def main():
        return await trace.arun(agent, "select 2")

    print("arun:", asyncio.run(main()).return_value)
"""
)


@pytest.mark.slow
def test_a_0_3_program_runs_unchanged(tmp_path: Path) -> None:
    """A whole program written against 0.3.6 (``trace.run``, ``result.error``,
    ``build_index``, ``to_html(static_index=)``, ``a.diff(b)`` written with
    ``write_text``, ``merge_trace_with_static``, ``await trace.arun``), run with
    ``python app.py``: its output, and the two pages it wrote."""
    (tmp_path / "app.py").write_text(PROGRAM_03, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "app.py"], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "error: table locked",
        "blast radius: ['_dispatch', 'agent', 'choose_tool']",
        "not taken: ['_dispatch', 'call_search', 'fallback', 'main']",
        "arun: rows",
    ]
    assert read_page((tmp_path / "trace.html").read_text(encoding="utf-8"))["static"]["ghosts"]
    assert read_page((tmp_path / "diff.html").read_text(encoding="utf-8"))["mode"] == "diff"


def test_the_0_3_modules_load_no_opentelemetry() -> None:
    """Importing ``flow_xray.static_index`` and ``flow_xray.merge`` (fresh interpreter)
    loads no OpenTelemetry: they read source and plain trace data only."""
    code = (
        "import json, sys, flow_xray.static_index, flow_xray.merge\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('opentelemetry'))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert json.loads(out.stdout) == []
