"""A capture's tree is built lazily (details decoded on first use) and equals the eager build."""

from __future__ import annotations

import contextlib
import copy
import pickle

import pytest
from opentelemetry import trace as trace_api

from flow_xray import trace
from flow_xray.analysis.accounting import build_result
from flow_xray.render.payload import read_page
from flow_xray.sdk.processor import get_processor
from flow_xray.tree import rows
from flow_xray.tree.lazy import LAZY_FIELDS, LazyNode
from flow_xray.tree.model import TraceNode
from flow_xray.tree.packed import BLOCK
from flow_xray.tree.spans import SpanRecord, SpanStore


@trace
def leaf(i: int) -> dict[str, int]:
    if i == 3:
        raise KeyError("three")
    return {"i": i}


@trace(kind="llm")
def chat(prompt: str) -> str:
    trace.annotate(model="gpt-4o-mini", prompt_tokens=12, completion_tokens=3)
    return "ok"


@trace
def run(n: int) -> None:
    chat("hi")
    for i in range(n):
        with contextlib.suppress(KeyError):
            leaf(i)


def _store(n: int = 6) -> SpanStore:
    with trace.capture():  # sets up the SDK side when nothing has yet
        pass
    processor = get_processor()
    collector, token = processor.open_capture()
    run(n)
    return processor.close_capture(collector, token)


def test_the_store_builds_the_same_tree_as_its_records() -> None:
    """Lazy nodes from the store equal eager nodes built from the same records, field by field."""
    store = _store()
    lazy, eager = build_result(store), build_result(list(store))
    assert all(isinstance(n, LazyNode) for n in lazy)
    assert not any(isinstance(n, LazyNode) for n in eager)
    assert lazy.roots == eager.roots
    assert [n.to_dict() for n in lazy.roots] == [n.to_dict() for n in eager.roots]
    assert lazy.totals == eager.totals
    assert lazy.totals.total_tokens == 15 and lazy.totals.errors == 1


def test_details_are_decoded_only_when_read() -> None:
    """Building leaves plain nodes unfilled; reading any detail fills that node only."""
    result = build_result(_store())
    (root,) = result.roots
    plain = root.children[5]
    assert plain._source is not None  # type: ignore[attr-defined]
    assert plain.name == "leaf" and plain.status == "ok"
    assert plain._source is not None  # type: ignore[attr-defined]
    assert plain.inputs == {"i": 4} and plain.output == {"i": 4}
    assert plain._source is None  # type: ignore[attr-defined]
    assert root.children[6]._source is not None  # type: ignore[attr-defined]
    # failed nodes and nodes with LLM usage are read by the accounting when built
    assert "KeyError" in (root.children[4].error or "")
    # a node with LLM usage is filled when built: the accounting reads it
    assert root.children[0].meta["model"] == "gpt-4o-mini"


def test_writing_a_field_first_keeps_the_others() -> None:
    """Setting a detail before any read decodes the rest first, then applies the write."""
    (root,) = build_result(_store()).roots
    node = root.children[2]
    node.output = "replaced"
    assert node.output == "replaced" and node.inputs == {"i": 1} and node.kind == "chain"


def test_lazy_nodes_pickle_and_copy_with_every_field() -> None:
    """A pickled or copied lazy node carries its decoded fields (no reference to the store)."""
    result = build_result(_store())
    again = pickle.loads(pickle.dumps(result))
    assert again.roots == result.roots
    (root,) = result.roots
    clone = copy.deepcopy(root.children[1])
    assert clone == root.children[1] and clone.inputs == {"i": 0}


def test_repeated_ids_and_equal_starts_in_a_store() -> None:
    """A repeated span id keeps the earliest record; equal start times order by span id."""
    store = SpanStore()
    keys = ("input.value",)
    store.add(1, 0xA, 0, "root", 100, 900, "UNSET", None, keys, ('{"a": 1}',))
    store.add(1, 0x3, 0xA, "late", 200, 300, "UNSET", None, keys, ('{"b": 1}',))
    store.add(1, 0x2, 0xA, "tie", 200, 300, "UNSET", None, keys, ('{"b": 2}',))
    store.add(1, 0x3, 0xA, "late", 150, 300, "UNSET", None, keys, ('{"b": 3}',))
    store.append(SpanRecord(f"{1:032x}", "odd", f"{0xA:016x}", "other", 50, None))
    (root,) = build_result(store).roots
    assert [(c.name, c.inputs) for c in root.children] == [
        ("other", {}),
        ("late", {"b": 3}),
        ("tie", {"b": 2}),
    ]
    assert root.children[0].incomplete and root.children[0].span_id == "odd"
    assert build_result(list(store)).roots == [root]


