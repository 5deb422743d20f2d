"""`LazyNode`: a `TraceNode` built from a captured span, its details decoded on first use.

A million-call trace builds in seconds and small because only the tree is made
up front (``name``, ``status``, ``children`` and the accounting fields); the
other fields (`LAZY_FIELDS`) are read from the span's row when first used, or
many nodes' at once as columns (`RowReader`, for the viewer page). The rows
are read by `flow_xray.tree.rows`; `flow_xray.tree.build` makes the nodes.
No OpenTelemetry here.
"""

from __future__ import annotations

import copyreg
from array import array
from collections.abc import Callable, Container, Sequence
from typing import Any, Final, Protocol, cast

from flow_xray.tree.model import DATA_FIELDS, TraceNode, get_data_fields


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

    def values(self, at: int) -> Sequence[Any]:
        """The `LAZY_FIELDS` of the node for position ``at``, in order (new objects, the
        node's own, as `node` would give it)."""


class RowReader(Protocol):
    """Reads many unfilled nodes' details at once (`flow_xray.tree.columns`)."""

    def columns(self, rows: Sequence[int]) -> list[Sequence[Any]]:
        """The `LAZY_FIELDS` of these rows' nodes as columns (one sequence per field, in
        order: a list, or ids as their bytes, `flow_xray.hexids.HexIds`), details as JSON
        text (`JsonText`) where the span holds them so."""

    def columns_of(self, name: str, rows: Sequence[int]) -> Sequence[Any]:
        """One of `columns`, read alone."""


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
        values = source.values(self._at)
        self._source = None
        for slot, value in zip(_LAZY_SLOTS, values, strict=True):
            slot.__set__(self, value)

    def field_values(self) -> tuple[Any, ...]:
        source = self._source
        if source is None:
            return get_data_fields(self)
        # Read from a node decoded for the purpose: this node stays unfilled (and small).
        full = source.node(self._at)
        for name in _EAGER_FIELDS:
            setattr(full, name, getattr(self, name))
        return get_data_fields(full)

    def has_meta(self) -> bool:
        # Unfilled means no metadata: nodes with some are filled when built.
        return self._source is None and bool(self.meta)

    def __getstate__(self) -> Any:
        """What ``object.__getstate__`` (Python 3.11+) gives a slotted object: ``(None,
        {slot: value})`` of the slots set, the node filled first."""
        self.fill()
        names = copyreg._slotnames(type(self))  # type: ignore[attr-defined]
        return None, {name: getattr(self, name) for name in names if hasattr(self, name)}

    def __setstate__(self, state: Any) -> None:
        self._source = None
        _, slots = state
        for name, value in slots.items():
            setattr(self, name, value)


_SLOTS = {name: TraceNode.__dict__[name] for name in LAZY_FIELDS}
_LAZY_SLOTS: Final = tuple(_SLOTS.values())


def lazy_values(node: TraceNode) -> list[Any]:
    """A node's `LAZY_FIELDS`, in order (a `NodeSource` that builds whole nodes gives these)."""
    return [slot.__get__(node, TraceNode) for slot in _LAZY_SLOTS]


_CHILDREN_SLOT: Any = TraceNode.__dict__["children"]  # the slot `child_nodes` reads
# A lazily built leaf holds this instead of an empty list of its own (56 bytes
# each, a million of them in a big trace) until its ``children`` is read.
_NO_CHILDREN: Final[tuple[()]] = ()


def unfilled_rows(nodes: Sequence[TraceNode]) -> tuple[list[RowReader | None], array[int]]:
    """For each node, the reader of its span's row and the row if it is a lazily built node
    not yet filled (its details are read from there), else None and -1. The rows are an
    array: a million calls' rows as a list would hold 32 MB of int objects."""
    sources = [node._source if type(node) is LazyNode else None for node in nodes]
    readers = [None if source is None else source.reader for source in sources]
    rows = array(
        "q",
        [
            -1 if source is None else source.base + node._at  # type: ignore[attr-defined]
            for node, source in zip(nodes, sources, strict=True)
        ],
    )
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
