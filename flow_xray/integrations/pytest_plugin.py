"""The pytest plugin: a trace page for every failing test, and a fixture to assert on calls.

Installed with flow-xray (a ``pytest11`` entry point named ``flow_xray``) and
off unless asked: without ``--flow-xray`` it adds two options and a fixture,
loads no OpenTelemetry and writes nothing.

``pytest --flow-xray`` (folder ``.flow-xray/`` under pytest's rootdir) or
``pytest --flow-xray=DIR`` (relative to the current folder) runs each test in
its own ``trace.capture(all_threads=True, processes=True)``, from its setup
through its teardown: every thread, and Python child processes. For each
failing test (failed, error in setup or teardown, strict XPASS) it writes
``DIR/<test id>.html`` (the viewer, opened on the failure) and
``DIR/<test id>.json`` (`TraceResult.load` reads it back), and the terminal
summary lists them in a ``flow-xray`` section. ``--flow-xray-all`` writes
every test's pair. Pages are only ever written, never deleted: a test's page
is replaced when the test is run again.

- The test function itself runs as a traced call (named like the test, its
  fixture values as inputs, its id in ``test.case.name``), so an assertion
  failing in the test is a node too, and the page opens on the call where
  the failure started: below the test's node, the failing call it came from.
  A failure in setup or teardown opens on the failing call there, if a
  traced one raised it.
- File names are the test id made safe on every OS (letters, digits, ``.``,
  ``_``, ``-``; at most 120 of them) plus 8 hex digits of its SHA-1, so two
  ids never share a file. The ``.gitignore`` of a folder this plugin creates
  ignores everything in it.
- ``pytest-xdist``: each worker captures and writes its own tests' files;
  the page's path travels to the controller on the teardown report (a
  ``flow_xray_trace`` user property, which JUnit XML records too), and the
  controller's summary lists every worker's pages.
- Async tests (``pytest-asyncio``) run their body inside the test's traced
  call; a test opening its own ``trace.capture()`` sees its calls, and so
  does the plugin's capture.
- Child processes find their parent through two environment variables set
  while tests run (``FLOW_XRAY_CHANNEL`` and a ``PYTHONPATH`` entry, see
  `trace.capture`); a module- or session-scoped fixture is set up inside the
  first test that needs it, so its calls are in that test's trace.

``--flow-xray`` takes its folder only as ``--flow-xray=DIR``: a path after a
bare ``--flow-xray`` stays a test path (``pytest --flow-xray tests/``).

The ``flow_xray_trace`` fixture works with or without ``--flow-xray``: see `LiveTrace`.
"""

from __future__ import annotations

import contextvars
import hashlib
import inspect
import re
from collections.abc import Callable, Generator, Iterator
from contextlib import ExitStack
from functools import wraps
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import pytest

import flow_xray

if TYPE_CHECKING:
    from flow_xray.tree.model import Totals, TraceNode, TraceResult

__all__ = ["LiveTrace", "failure_node", "flow_xray_trace", "page_name"]

DEFAULT_FOLDER: Final = ".flow-xray"
#: The user property carrying a written page's path on a test's teardown report.
PAGE_PROPERTY: Final = "flow_xray_trace"
#: ... and the reason a test's page could not be written.
PROBLEM_PROPERTY: Final = "flow_xray_trace_error"
#: The attribute naming the test on its traced call (OpenTelemetry's test semantic conventions).
TEST_ATTRIBUTE: Final = "test.case.name"

_SAFE_MAX: Final = 120
_UNSAFE: Final = re.compile(r"[^A-Za-z0-9._-]+")
_RESERVED: Final = frozenset(
    {"CON", "PRN", "AUX", "NUL"} | {f"{port}{n}" for port in ("COM", "LPT") for n in range(1, 10)}
)


