"""`TraceNode` and `TraceResult`: the trace tree as plain data, and its JSON envelope.

Nothing here imports OpenTelemetry; renderers only ever see these objects or
their ``to_dict()`` form. JSON envelope, version 1::

    {"version": 1, "totals": {...}, "nodes": [{"id": ..., "name": ..., "children": [...]}, ...]}
"""

from __future__ import annotations

import os
from collections.abc import Callable, Container, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields
from operator import attrgetter
from typing import TYPE_CHECKING, Any, Final, Protocol, cast

from flow_xray import jsontext
from flow_xray.errors import TraceFileError
from flow_xray.files import write_text_atomic
from flow_xray.serialize.text import has_unwritable, writable, writable_data
from flow_xray.tree.accounting import analyze

if TYPE_CHECKING:
    from flow_xray.analysis.diff import TraceDiff
    from flow_xray.analysis.static_index import StaticIndex

SCHEMA_VERSION = 1


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
    `flow_xray.tree.accounting`): ``usage_counted`` is None when the node
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
        return _get_data_fields(self)

    def __iter__(self) -> Iterator[TraceNode]:
        """Yield this node and its descendants in pre-order (iteratively)."""
        stack = [self]
        while stack:
            node = stack.pop()
            yield node
            stack.extend(reversed(child_nodes(node)))

    def to_dict(self) -> dict[str, Any]:
        """Return this subtree as JSON-ready plain data."""
        out: dict[str, Any] = {}
        # Iterative on purpose: traces can be deeper than Python's recursion limit.
        stack: list[tuple[TraceNode, dict[str, Any]]] = [(self, out)]
        while stack:
            node, target = stack.pop()
            target.update(zip(DATA_FIELDS, node.field_values(), strict=True))
            if not target["meta"]:
                del target["meta"]  # as in 0.2.0: no "meta" key when there is none
            children = child_nodes(node)
            kids: list[dict[str, Any]] = [{} for _ in children]
            target["children"] = kids
            stack.extend(zip(children, kids, strict=True))
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], path: str = "0") -> TraceNode:
        """Build a subtree from ``to_dict()`` output; unknown keys go to ``attributes``.

        A node without an ``id`` gets one from its position (``n0_2_1``), so ids
        stay stable across loads. ``path`` is this subtree's position.

        Raises:
            TraceFileError: a node is not an object with a string ``name``, or a
                field has the wrong type.
        """
        known = {f.name for f in fields(cls)} - {"children"}
        make: Callable[..., TraceNode] = new_node if cls is TraceNode else cls  # no 0.2.0 forms
        checked: set[tuple[Any, ...]] = set()
        nodes: list[TraceNode] = []
        stack: list[tuple[Any, TraceNode | None, str]] = [(data, None, path)]
        while stack:
            item, parent, where = stack.pop()
            if not isinstance(item, Mapping) or not isinstance(item.get("name"), str):
                raise TraceFileError(f"trace node {where}: must be an object with a string 'name'")
            kwargs = {k: v for k, v in item.items() if k != "children"}
            if not known.issuperset(kwargs):
                extra = {k: kwargs.pop(k) for k in [k for k in kwargs if k not in known]}
                kwargs["attributes"] = {**extra, **(kwargs.get("attributes") or {})}
            kwargs.setdefault("id", f"n{where}")
            if "status" not in item and isinstance(item.get("error"), str):
                kwargs["status"] = "error"  # 0.2.0's nodes had no status: an error is one
            # Nodes of one function share their keys and value types: each set checked once.
            signature = (*kwargs, *map(type, kwargs.values()))
            if signature not in checked:
                _check_types(kwargs, where)
                if len(checked) < 4096:
                    checked.add(signature)
            children = item.get("children") or []
            if not isinstance(children, list):
                raise TraceFileError(f"trace node {where}: 'children' must be a list")
            node = make(**kwargs)
            nodes.append(node)
            if parent is not None:
                parent.children.append(node)
            stack.extend(
                (child, node, f"{where}_{i}") for i, child in reversed(list(enumerate(children)))
            )
        return nodes[0]


DATA_FIELDS = tuple(f.name for f in fields(TraceNode) if f.name != "children")
# Set on a built tree by `flow_xray.tree.accounting`; the last of `DATA_FIELDS`.
ACCOUNTING_FIELDS = ("usage_counted", "usage_note", "error_origin", "error_handled")
# The fields a node's span gives it: the others, in `DATA_FIELDS` order.
SPAN_FIELDS = DATA_FIELDS[: -len(ACCOUNTING_FIELDS)]
_get_data_fields = attrgetter(*DATA_FIELDS)


