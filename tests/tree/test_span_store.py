"""The capture store: compact rows read back as the same records, and the optional cap."""

from __future__ import annotations

import contextlib
import gc
import random
import tracemalloc

import pytest

from flow_xray import trace
from flow_xray.analysis.accounting import build_result
from flow_xray.errors import ConfigurationError
from flow_xray.sdk.rows import to_record
from flow_xray.tree.model import TraceResult
from flow_xray.tree.packed import BLOCK, block_row, block_rows, pack_block
from flow_xray.tree.spans import SpanRecord, SpanStore


@trace
def step(i: int) -> int:
    if i == 50:
        raise ValueError("step 50 fails")
    return i * 2


@trace(kind="llm")
def ask(prompt: str) -> str:
    return "answer"


@trace
def pipeline(n: int) -> None:
    for i in range(n):
        if i == 70:
            ask("hello")
            continue
        with contextlib.suppress(ValueError):
            step(i)


def test_rows_read_back_as_the_records_of_the_sdk_spans(user_provider) -> None:
    """What the processor stores compactly reads back equal to the SDK's own spans."""
    _, exporter = user_provider
    from flow_xray.sdk.processor import get_processor

    processor = get_processor()
    collector, token = processor.open_capture()
    pipeline(5)
    store = processor.close_capture(collector, token)
    expected = [to_record(span) for span in exporter.get_finished_spans()]
    assert list(store) == expected
    assert store[0] == expected[0] and store[-1] == expected[-1] and len(store) == 6


def test_a_stored_span_costs_a_few_hundred_bytes() -> None:
    """Rows share their key tuples, names and trace id: no dict per span is kept."""
    keys = ("openinference.span.kind", "input.value", "input.mime_type", "code.function.name")
    store = SpanStore()
    values = ("CHAIN", '{"i":1}', "application/json", "step")
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    for i in range(1, 10_001):
        store.add(7, i, i + 1, "step", i, i + 5, "UNSET", None, tuple(keys), values)
    used = (tracemalloc.get_traced_memory()[0] - before) / 10_000
    tracemalloc.stop()
    assert used < 160
    record = store[9_999]
    assert record.span_id == f"{10_000:016x}" and record.parent_id == f"{10_001:016x}"
    assert record.trace_id == f"{7:032x}" and record.attributes["input.value"] == '{"i":1}'


def test_records_from_other_sources_are_kept_as_they_are() -> None:
    """Appended records (other processes, files) need not have hex ids."""
    store = SpanStore()
    record = SpanRecord("t", "odd-id", None, "x", 1, 2)
    store.append(record)
    assert list(store) == [record] and store[0] is record


def test_a_capped_capture_keeps_head_tail_errors_and_llm_calls() -> None:
    """max_spans keeps the first and last calls to finish, plus every failure and LLM call."""
    with trace.capture(max_spans=10) as result:
        pipeline(100)
    (root,) = result.roots
    names = [child.name for child in root.children]
    assert names == [*["step"] * 5, "step", "ask", *["step"] * 4]
    assert [c.inputs.get("i") for c in root.children if c.name == "step"] == [
        0,
        1,
        2,
        3,
        4,
        50,
        96,
        97,
        98,
        99,
    ]
    assert root.children[5].status == "error"
    assert result.dropped_spans == 89 and result.totals.dropped_spans == 89
    assert "89 more calls dropped" in result.totals.summary()


def test_without_a_cap_nothing_is_dropped() -> None:
    """The default keeps every call and reports none dropped."""
    with trace.capture() as result:
        pipeline(100)
    assert len(result) == 101 and result.totals.dropped_spans == 0


@trace
def outer(n: int) -> None:
    for i in range(n):
        middle(i)


@trace
def middle(i: int) -> None:
    if i == 20:
        with contextlib.suppress(ValueError):
            step(50)


def test_a_kept_call_whose_caller_was_dropped_hangs_under_the_nearest_kept_ancestor() -> None:
    """The failing step's caller was dropped; the step sits under the outer call instead."""
    with trace.capture(max_spans=4) as result:
        outer(40)
    (root,) = result.roots
    assert root.name == "outer"
    failed = [c for c in root.children if c.name == "step"]
    assert len(failed) == 1 and failed[0].status == "error"
    assert failed[0].parent_id != root.span_id  # its real parent is the dropped middle(20)
    assert result.dropped_spans == len(range(40)) + 1 + 1 - len(result)


def test_dropped_spans_survive_the_json_round_trip() -> None:
    """The JSON totals carry dropped_spans, and loading it back keeps the count."""
    with trace.capture(max_spans=10) as result:
        pipeline(100)
    data = result.to_dict()
    assert data["totals"]["dropped_spans"] == 89
    assert TraceResult.from_dict(data).dropped_spans == 89