def test_an_eager_node_still_equals_and_copies() -> None:
    """TraceNode itself (slots) keeps 0.2.0's constructor forms, equality and pickling."""
    node = TraceNode("f", "n1", {"x": 1}, children=[TraceNode(name="g", id="n2")])
    assert pickle.loads(pickle.dumps(node)) == node
    assert node.node_id == "n1" and not node.has_meta()


@pytest.mark.parametrize("chunk", [500, 1 << 16])
def test_a_page_read_from_packed_rows_is_the_page_of_the_same_nodes(
    chunk: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past a block of rows the store keeps values packed; a page reads them a chunk at a time
    (some nodes filled first): every call shows exactly as the eagerly built nodes show it."""
    monkeypatch.setattr(rows, "_CHUNK", chunk)
    store = _store(3 * BLOCK + 100)
    lazy, eager = build_result(store), build_result(list(store))
    nodes = list(lazy)
    for node in nodes[::97]:  # filled before the page is made: read from the nodes
        assert node.inputs is not None
    assert read_page(lazy.to_html()) == read_page(eager.to_html())
    assert lazy.roots == eager.roots


def _flat_store() -> SpanStore:
    """Top-level calls only (a script's loop): one root per call, one failing, one never ended,
    and a record appended from elsewhere (as a child process's spans are)."""
    with trace.capture():
        pass
    processor = get_processor()
    collector, token = processor.open_capture()
    for i in range(40):
        with contextlib.suppress(KeyError):
            leaf(i)
    tracer = trace_api.get_tracer("t")
    open_span = tracer.start_span("never ended")  # still open at the close: incomplete
    store = processor.close_capture(collector, token)
    open_span.end()
    store.append(
        SpanRecord(
            trace_id="ab" * 16, span_id="cd" * 8, parent_id=None, name="elsewhere",
            start_ns=store[0].start_ns - 5_000_000, end_ns=store[0].start_ns + 1,
        )
    )  # fmt: skip
    return store


def test_totals_of_many_roots_leave_them_unfilled() -> None:
    """The wall time reads each root's start and latency from its span's row: a loop of
    top-level calls (a root per call) keeps its nodes small, and the figures are the eager
    build's, an appended record and a call that never ended included."""
    store = _flat_store()
    lazy, eager = build_result(store), build_result(list(store))
    assert len(lazy.roots) == 42
    unfilled = [root for root in lazy.roots if root._source is not None]  # type: ignore[attr-defined]
    assert len(unfilled) >= 40  # (a failure's node is read when built)
    totals = lazy.totals
    assert all(root._source is not None for root in unfilled)  # type: ignore[attr-defined]
    assert totals == eager.totals
    starts = [root.start_ms for root in eager.roots]
    ends = [root.start_ms + (root.latency_ms or 0.0) for root in eager.roots]
    assert totals.wall_time_ms == max(ends) - min(starts)
    assert any(root.latency_ms is None for root in eager.roots)  # the open span


def test_a_time_column_read_alone_is_the_one_read_with_the_others() -> None:
    """`StoreRows.columns_of` for the times gives what `columns` gives, for rows of calls,
    of a span that never ended and of an appended record."""
    appended_only = SpanStore()
    appended_only.extend(list(_flat_store())[:5])
    for store in (_flat_store(), appended_only):
        reader = rows.StoreRows(store, store.earliest_start() or 0)
        every = list(range(len(store)))
        columns = reader.columns(every)
        for name in ("start_ms", "latency_ms", "kind"):
            expected = columns[LAZY_FIELDS.index(name)]
            assert reader.columns_of(name, every) == expected
            assert reader.columns_of(name, every[::-3]) == expected[::-3]