def new_node(**values: Any) -> TraceNode:
    """A `TraceNode` from keyword fields, without the 0.2.0 argument forms' checks (builders)."""
    node = _new(TraceNode)
    _node_init(node, **values)
    return node


_FIELD_TYPES: dict[str, tuple[type, ...]] = {
    "id": (str,),
    "kind": (str,),
    "inputs": (dict,),
    "error": (str, type(None)),
    "traceback": (str, type(None)),
    "latency_ms": (int, float, type(None)),
    "start_ms": (int, float),
    "status": (str,),
    "incomplete": (bool,),
    "trace_id": (str,),
    "span_id": (str,),
    "parent_id": (str, type(None)),
    "pid": (int, type(None)),
    "meta": (dict,),
    "attributes": (dict,),
    "events": (list,),
    "usage_counted": (bool, type(None)),
    "usage_note": (str, type(None)),
    "error_origin": (bool, type(None)),
    "error_handled": (bool, type(None)),
}


def _check_types(kwargs: Mapping[str, Any], where: str) -> None:
    for key, value in kwargs.items():
        expected = _FIELD_TYPES.get(key)
        if expected is not None and not isinstance(value, expected):
            names = " or ".join("null" if t is type(None) else t.__name__ for t in expected)
            raise TraceFileError(f"trace node {where}: {key!r} must be {names}, got {value!r:.60}")


class NodeSource(Protocol):
    """Where a `LazyNode` gets its details: the span it was built from. Nodes count their
    positions from the source's ``base`` (the row of their span in ``reader``'s store)."""

    @property
    def reader(self) -> RowReader:
        """Reads the spans' rows."""

    @property
    def base(self) -> int:
        """The row of position 0."""

    def node(self, at: int) -> TraceNode:
        """The fully built node for position ``at``."""


class RowReader(Protocol):
    """Reads many unfilled nodes' details at once (`flow_xray.tree.flat`)."""

    def columns(self, rows: Sequence[int]) -> list[list[Any]]:
        """The `LAZY_FIELDS` of these rows' nodes as columns (one list per field, in order),
        details as JSON text (`JsonText`) where the span holds them so."""


# Fields a `LazyNode` fills from its span on first use; the others are set when it is built.
LAZY_FIELDS = (
    "id",
    "kind",
    "inputs",
    "output",
    "error",
    "traceback",
    "latency_ms",
    "start_ms",
    "incomplete",
    "trace_id",
    "span_id",
    "parent_id",
    "pid",
    "meta",
    "attributes",
    "events",
)


class _Deferred:
    """A field of `LazyNode`: its slot, filled from the span first while the node is unfilled."""

    __slots__ = ("slot",)

    def __init__(self, slot: Any) -> None:
        self.slot = slot

    def __get__(self, node: Any, owner: Any = None) -> Any:
        if node is None:
            return self
        if node._source is not None:
            node.fill()
        return self.slot.__get__(node, owner)

    def __set__(self, node: Any, value: Any) -> None:
        if node._source is not None:
            node.fill()
        self.slot.__set__(node, value)

    def __delete__(self, node: Any) -> None:
        if node._source is not None:
            node.fill()
        self.slot.__delete__(node)


class LazyNode(TraceNode):
    """A `TraceNode` built from a captured span whose details are decoded on first use.

    A million-call trace builds its tree in seconds and small because only the
    tree (``name``, ``status``, ``children`` and the accounting fields) is made
    up front; reading or writing any other field (``inputs``, ``attributes``,
    ``id``, ...) first fills them all from the span, once. A node whose span
    carries metadata is filled when built. It is a `TraceNode` in every other
    way: equal to an eager node with the same fields, picklable, mutable.
    """

    __slots__ = ("_at", "_source")
    _at: int
    _source: NodeSource | None

    def fill(self) -> None:
        """Decode the fields from the span (a no-op once done)."""
        source = self._source
        if source is None:
            return
        full = source.node(self._at)
        self._source = None
        for name in LAZY_FIELDS:
            slot = _SLOTS[name]
            slot.__set__(self, slot.__get__(full, TraceNode))

    def field_values(self) -> tuple[Any, ...]:
        source = self._source
        if source is None:
            return _get_data_fields(self)
        # Read from a node decoded for the purpose: this node stays unfilled (and small).
        full = source.node(self._at)
        for name in _EAGER_FIELDS:
            setattr(full, name, getattr(self, name))
        return _get_data_fields(full)

    def has_meta(self) -> bool:
        # Unfilled means no metadata: nodes with some are filled when built.
        return self._source is None and bool(self.meta)

    def __getstate__(self) -> Any:
        self.fill()
        return object.__getstate__(self)  # type: ignore[attr-defined]

    def __setstate__(self, state: Any) -> None:
        self._source = None
        _, slots = state
        for name, value in slots.items():
            setattr(self, name, value)


