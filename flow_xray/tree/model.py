"""`TraceNode` and `TraceResult`: the trace tree as plain data.

Nothing here imports OpenTelemetry; renderers only ever see these objects.
The tree is built from span records by `flow_xray.tree.build` (lazily:
`flow_xray.tree.lazy`); its files are `flow_xray.formats`, its analyses
`flow_xray.analysis`, its pages `flow_xray.render`. The convenience methods
kept from 0.2.0 (``to_dict``, ``from_dict``, ``to_json``, ``save``, ``load``,
``totals``, ``diff``, ``to_dot``, ``to_html``) are one-line delegations to
those layers, imported when called: the only place this layer reaches up.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields
from operator import attrgetter
from typing import TYPE_CHECKING, Any

from flow_xray import attributes as attr
from flow_xray.serialize.text import writable
from flow_xray.tree.figures import totals_line

if TYPE_CHECKING:  # the bridge methods' signatures
    from flow_xray.analysis.diff import TraceDiffPage
    from flow_xray.analysis.static.index import StaticIndex
    from flow_xray.analysis.static.qualnames import QualnameIndex

# Each bridge method imports the layer above it when called (``noqa: PLC0415``; RUF100
# too, while the project's own ruff selection leaves PLC0415 to the floor-plan lint run).


@dataclass(eq=False, kw_only=True, slots=True)
class TraceNode:
    """One call: a span with its inputs, output, error, timing and LLM metadata.

    ``start_ms`` is the offset from the start of the trace. ``status`` is
    ``"ok"`` or ``"error"``; ``incomplete`` marks a span that never ended or a
    generator closed before exhaustion. ``meta`` holds ``model``,
    ``prompt_tokens``, ``completion_tokens``, ``total_tokens``,
    ``estimated_cost_usd`` (each only when known) plus ``trace.annotate`` keys.
    ``pid`` is the process that ran the call, when the trace spans processes.

    The accounting fields are derived from the whole tree (see
    `flow_xray.analysis.accounting`): ``usage_counted`` is None when the node
    reports no LLM usage, True when its figure is in the totals, False when
    another span's figure for the same request was counted (``usage_note``
    says which). For a failed node, ``error_origin`` tells whether the
    exception was raised in this call (not merely passed up from a child) and
    ``error_handled`` whether some caller caught it; both are None otherwise.
    """

    id: str
    name: str
    kind: str = "chain"
    inputs: dict[str, Any] = field(default_factory=dict)
    output: Any = None
    error: str | None = None
    traceback: str | None = None
    latency_ms: float | None = None
    start_ms: float = 0.0
    status: str = "ok"
    incomplete: bool = False
    trace_id: str = ""
    span_id: str = ""
    parent_id: str | None = None
    pid: int | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    attributes: dict[str, Any] = field(default_factory=dict)
    events: list[dict[str, Any]] = field(default_factory=list)
    children: list[TraceNode] = field(default_factory=list)
    usage_counted: bool | None = None
    usage_note: str | None = None
    error_origin: bool | None = None
    error_handled: bool | None = None

    @property
    def node_id(self) -> str:
        """0.2.0's name of `id`."""
        return self.id

    @node_id.setter
    def node_id(self, value: str) -> None:
        self.id = value

    @property
    def tags(self) -> dict[str, Any]:
        """0.3's ``node.tags``: labels (True) and key-value tags from ``trace.tag``, read from
        ``attributes`` (``flow_xray.tag.<key>``, or a 0.3.x file's ``tags``); setting replaces them.
        """
        return node_tags(self.attributes)

    @tags.setter
    def tags(self, value: Mapping[str, Any]) -> None:
        kept = {k: v for k, v in self.attributes.items() if not k.startswith(attr.TAG_PREFIX)}
        self.attributes = {**kept, **{attr.TAG_PREFIX + str(k): v for k, v in value.items()}}

    @property
    def start(self) -> float:
        """The start offset in ms from the start of the trace (the same as ``start_ms``)."""
        return self.start_ms

    def __eq__(self, other: object) -> bool:
        """Field-by-field equality of whole subtrees, compared iteratively (deep traces)."""
        if not isinstance(other, TraceNode):
            return NotImplemented
        names = [f.name for f in fields(self) if f.name != "children"]
        pairs = [(self, other)]
        while pairs:
            a, b = pairs.pop()
            a_kids, b_kids = child_nodes(a), child_nodes(b)
            if len(a_kids) != len(b_kids):
                return False
            if any(getattr(a, n) != getattr(b, n) for n in names):
                return False
            pairs.extend(zip(a_kids, b_kids, strict=True))
        return True

    __hash__ = None  # type: ignore[assignment]

    def has_meta(self) -> bool:
        """Whether ``meta`` holds anything (without loading a lazily built node's details)."""
        return bool(self.meta)

    def field_values(self) -> tuple[Any, ...]:
        """The values of every field but ``children``, in field order."""
        return get_data_fields(self)

    def __iter__(self) -> Iterator[TraceNode]:
        """Yield this node and its descendants in pre-order (iteratively)."""
        stack = [self]
        while stack:
            node = stack.pop()
            yield node
            stack.extend(reversed(child_nodes(node)))

    def to_dict(self) -> dict[str, Any]:
        """Return this subtree as JSON-ready plain data (`flow_xray.formats.flow_xray_json`)."""
        from flow_xray.formats.flow_xray_json import node_to_dict  # noqa: PLC0415, RUF100

        return node_to_dict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], path: str = "0") -> TraceNode:
        """Build a subtree from ``to_dict()`` output; unknown keys go to ``attributes``.

        A node without an ``id`` gets one from its position (``n0_2_1``), so ids
        stay stable across loads. ``path`` is this subtree's position.

        Raises:
            TraceFileError: a node is not an object with a string ``name``, or a
                field has the wrong type.
        """
        from flow_xray.formats.flow_xray_json import node_from_dict  # noqa: PLC0415, RUF100

        return node_from_dict(data, path, cls)