def page_name(nodeid: str) -> str:
    """The file name (no suffix) of a test's page: readable, safe on every OS, unique per id.

    Example::

        page_name("tests/test_agent.py::test_budget[gpt-4o]")
        # 'tests_test_agent.py--test_budget_gpt-4o-' + 8 hex digits
    """
    readable = _UNSAFE.sub("_", nodeid.replace("::", "--"))[:_SAFE_MAX].strip("._")
    if readable.split(".")[0].upper() in _RESERVED:  # Windows' device names, any suffix
        readable = "_" + readable
    digest = hashlib.sha1(nodeid.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{readable}-{digest}" if readable else digest


# -- the fixture --------------------------------------------------------------------


class LiveTrace:
    """The calls the current test's function has made so far (the ``flow_xray_trace`` fixture).

    Each read sees every call made from the start of the test function until
    then, in any thread or Python child process, as plain `TraceNode` trees;
    calls made by fixtures during setup are not counted. A call still running
    when read (the traced helper the read is made in, a thread's) shows as
    incomplete, and calls it makes after the read show as calls of their own.
    Works with or without ``--flow-xray``.

    Example::

        def test_agent_budget(flow_xray_trace):
            agent("What is 2 + 2?")
            assert flow_xray_trace.totals.total_tokens < 2_000
            assert flow_xray_trace.totals.cost_usd < 0.01
            assert flow_xray_trace.count("search") == 1
            assert not flow_xray_trace.errors, flow_xray_trace.errors
    """

    def __init__(self) -> None:
        self._roots: list[TraceNode] = []
        self._stack: ExitStack | None = None
        self._open: TraceResult | None = None

    @property
    def result(self) -> TraceResult:
        """The calls so far as a `TraceResult` (to ``to_html``, ``save``, ``find``...)."""
        if self._stack is not None:
            self._stop()
            self._start()
        return flow_xray.TraceResult(roots=list(self._roots))

    @property
    def totals(self) -> Totals:
        """Calls, failures, wall time, tokens and cost so far (each LLM request once)."""
        return self.result.totals

    @property
    def roots(self) -> list[TraceNode]:
        """The outermost calls so far, in start order."""
        return self.result.roots

    @property
    def errors(self) -> list[TraceNode]:
        """Each failure so far once, at the call that raised it (handled ones too)."""
        result = self.result
        if result.totals.errors == 0:  # totals also marks each failure's origin
            return []
        return [node for node in result if node.error_origin]

    def find(self, name: str) -> TraceNode | None:
        """The first call named ``name`` (see `TraceResult.find`), or None."""
        return self.result.find(name)

    def find_all(self, name: str) -> list[TraceNode]:
        """Every call named ``name``, in pre-order."""
        return self.result.find_all(name)

    def count(self, name: str) -> int:
        """How many calls named ``name`` were made."""
        return len(self.find_all(name))

    def __iter__(self) -> Iterator[TraceNode]:
        return iter(self.result)

    def __len__(self) -> int:
        return len(self.result)

    def _start(self) -> None:
        stack = ExitStack()
        self._open = stack.enter_context(flow_xray.trace.capture(all_threads=True, processes=True))
        self._stack = stack

    def _stop(self) -> None:
        stack, self._stack = self._stack, None
        if stack is not None and self._open is not None:
            stack.close()
            self._roots.extend(self._open.roots)
            self._open = None


_VIEW: Final = pytest.StashKey[LiveTrace]()


@pytest.fixture
def flow_xray_trace(request: pytest.FixtureRequest) -> Iterator[LiveTrace]:
    """The calls the test function makes, for assertions: tokens, cost, calls, errors.

    See `LiveTrace`.
    """
    view = LiveTrace()
    request.node.stash[_VIEW] = view
    yield view
    view._stop()


# -- options and the traced test function -------------------------------------------------


def pytest_addoption(parser: pytest.Parser) -> None:
    """``--flow-xray[=DIR]`` and ``--flow-xray-all``."""
    group = parser.getgroup("flow-xray", "flow-xray: a trace page for every failing test")
    group.addoption(
        "--flow-xray",
        dest="flow_xray",
        nargs="?",
        const="",
        default=None,
        metavar="DIR",
        help=f"write a trace page (HTML + JSON) for each failing test to DIR "
        f"(given as --flow-xray=DIR; default: {DEFAULT_FOLDER}/ under the rootdir)",
    )
    group.addoption(
        "--flow-xray-all",
        dest="flow_xray_all",
        action="store_true",
        help="with --flow-xray (implied): write the pages of passing tests too",
    )


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(
    early_config: pytest.Config, parser: pytest.Parser, args: list[str]
) -> None:
    """Read a bare ``--flow-xray`` as the default folder, so the word after it stays a path."""
    bare = [i for i, arg in enumerate(args[: _end_of_options(args)]) if arg == "--flow-xray"]
    if not bare:
        return
    for i in bare:
        args[i] = "--flow-xray="
    # pytest read the command line once before this hook; the initial conftests come
    # from the test paths of that reading, which took the path as the folder.
    early_config.known_args_namespace.file_or_dir = parser.parse_known_args(args).file_or_dir


def _end_of_options(args: list[str]) -> int:
    return args.index("--") if "--" in args else len(args)


def pytest_configure(config: pytest.Config) -> None:
    """Start recording when ``--flow-xray`` or ``--flow-xray-all`` is given."""
    folder = config.getoption("flow_xray")
    keep_all = bool(config.getoption("flow_xray_all"))
    if folder is None and not keep_all:
        return
    where = config.rootpath / DEFAULT_FOLDER if not folder else Path(folder)
    if not where.is_absolute():
        where = config.invocation_params.dir / where
    config.pluginmanager.register(Recorder(config, where, keep_all), "flow-xray-recorder")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, Any, Any]:
    """Run the test function as a traced call while a capture or the fixture wants it."""
    wanted = _RUN in item.stash or _VIEW in item.stash
    if not wanted or not isinstance(item, pytest.Function):
        return (yield)
    original = item.obj
    item.obj = _traced_test(item, original, item.stash.get(_VIEW, None))
    try:
        return (yield)
    finally:
        item.obj = original