_SLOTS = {name: TraceNode.__dict__[name] for name in LAZY_FIELDS}
_CHILDREN_SLOT: Any = TraceNode.__dict__["children"]
# A lazily built leaf holds this instead of an empty list of its own (56 bytes
# each, a million of them in a big trace) until its ``children`` is read.
_NO_CHILDREN: Final[tuple[()]] = ()


def child_nodes(node: TraceNode) -> Sequence[TraceNode]:
    """``node.children`` for reading only, without giving a lazily built leaf its list."""
    return _CHILDREN_SLOT.__get__(node, TraceNode)  # type: ignore[no-any-return]


def unfilled_rows(nodes: Iterable[TraceNode]) -> tuple[list[RowReader | None], list[int]]:
    """For each node, the reader of its span's row and the row if it is a lazily built node
    not yet filled (its details are read from there), else None and -1."""
    sources = [node._source if type(node) is LazyNode else None for node in nodes]
    readers = [None if source is None else source.reader for source in sources]
    rows = [
        -1 if source is None else source.base + node._at  # type: ignore[attr-defined]
        for node, source in zip(nodes, sources, strict=True)
    ]
    return readers, rows


class _Children:
    """``LazyNode.children``: a leaf's list is made when first read (see `_NO_CHILDREN`)."""

    def __get__(self, node: Any, owner: Any = None) -> Any:
        if node is None:
            return self
        children = _CHILDREN_SLOT.__get__(node, owner)
        if children is _NO_CHILDREN:
            children = []
            _CHILDREN_SLOT.__set__(node, children)
        return children

    def __set__(self, node: Any, value: Any) -> None:
        _CHILDREN_SLOT.__set__(node, value)


LazyNode.children = _Children()  # type: ignore[assignment]
_EAGER_FIELDS = tuple(n for n in DATA_FIELDS if n not in LAZY_FIELDS)
for _name in LAZY_FIELDS:
    setattr(LazyNode, _name, _Deferred(_SLOTS[_name]))


def lazy_nodes(
    source: Callable[[int], NodeSource],
    positions: Sequence[int],
    names: Sequence[str],
    statuses: Sequence[str],
    filled: Container[int] = (),
) -> list[TraceNode]:
    """A `LazyNode` for each of ``positions``, details not yet decoded.

    ``source(base)`` gives the `NodeSource` of the positions from ``base`` on
    (called once per block of 256). ``names`` and ``statuses`` are indexed by
    position; the nodes at positions in ``filled`` (those whose spans carry
    metadata) are filled at once.
    """
    nodes: list[LazyNode] = []
    add = nodes.append
    blocks: dict[int, NodeSource] = {}
    fill: list[LazyNode] = []
    for at in positions:
        node: LazyNode = _new(LazyNode)
        node.name = names[at]
        node.status = statuses[at]
        node.children = _NO_CHILDREN  # type: ignore[assignment]  # a list once read
        node.usage_counted = node.usage_note = node.error_origin = node.error_handled = None
        base = at >> _BLOCK_BITS
        block = blocks.get(base)
        if block is None:
            block = blocks[base] = source(base << _BLOCK_BITS)
        node._source = block
        node._at = at & _BLOCK_MASK
        add(node)
        if at in filled:
            fill.append(node)
    for node in fill:
        node.fill()
    return cast("list[TraceNode]", nodes)


# A node's position is kept as an offset into a block of positions: offsets are
# small ints, which CPython shares (a million distinct ints would take 28 MB).
_BLOCK_BITS: Final = 8
_BLOCK_MASK: Final = (1 << _BLOCK_BITS) - 1


_new = object.__new__