@pytest.mark.parametrize("bad", [0, -1, "10", 2.5, True])
def test_max_spans_must_be_a_positive_int(bad: object) -> None:
    """A cap that is not a positive int is a configuration error, raised before the block."""
    with pytest.raises(ConfigurationError, match="max_spans"):
        trace.capture(max_spans=bad)  # type: ignore[arg-type]


def test_a_store_built_tree_matches_the_same_records_as_a_list() -> None:
    """Building from the store or from its records as a plain list gives the same tree."""
    with trace.capture():
        pipeline(3)
    from flow_xray.sdk.processor import get_processor

    processor = get_processor()
    collector, token = processor.open_capture()
    pipeline(30)
    store = processor.close_capture(collector, token)
    assert build_result(store) == build_result(list(store))


class Label(str):
    """A str subclass: stored values keep their exact type."""


def _odd_value(rng: random.Random, row: int) -> object:
    """An attribute value of a type that must come back as exactly that type and value."""
    return rng.choice(
        [
            f'{{"row":{row}}}',
            "same",
            "ünïcode €",
            "",
            Label("subclass"),
            row,
            1,
            True,
            False,
            2**70 + row,
            0.0,
            -0.0,
            float("nan"),
            1.5,
            ("a", "b"),
            (1, True),
        ]
    )


def _exactly(value: object) -> object:
    """A value as a comparable form that tells 1 from True, 0.0 from -0.0 and NaN from NaN."""
    if isinstance(value, tuple):
        return tuple(_exactly(v) for v in value)
    return (type(value), repr(value))


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_packed_rows_read_back_as_the_very_values_they_were(seed: int) -> None:
    """Rows are packed a block at a time (shared values once, ASCII text joined): every
    row reads back with exactly its values, one at a time and many at once, whether
    its block is packed or not."""
    rng = random.Random(seed)
    keys = [("a", "b", "c"), ("a", "b", "c", "d"), ("x",), ()]
    names = ["f", "g", "h"]
    rows = []
    for row in range(BLOCK * 3 + 77):
        shape = rng.choice(keys)
        # Mostly one value per position and function, as calls are; sometimes anything.
        values = tuple(
            _odd_value(rng, row) if rng.random() < 0.3 else f"const-{at}"
            for at in range(len(shape))
        )
        rows.append((rng.choice(names), shape, values))
    store = SpanStore()
    for span_id, (name, shape, values) in enumerate(rows, start=1):
        store.add(9, span_id, 0, name, span_id, span_id + 1, "OK", None, shape, values)
    expected = [_exactly(values) for _, _, values in rows]
    assert [_exactly(tuple(store[i].attributes.values())) for i in range(len(rows))] == expected
    every = list(range(len(rows)))
    assert [_exactly(v) for v in store.part_columns(every)[6]] == expected
    few = rng.sample(every, 20)
    assert [_exactly(v) for v in store.part_columns(few)[6]] == [expected[i] for i in few]


def test_the_calls_of_one_function_keep_their_shared_values_once() -> None:
    """Past a block, a row keeps only what differs from its function's other calls: the
    kind, location and mime types once, the inputs and output as joined text."""
    keys = ("openinference.span.kind", "code.function.name", "input.value", "input.mime_type")
    store = SpanStore()
    kind, where = "CHAIN", "step"
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    for i in range(1, 10 * BLOCK + 1):
        values = ("".join(kind), "".join(where), f'{{"i":{i}}}', "application/json")
        store.add(7, i, 0, "step", i, i + 5, "UNSET", None, keys, values)
    used = (tracemalloc.get_traced_memory()[0] - before) / (10 * BLOCK)
    tracemalloc.stop()
    assert used < 80  # a tuple of the values alone is 72 bytes, its text 49 more
    assert store[5 * BLOCK].attributes == dict(
        zip(keys, ("CHAIN", "step", f'{{"i":{5 * BLOCK + 1}}}', "application/json"), strict=True)
    )


@pytest.mark.parametrize(
    ("usual", "odd"),
    [(1, True), (0, False), (0.0, -0.0), (1.0, 1), ("1", Label("1"))],
)
def test_equal_values_of_another_type_or_sign_are_not_shared(usual: object, odd: object) -> None:
    """A call whose value equals its function's usual one but is not the same value (True
    for 1, -0.0 for 0.0, a str subclass) reads back as itself, not as the usual value."""
    store = SpanStore()
    for i in range(1, BLOCK + 1):
        value = odd if i == 500 else usual
        store.add(7, i, 0, "step", i, i + 5, "UNSET", None, ("v",), (value,))
    for read in (store[499].attributes["v"], store.part_columns(range(BLOCK))[6][499][0]):
        assert _exactly(read) == _exactly(odd)
    assert _exactly(store[498].attributes["v"]) == _exactly(usual)