def _traced_test(item: pytest.Function, test: Any, view: LiveTrace | None) -> Any:
    """``test`` as a traced call named like the test; the fixture's view starts inside it."""
    body: Callable[..., Any] = test
    if view is not None:
        body = (
            _async_viewed(test, view) if inspect.iscoroutinefunction(test) else _viewed(test, view)
        )
    options = {TEST_ATTRIBUTE: item.nodeid}
    return flow_xray.trace(name=item.name, attributes=options)(body)


def _viewed(test: Callable[..., Any], view: LiveTrace) -> Callable[..., Any]:
    @wraps(test)
    def run(*args: Any, **kwargs: Any) -> Any:
        view._start()
        try:
            return test(*args, **kwargs)
        finally:
            view._stop()

    return run


def _async_viewed(test: Callable[..., Any], view: LiveTrace) -> Callable[..., Any]:
    @wraps(test)
    async def run(*args: Any, **kwargs: Any) -> Any:
        view._start()
        try:
            return await test(*args, **kwargs)
        finally:
            view._stop()

    return run


# -- recording: one capture per test, pages for the failing ones ----------------------------


class _TestRun:
    """One test's capture, from setup through teardown, and how the test failed, if it did."""

    def __init__(self) -> None:
        self.stack = ExitStack()
        self.result = self.stack.enter_context(
            flow_xray.trace.capture(all_threads=True, processes=True)
        )
        self.failure: tuple[str, str] | None = None  # (phase, exception type name)

    def close(self) -> TraceResult:
        self.stack.close()
        return self.result


_RUN: Final = pytest.StashKey[_TestRun]()