def node_tags(attributes: Mapping[str, Any]) -> dict[str, Any]:
    """The tags in a node's ``attributes`` (`TraceNode.tags`), by tag name."""
    old = attributes.get(attr.TAGS_03)
    out: dict[str, Any] = dict(old) if isinstance(old, Mapping) else {}
    start = len(attr.TAG_PREFIX)
    out.update((k[start:], v) for k, v in attributes.items() if k.startswith(attr.TAG_PREFIX))
    return out


DATA_FIELDS = tuple(f.name for f in fields(TraceNode) if f.name != "children")
# Set on a built tree by `flow_xray.analysis.accounting`; the last of `DATA_FIELDS`.
ACCOUNTING_FIELDS = ("usage_counted", "usage_note", "error_origin", "error_handled")
# The fields a node's span gives it: the others, in `DATA_FIELDS` order.
SPAN_FIELDS = DATA_FIELDS[: -len(ACCOUNTING_FIELDS)]
get_data_fields = attrgetter(*DATA_FIELDS)


def new_node(**values: Any) -> TraceNode:
    """A `TraceNode` from keyword fields, without the 0.2.0 argument forms' checks (builders)."""
    node = _new(TraceNode)
    _node_init(node, **values)
    return node


_CHILDREN_SLOT: Any = TraceNode.__dict__["children"]


def child_nodes(node: TraceNode) -> Sequence[TraceNode]:
    """``node.children`` for reading only, without giving a lazily built leaf its list."""
    return _CHILDREN_SLOT.__get__(node, TraceNode)  # type: ignore[no-any-return]


_new = object.__new__