@dataclass(frozen=True)
class Totals:
    """Whole-trace figures for headers and summary lines. ``cost_usd`` is None when unknown.

    ``dropped_spans`` counts the calls a capped capture (``max_spans``) left out.

    Counting rules (`flow_xray.tree.accounting`): every LLM request is counted
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
        """One human line, e.g. ``12 nodes, 1 error, 1,234 tokens, $0.0042``."""
        cost = "cost unknown" if self.cost_usd is None else f"${self.cost_usd:.4f}"
        errors = "1 error" if self.errors == 1 else f"{self.errors} errors"
        dropped = f" ({self.dropped_spans:,} more calls dropped)" if self.dropped_spans else ""
        stopped = "".join(
            f", {count} {what}"
            for count, what in ((self.cancelled, "cancelled"), (self.interrupted, "interrupted"))
            if count
        )
        return (
            f"{self.nodes} nodes{dropped}, {errors}{stopped}, {self.wall_time_ms:.1f} ms, "
            f"{self.total_tokens:,} tokens, {cost}"
        )


@dataclass(eq=True)
class TraceResult:
    """The calls captured by ``trace.capture()`` / ``trace.run()``, as a forest of `TraceNode`.

    Iterating yields every node in pre-order. For ``trace.run``, ``value`` is
    what the function returned and ``exception`` what it raised (``ok`` tells
    which); neither is part of the JSON form. ``dropped_spans`` is how many
    calls a capped capture (``max_spans``) left out of the tree.

    Example::

        with trace.capture() as result:
            agent("hello")
        print(result.totals.total_tokens, result.find("agent").latency_ms)
    """

    roots: list[TraceNode] = field(default_factory=list)
    dropped_spans: int = 0
    value: Any = field(default=None, compare=False, repr=False)
    exception: BaseException | None = field(default=None, compare=False, repr=False)

    @property
    def return_value(self) -> Any:
        """0.2.0's name of `value`: what the traced function returned."""
        return self.value

    @return_value.setter
    def return_value(self, value: Any) -> None:
        self.value = value

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
        counts = analyze(self.roots)
        ends = [r.start_ms + (r.latency_ms or 0.0) for r in self.roots]
        wall = max(ends) - min(r.start_ms for r in self.roots) if self.roots else 0.0
        return Totals(
            counts.nodes,
            counts.errors,
            wall,
            counts.prompt_tokens,
            counts.completion_tokens,
            counts.total_tokens,
            counts.cost_usd,
            self.dropped_spans,
            counts.handled_errors,
            counts.cancelled,
            counts.interrupted,
        )

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON envelope (version 1) as plain data."""
        return {
            "version": SCHEMA_VERSION,
            "totals": self._totals_dict(),
            "nodes": [root.to_dict() for root in self.roots],
        }

    def _totals_dict(self) -> dict[str, Any]:
        totals = self.totals
        return {f.name: getattr(totals, f.name) for f in fields(totals)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TraceResult:
        """Rebuild a result from ``to_dict()`` output.

        Raises:
            TraceFileError: ``data`` is not a version-1 flow-xray trace.
        """
        if not isinstance(data, Mapping) or not isinstance(data.get("nodes"), list):
            raise TraceFileError("not a flow-xray trace: expected an object with a 'nodes' list")
        version = data.get("version", SCHEMA_VERSION)
        if version != SCHEMA_VERSION:
            raise TraceFileError(f"unsupported flow-xray trace version {version!r}")
        totals = data.get("totals")
        dropped = totals.get("dropped_spans", 0) if isinstance(totals, Mapping) else 0
        result = cls(
            roots=[TraceNode.from_dict(node, str(i)) for i, node in enumerate(data["nodes"])],
            dropped_spans=dropped if type(dropped) is int and dropped > 0 else 0,
        )
        analyze(result.roots)  # files written before the accounting fields get them too
        return result

    def to_json(self, indent: int | None = None) -> str:
        """Return the JSON envelope as text (``default=repr`` keeps odd values readable).

        Lone surrogates (from spans other instrumentations wrote) come out as
        visible ``\\udcXX`` escapes, so the text always encodes as UTF-8. Any call
        depth works (`flow_xray.jsontext`).
        """
        data = self.to_dict()
        text = jsontext.dumps(data, indent=indent, default=repr)
        if has_unwritable(text):
            escaped = writable_data(data)
            text = writable(jsontext.dumps(escaped, indent=indent, default=repr))
        return text

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the JSON envelope to ``path``."""
        write_text_atomic(path, self.to_json())

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> TraceResult:
        """Read a saved trace: flow-xray JSON (``save`` / ``to_json``) or any other format
        `flow_xray.tree.load.load_trace` reads (OTLP JSON lines, ...).

        Raises:
            TraceFileError: the file cannot be read or is not a trace.
        """
        from flow_xray.tree.load import load_trace  # load builds on this module

        return load_trace(path)

    def diff(
        self, other: TraceResult, before_label: str = "before", after_label: str = "after"
    ) -> TraceDiff:
        """Compare this run with ``other`` call by call (this one is "before").

        Example::

            diff = TraceResult.load("good.json").diff(TraceResult.load("bad.json"))
            print(diff.summary())  # +1 call, 1 new error, wall time +120 ms (+9%)
        """
        from flow_xray.analysis.diff import diff_traces

        return diff_traces(self, other, before_label, after_label)

    def to_dot(self) -> str:
        """Return the call graph as Graphviz DOT text."""
        from flow_xray.render import trace_to_dot

        return trace_to_dot(self.to_dict())

    def to_html(
        self,
        path: str | os.PathLike[str] | None = None,
        title: str = "flow-xray trace",
        static: StaticIndex | None = None,
        select: TraceNode | str | None = None,
    ) -> str:
        """Return the self-contained offline viewer page; also write it to ``path`` if given.

        With ``static`` (a `StaticIndex` of the program's source) the page also
        shows the static context: functions that could have run from the calls
        that did, as dashed ghost nodes, and each call's static callers and callees.
        ``select`` (a node of this trace, or its ``span_id``) is the call the page
        opens on, instead of the overview's choice (the root-cause failure).
        """
        from flow_xray.render import columns_to_html, trace_to_html

        call = (select.span_id or select.id) if isinstance(select, TraceNode) else select
        if static is not None:  # the static context adds nodes to the JSON form
            data = static.merge(self).annotate(self.to_dict())
            html = trace_to_html(data, title=title, select=call)
        else:
            from flow_xray.tree.flat import trace_columns

            totals = self._totals_dict()
            with jsontext.gc_paused():  # a column per field, a row per call: no cycles
                html = columns_to_html(trace_columns(self.roots), totals, title, select=call)
        if has_unwritable(html):  # surrogates from foreign spans: shown as escapes
            data = writable_data(self.to_dict())
            html = writable(trace_to_html(data, title=writable(title), select=call))
        if path is not None:
            write_text_atomic(path, html)
        return html

    # The notebook bridge: Jupyter (and VS Code) ask these for a result shown in a cell;
    # how it is shown lives in `flow_xray.integrations.notebook`, imported on first use.

    def _repr_html_(self) -> str:
        """The viewer inline, in a sandboxed iframe (`flow_xray.integrations.notebook`)."""
        from flow_xray.integrations.notebook import trace_html  # the notebook bridge

        return trace_html(self)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        """IPython's text form: one summary line, not every node (`trace_text`)."""
        from flow_xray.integrations.notebook import trace_text  # the notebook bridge

        printer.text(trace_text(self))