class Recorder:
    """The active plugin (registered by `pytest_configure` under ``--flow-xray``)."""

    def __init__(self, config: pytest.Config, folder: Path, keep_all: bool) -> None:
        self.config = config
        self.folder = folder
        self.keep_all = keep_all
        self.pages: list[tuple[str, str]] = []  # (test id, page path), as reported
        self.problems: list[tuple[str, str]] = []
        self.errors: set[str] = set()  # tests failing outside their call phase
        self.failed: set[str] = set()
        self._channel: tuple[contextvars.Context, ExitStack] | None = None

    def _keep_the_channel_open(self) -> None:
        """Hold one ``processes=True`` capture open while tests run here.

        The channel child processes report to lives while any processes capture
        is open (`trace.capture`); without this one, each test's capture would
        start and stop it, a few times the cost of the capture itself. It is
        opened in an empty context where nothing runs, so it collects nothing;
        and only where tests run (not on an xdist controller, whose workers would
        otherwise report to it).
        """
        context = contextvars.Context()
        stack = ExitStack()
        context.run(stack.enter_context, flow_xray.trace.capture(processes=True))
        self._channel = context, stack

    def pytest_unconfigure(self) -> None:
        if self._channel is not None:
            context, stack = self._channel
            self._channel = None
            context.run(stack.close)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Generator[None, Any, Any]:
        if self._channel is None:
            self._keep_the_channel_open()
        run = item.stash[_RUN] = _TestRun()
        try:
            return (yield)
        finally:
            run.close()  # already closed at the teardown report, unless pytest stopped early
            del item.stash[_RUN]

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        report = yield
        run = item.stash.get(_RUN, None)
        if run is None:
            return report
        if report.failed and run.failure is None:
            typename = call.excinfo.typename if call.excinfo is not None else ""
            run.failure = (call.when, typename)
        if call.when == "teardown" and (run.failure is not None or self.keep_all):
            prop = self._write(item, run.close(), run.failure)
            report.user_properties = [*report.user_properties, prop]
        return report

    def _write(
        self, item: pytest.Item, result: TraceResult, failure: tuple[str, str] | None
    ) -> tuple[str, str]:
        """Write the test's page and JSON; the user property saying where (or why not)."""
        stem = page_name(item.nodeid)
        try:
            if not self.folder.is_dir():
                self.folder.mkdir(parents=True, exist_ok=True)
                (self.folder / ".gitignore").write_text("# written by flow-xray\n*\n")
            select = failure_node(result, item.nodeid, *failure) if failure else None
            page = self.folder / f"{stem}.html"
            result.to_html(page, title=item.nodeid, select=select)
            result.save(self.folder / f"{stem}.json")
        except Exception as exc:  # a full disk must not fail the run, nor hide other pages
            return PROBLEM_PROPERTY, f"{type(exc).__name__}: {exc}"
        return PAGE_PROPERTY, self._shown(page)

    def _shown(self, path: Path) -> str:
        try:
            return str(path.relative_to(self.config.invocation_params.dir))
        except ValueError:
            return str(path)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.failed:
            (self.failed if report.when == "call" else self.errors).add(report.nodeid)
        if report.when != "teardown":
            return
        for name, value in report.user_properties:
            if name == PAGE_PROPERTY:
                self.pages.append((report.nodeid, str(value)))
            elif name == PROBLEM_PROPERTY:
                self.problems.append((report.nodeid, str(value)))

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        """The ``flow-xray`` section: each failing test and its page."""
        write = terminalreporter.write_line
        terminalreporter.write_sep("=", "flow-xray")
        failing = [(n, p) for n, p in self.pages if n in self.failed or n in self.errors]
        for nodeid, path in failing:
            outcome = "FAILED" if nodeid in self.failed else "ERROR"
            write(f"{outcome} {nodeid} -> {path}")
        passing = len(self.pages) - len(failing)
        if passing:
            write(f"{passing} more page(s) of passing tests in {self._shown(self.folder)}")
        for nodeid, problem in self.problems:
            write(f"could not write the page of {nodeid}: {problem}")
        if not self.pages and not self.problems:
            write("no failing tests: no pages written")


# -- which call the page opens on ----------------------------------------------------------


def failure_node(result: TraceResult, nodeid: str, phase: str, error_type: str) -> TraceNode | None:
    """The call a failing test's page opens on: where its failure started.

    When the test function failed (``phase`` ``"call"``): below the test's own
    node, the failing child it failed with, and so on down. When setup or
    teardown failed: the last call in the trace that failed with ``error_type``
    and was not handled, and down from there. None when no call failed so.
    """
    nodes = list(result)
    start = None
    if phase == "call":
        start = next((n for n in nodes if n.attributes.get(TEST_ATTRIBUTE) == nodeid), None)
    if start is None or start.status != "error":
        failed = [
            n
            for n in nodes
            if n.status == "error" and not n.error_handled and _error_type(n) == error_type
        ]
        start = max(failed, key=lambda n: n.start_ms, default=None)
    return None if start is None else _origin(start)


def _origin(node: TraceNode) -> TraceNode:
    """Down from a failed call to where its failure was raised: the last child failing
    with the same exception type, until none does."""
    while True:
        kind = _error_type(node)
        same = [c for c in node.children if c.status == "error" and _error_type(c) == kind]
        if not same:
            return node
        node = same[-1]


def _error_type(node: TraceNode) -> str:
    return (node.error or "").partition(":")[0].strip()