@dataclass(frozen=True)
class Totals:
    """Whole-trace figures for headers and summary lines. ``cost_usd`` is None when unknown.

    ``dropped_spans`` counts the calls a capped capture (``max_spans``) left out.

    Counting rules (`flow_xray.analysis.accounting`): every LLM request is counted
    once, whichever spans report it — tokens and cost sum only the spans whose
    ``usage_counted`` is True. ``errors`` counts failures: each exception once,
    at the span that raised it, however many calls it passed through, handled
    or not (``handled_errors`` of them were caught inside the trace).
    Cancelled and interrupted calls are not errors.
    """

    nodes: int
    errors: int
    wall_time_ms: float
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int
    cost_usd: float | None
    dropped_spans: int = 0
    handled_errors: int = 0
    cancelled: int = 0
    interrupted: int = 0

    def summary(self) -> str:
        """One human line, e.g. ``12 calls, 1 error, 695.7 ms, 1,234 tokens, $0.0042``
        (`flow_xray.tree.figures.totals_line`)."""
        return totals_line(self)


def totals_dict(totals: Totals) -> dict[str, Any]:
    """A `Totals` as plain data (every field it has), as the JSON envelope and pages hold it."""
    return {f.name: getattr(totals, f.name) for f in fields(totals)}


@dataclass(eq=True)
class TraceResult:
    """The calls captured by ``trace.capture()`` / ``trace.run()``, as a forest of `TraceNode`.

    Iterating yields every node in pre-order. For ``trace.run``, ``value`` is
    what the function returned and ``exception`` what it raised (``ok`` tells
    which; 0.3's ``error`` is ``exception``); neither is part of the JSON form.
    ``dropped_spans`` is how many calls a capped capture (``max_spans``) left out.

    Example::

        with trace.capture() as result:
            agent("hello")
        print(result.totals.total_tokens, result.find("agent").latency_ms)
    """

    roots: list[TraceNode] = field(default_factory=list)
    dropped_spans: int = 0
    value: Any = field(default=None, compare=False, repr=False)
    exception: BaseException | None = field(default=None, compare=False, repr=False)
    # What counting the tree found as it was built (`flow_xray.analysis.accounting.count`),
    # for a caller that knows it is unchanged since (a command that just read or captured
    # it); `totals` counts anew.
    _built_counts: Any = field(default=None, init=False, compare=False, repr=False)

    @property
    def return_value(self) -> Any:
        """0.2.0's name of `value`: what the traced function returned."""
        return self.value

    @return_value.setter
    def return_value(self, value: Any) -> None:
        self.value = value

    @property
    def error(self) -> BaseException | None:
        """0.3's name of `exception`: what the traced function raised, or None."""
        return self.exception

    @error.setter
    def error(self, value: BaseException | None) -> None:
        self.exception = value

    @property
    def ok(self) -> bool:
        """True when the traced function (``trace.run``) or block returned normally."""
        return self.exception is None

    def __iter__(self) -> Iterator[TraceNode]:
        for root in self.roots:
            yield from root

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def find(self, name: str) -> TraceNode | None:
        """Return the first node (pre-order) called ``name``, or None.

        A nested function's default span name is its full ``__qualname__``
        (``outer.<locals>.inner``); ``find("inner")`` finds it too.
        """
        return next(iter(self.find_all(name)), None)

    def find_all(self, name: str) -> list[TraceNode]:
        """Return every node called ``name`` (or ``<...>.<locals>.name``), in pre-order."""
        nested = ".<locals>." + name
        return [node for node in self if node.name == name or node.name.endswith(nested)]

    @property
    def totals(self) -> Totals:
        """Node and failure counts, wall time, and token and cost sums, each request once.

        Recomputes the accounting fields of every node first (see `Totals`), so
        the figures match the tree as it is now.
        """
        from flow_xray.analysis.accounting import totals  # noqa: PLC0415, RUF100

        return totals(self)

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON envelope (version 1) as plain data."""
        from flow_xray.formats.flow_xray_json import result_to_dict  # noqa: PLC0415, RUF100

        return result_to_dict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TraceResult:
        """Rebuild a result from ``to_dict()`` output.

        Raises:
            TraceFileError: ``data`` is not a version-1 flow-xray trace.
        """
        from flow_xray.formats.flow_xray_json import result_from_dict  # noqa: PLC0415, RUF100

        return result_from_dict(data, cls)

    def to_json(self, indent: int | None = None) -> str:
        """Return the JSON envelope as text (``default=repr`` keeps odd values readable).

        Lone surrogates (from spans other instrumentations wrote) come out as
        visible ``\\udcXX`` escapes, so the text always encodes as UTF-8. Any call
        depth works (`flow_xray.jsontext`).
        """
        from flow_xray.formats.flow_xray_json import result_to_json  # noqa: PLC0415, RUF100

        return result_to_json(self, indent)

    def save(self, path: str | os.PathLike[str], format: str | None = None) -> None:
        """Write the trace to ``path``: the JSON envelope, or with ``format="compact"`` (the
        default for a ``.fxr`` name) the compact file, a few dozen bytes per call, that
        `load` and ``flow-xray view`` read as well (`flow_xray.formats.registry`).

        Raises:
            ValueError: ``format`` is neither ``"json"`` nor ``"compact"``.
        """
        from flow_xray.formats.registry import save_trace  # noqa: PLC0415, RUF100

        save_trace(self, path, format)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> TraceResult:
        """Read a saved trace: flow-xray JSON or compact (``save`` / ``to_json``), or any other
        format `flow_xray.formats.registry.load_trace` reads (OTLP JSON lines, ...).

        Raises:
            TraceFileError: the file cannot be read or is not a trace.
        """
        from flow_xray.formats.registry import load_trace  # noqa: PLC0415, RUF100

        return load_trace(path)

    def diff(
        self, other: TraceResult, before_label: str = "before", after_label: str = "after"
    ) -> TraceDiffPage:
        """Compare this run with ``other`` call by call (this one is "before").

        The result is the `TraceDiff` and, as 0.3.x returned, the diff page as a
        ``str`` (`TraceDiffPage`): ``Path("diff.html").write_text(a.diff(b))`` works.

        Example::

            diff = TraceResult.load("good.json").diff(TraceResult.load("bad.json"))
            print(diff.summary())  # +1 call, 1 new error, wall time +120 ms (+9%)
        """
        from flow_xray.analysis.diff import TraceDiffPage, diff_traces  # noqa: PLC0415, RUF100

        return TraceDiffPage.of(diff_traces(self, other, before_label, after_label))

    def to_dot(self) -> str:
        """Return the call graph as Graphviz DOT text."""
        from flow_xray.render.trace_graph import result_to_dot  # noqa: PLC0415, RUF100

        return result_to_dot(self)

    def to_html(
        self,
        path: str | os.PathLike[str] | None = None,
        title: str = "flow-xray trace",
        static: StaticIndex | QualnameIndex | None = None,
        select: TraceNode | str | None = None,
        *,
        static_index: StaticIndex | QualnameIndex | None = None,
    ) -> str:
        """Return the self-contained offline viewer page; also write it to ``path`` if given.

        With ``static`` (0.3: ``static_index``; a `StaticIndex` of the program's source,
        or 0.3's ``build_index`` result) the page also shows the static context:
        functions that could have run from the calls that did, as dashed ghost
        nodes, and each call's static callers and callees.
        ``select`` (a node of this trace, or its ``span_id``) is the call the page
        opens on, instead of the overview's choice (the root-cause failure).
        A title UTF-8 cannot encode (a lone surrogate) is shown with visible escapes.

        Raises:
            TypeError: both ``static`` and ``static_index`` are given.
        """
        from flow_xray.analysis.static.qualnames import as_static_index  # noqa: PLC0415, RUF100
        from flow_xray.render.trace_page import result_to_html  # noqa: PLC0415, RUF100

        if static_index is not None:
            if static is not None:
                raise TypeError("to_html got both static= and static_index= (the same option)")
            static = static_index
        index = None if static is None else as_static_index(static)
        return result_to_html(self, path, writable(title), index, select)

    # The notebook bridge: Jupyter (and VS Code) ask these for a result shown in a cell;
    # how it is shown lives in `flow_xray.integrations.notebook`, imported on first use.

    def _repr_html_(self) -> str:
        """The viewer inline, in a sandboxed iframe (`flow_xray.integrations.notebook`)."""
        from flow_xray.integrations.notebook import trace_html  # noqa: PLC0415 (the bridge)

        return trace_html(self)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        """IPython's text form: one summary line, not every node (`trace_text`)."""
        from flow_xray.integrations.notebook import trace_text  # noqa: PLC0415 (the bridge)

        printer.text(trace_text(self))


# -- 0.2.0's and 0.3.x's constructor forms ------------------------------------------
# 0.2.0's TraceNode was ``TraceNode(name, node_id, inputs, output=None, error=None,
# start_ms=0.0, latency_ms=0.0, children=[], meta={})`` and its TraceResult
# ``TraceResult(roots, return_value=None)``; 0.3.x added ``kind`` and ``tags`` after
# ``meta``, and ``error=`` (the exception) to TraceResult. The dataclass __init__s are
# keyword-only; these wrappers add those positional and keyword forms, and refuse
# (TypeError) anything that could land in the wrong field.

_NODE_POSITIONAL_020 = (
    "name",
    "id",
    "inputs",
    "output",
    "error",
    "start_ms",
    "latency_ms",
    "children",
    "meta",
    "kind",
    "tags",
)
_node_init = TraceNode.__init__
_result_init = TraceResult.__init__


def _trace_node_init(self: TraceNode, *args: Any, **kwargs: Any) -> None:
    if len(args) > len(_NODE_POSITIONAL_020):
        raise TypeError(
            f"TraceNode takes at most {len(_NODE_POSITIONAL_020)} positional arguments "
            f"(0.3's order: {', '.join(_NODE_POSITIONAL_020)}), got {len(args)}"
        )
    if "node_id" in kwargs:
        node_id = kwargs.pop("node_id")
        if "id" in kwargs and kwargs["id"] != node_id:
            raise TypeError("TraceNode got both id= and node_id= (the same field) with two values")
        kwargs["id"] = node_id
    for key, value in zip(_NODE_POSITIONAL_020, args, strict=False):
        if key in kwargs:
            raise TypeError(f"TraceNode got {key!r} both by position and by keyword")
        kwargs[key] = value
    tags = kwargs.pop("tags", None)
    if kwargs.get("kind", "") is None:  # 0.3.x: no kind given
        del kwargs["kind"]
    _node_init(self, **kwargs)
    if tags:
        self.tags = tags


def _trace_result_init(self: TraceResult, *args: Any, **kwargs: Any) -> None:
    if len(args) > 3:
        raise TypeError("TraceResult takes at most 3 positional arguments (roots, value, error)")
    for (old, key), value in zip(_RESULT_NAMES, args[1:], strict=False):
        if old in kwargs or key in kwargs:
            raise TypeError(f"TraceResult got {old!r} both by position and by keyword")
        kwargs[key] = value
    for old, key in _RESULT_NAMES:
        if old in kwargs:
            if key in kwargs:
                raise TypeError(f"TraceResult got both {key} and {old} (the same field)")
            kwargs[key] = kwargs.pop(old)
    _result_init(self, *args[:1], **kwargs)


_RESULT_NAMES = (("return_value", "value"), ("error", "exception"))  # 0.2.0's / 0.3's, ours


TraceNode.__init__ = _trace_node_init  # type: ignore[method-assign]
TraceResult.__init__ = _trace_result_init  # type: ignore[method-assign]