# -- 0.2.0's constructor forms -------------------------------------------------------
# 0.2.0's TraceNode was ``TraceNode(name, node_id, inputs, output=None, error=None,
# start_ms=0.0, latency_ms=0.0, children=[], meta={})`` and its TraceResult
# ``TraceResult(roots, return_value=None)``. The dataclass __init__s are keyword-only;
# these wrappers add the 0.2.0 positional and keyword forms, and refuse (TypeError)
# anything that could land in the wrong field.

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
)
_node_init = TraceNode.__init__
_result_init = TraceResult.__init__


def _trace_node_init(self: TraceNode, *args: Any, **kwargs: Any) -> None:
    if len(args) > len(_NODE_POSITIONAL_020):
        raise TypeError(
            f"TraceNode takes at most {len(_NODE_POSITIONAL_020)} positional arguments "
            f"(0.2.0's order: {', '.join(_NODE_POSITIONAL_020)}), got {len(args)}"
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
    _node_init(self, **kwargs)


def _trace_result_init(self: TraceResult, *args: Any, **kwargs: Any) -> None:
    if "return_value" in kwargs:
        if "value" in kwargs or len(args) > 1:
            raise TypeError("TraceResult got both value and return_value (the same field)")
        kwargs["value"] = kwargs.pop("return_value")
    _result_init(self, *args, **kwargs)


TraceNode.__init__ = _trace_node_init  # type: ignore[method-assign]
TraceResult.__init__ = _trace_result_init  # type: ignore[method-assign]