def test_a_block_keeps_rows_of_one_shape_but_other_lengths_as_they_are() -> None:
    """Rows given under one shape with differing numbers of values (a caller's mistake) are
    kept whole, each read back as given."""
    shape, name = ("UNSET", None, ("a", "b")), "f"
    rows = [("x", i) if i % 3 else ("x",) for i in range(BLOCK)]
    block = pack_block([shape] * BLOCK, [name] * BLOCK, rows)
    assert block_rows(block) == rows
    assert [block_row(block, i) for i in range(BLOCK)] == rows


def test_packed_rows_leave_nothing_for_the_garbage_collector_to_walk() -> None:
    """A million calls' blocks must not make Python's full collections longer or more
    frequent: once collected, the packed blocks of stored calls hold no object it tracks.
    (Read from the blocks themselves: a count of every object in the process would also
    see what other threads of the test run make meanwhile.)"""
    keys = ("openinference.span.kind", "input.value", "output.value")
    store = SpanStore()

    def add(first: int) -> None:
        for i in range(first, first + 20 * BLOCK):
            values = ("CHAIN", f'{{"i":{i}}}', str(i) if i % 7 else ("a", i))
            store.add(7, i, 0, "step" if i % 5 else "other", i, i + 5, "OK", None, keys, values)
        for _ in range(8):  # a tuple is let go of once the tuples in it were: a pass a level
            gc.collect()

    def tracked(value: object) -> int:
        """The objects the collector tracks in ``value``, itself included (tuples nest)."""
        found, stack = 0, [value]
        while stack:
            item = stack.pop()
            found += gc.is_tracked(item)
            if isinstance(item, (tuple, list)):
                stack.extend(item)
        return found

    add(1)
    add(1 + 20 * BLOCK)
    blocks = store._values.blocks  # type: ignore[attr-defined]
    assert len(blocks) == 40
    assert sum(map(tracked, blocks)) == 0
    assert store[40 * BLOCK - 1].attributes["input.value"] == f'{{"i":{40 * BLOCK}}}'


def _row(i: int) -> tuple:  # type: ignore[type-arg]
    """The parts of span ``i``: a new trace every 7 spans, events on every 5th."""
    events = ((f"e{i}", i, {"n": i}),) if i % 5 == 0 else ()
    return (1 + i // 7, 100 + i, 99 + i if i % 7 else 0, f"f{i % 3}", i, i + 1, "OK", None,
            ("a", "b"), (i, f"v{i}"), events)  # fmt: skip


# What adding a row runs (packing a block is one call inside `pack`).
_STORING = frozenset({"add", "_admit", "_store", "_new_trace_run", "pack"})


def _interrupted_at(line_no: int, store: SpanStore, row: tuple, max_spans: int | None) -> bool:  # type: ignore[type-arg]
    """Add ``row``, raising KeyboardInterrupt at the ``line_no``-th line the store runs for it
    (`_STORING`): True if it was interrupted."""
    import sys

    seen = 0

    def tracer(frame, event, arg):  # type: ignore[no-untyped-def]
        nonlocal seen
        if event == "line" and frame.f_code.co_name in _STORING:
            seen += 1
            if seen == line_no:
                raise KeyboardInterrupt
        return tracer

    sys.settrace(tracer)
    try:
        store.add(*row)
    except KeyboardInterrupt:
        return True
    finally:
        sys.settrace(None)
    return False


@pytest.mark.parametrize("max_spans", [None, 10_000])
def test_a_row_interrupted_anywhere_is_dropped_whole_and_the_next_rows_line_up(
    max_spans: int | None,
) -> None:
    """Ctrl-C can land at any line of `SpanStore.add` (its exception reaches the program):
    interrupted at each line in turn, the store holds every row before it, not the
    interrupted one or all of it, and every row after it reads back as it was added -
    across a new trace, a row with events and the packing of a full block."""
    count = BLOCK + 3
    points = 0
    line_no = 1
    while True:
        store = SpanStore(max_spans)
        for i in range(BLOCK - 1):  # the interrupted row fills the first block
            store.add(*_row(i))
        interrupted = _interrupted_at(line_no, store, _row(BLOCK - 1), max_spans)
        for i in range(BLOCK, count):
            store.add(*_row(i))
        store.seal()
        ids = [int(record.span_id, 16) - 100 for record in store]
        expected = list(range(count))
        if interrupted:
            assert ids in (expected, [i for i in expected if i != BLOCK - 1]), line_no
        else:
            assert ids == expected
        for record in store:
            i = int(record.span_id, 16) - 100
            parts = _row(i)
            assert record.name == parts[3] and record.attributes == {"a": i, "b": f"v{i}"}
            assert record.trace_id == format(parts[0], "032x")
            assert len(record.events) == (1 if i % 5 == 0 else 0)
        if not interrupted:
            break
        points += 1
        line_no += 1
    assert points >= 15, points  # every line of the add, the new trace run and the packing
