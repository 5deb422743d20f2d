"""Compaction of ended spans: a bounded slice per span end, never a batch inside one call.

A capture turns ended SDK spans into compact rows. Done a batch at a time,
whichever user call was open paid for thousands of others, and the viewer
showed that pause as the caller's own time. These tests count the rows stored
during each span end (no clock involved).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from flow_xray import trace
from flow_xray.sdk import processor as processor_module
from flow_xray.sdk.processor import FlowXrayProcessor


@trace
def leaf(item: int) -> int:
    return item * 2


@trace
def loop(calls: int) -> int:
    return sum(leaf(item) for item in range(calls))


# The processor's own size, read before any test changes it.
DEFAULT_BATCH = processor_module._BATCH
# A small size for these tests (the mechanism is the same at any size): a first batch
# of 256 spans.
BATCH = 256


@pytest.fixture(autouse=True)
def small_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test here runs with `BATCH` as the processor's batch."""
    monkeypatch.setattr(processor_module, "_BATCH", BATCH)


class StoreCounter:
    """Counts the rows the processor stores, per span end and outside span ends."""

    def __init__(self) -> None:
        self.stored = 0
        self.per_end: list[int] = []


@pytest.fixture
def counter(monkeypatch: pytest.MonkeyPatch) -> Iterator[StoreCounter]:
    """Wrap the processor's row conversion and its ``on_end`` hook with counters."""
    counts = StoreCounter()
    to_row = processor_module.to_row
    on_end = FlowXrayProcessor.on_end

    def counting_to_row(span: Any) -> Any:
        counts.stored += 1
        return to_row(span)

    def counting_on_end(self: FlowXrayProcessor, span: Any, span_id: int | None = None) -> None:
        before = counts.stored
        on_end(self, span, span_id)
        counts.per_end.append(counts.stored - before)

    monkeypatch.setattr(processor_module, "to_row", counting_to_row)
    monkeypatch.setattr(FlowXrayProcessor, "on_end", counting_on_end)
    yield counts


CALLS = 3 * BATCH + 7


def test_no_span_end_stores_more_than_a_slice(counter: StoreCounter) -> None:
    """Past a full batch, each span end stores at most `_SLICE` rows: no call pays for a batch."""
    with trace.capture() as result:
        loop(CALLS)
    assert len(result) == CALLS + 1
    assert len(counter.per_end) == CALLS + 1
    assert max(counter.per_end) == processor_module._SLICE


def test_the_4097th_call_stores_a_slice_not_the_first_batch(
    counter: StoreCounter, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the processor's own sizes: no span end stores anything for the first 4,095
    calls, and from the 4,096th on each stores two rows, the 4,097th included."""
    monkeypatch.setattr(processor_module, "_BATCH", DEFAULT_BATCH)
    assert DEFAULT_BATCH == 4096
    with trace.capture():
        loop(DEFAULT_BATCH + 100)
    assert counter.per_end[: DEFAULT_BATCH - 1] == [0] * (DEFAULT_BATCH - 1)
    assert counter.per_end[DEFAULT_BATCH - 1 : DEFAULT_BATCH + 1] == [2, 2]
    assert max(counter.per_end) == processor_module._SLICE == 2


def test_the_call_after_a_full_batch_stores_a_slice_only(counter: StoreCounter) -> None:
    """The span end that completes a batch (and the next one) store `_SLICE` rows, not the batch."""
    with trace.capture():
        loop(CALLS)
    batch = BATCH
    assert counter.per_end[: batch - 1] == [0] * (batch - 1)
    assert counter.per_end[batch - 1 : batch + 1] == [processor_module._SLICE] * 2


def test_rows_stored_while_running_plus_at_close_cover_every_call(counter: StoreCounter) -> None:
    """Every ended span is stored once, and once the first batch is drained each span is
    stored as it ends: nothing is left for the close."""
    with trace.capture() as result:
        loop(CALLS)
        during = counter.stored
    assert during == CALLS + 1  # the loop's span too: it ended inside the capture
    assert counter.stored == CALLS + 1
    assert len(result) == CALLS + 1


def test_spans_waiting_never_exceed_a_batch() -> None:
    """Memory stays bounded: at most `_BATCH` ended spans wait to be stored at any time."""
    capture = trace.capture()
    capture.__enter__()
    collector = capture._collector
    assert collector is not None
    most = 0
    for item in range(CALLS):
        leaf(item)
        waiting = len(collector.pending) + len(collector.draining) - collector.drained
        most = max(most, waiting)
    capture.__exit__(None, None, None)
    assert BATCH // 2 <= most <= BATCH


def test_past_the_first_batch_the_backlog_drains_and_no_span_waits() -> None:
    """What ended while the first batch drained drains too, halving each round; from then
    on each span is stored as it ends (let go of young, as the garbage collector likes)."""
    capture = trace.capture()
    capture.__enter__()
    collector = capture._collector
    assert collector is not None
    waiting = []
    for item in range(CALLS):
        leaf(item)
        waiting.append(len(collector.pending) + len(collector.draining) - collector.drained)
    capture.__exit__(None, None, None)
    assert waiting[BATCH - 1] == BATCH - processor_module._SLICE  # the first batch draining
    assert waiting[-BATCH:] == [0] * BATCH


def test_spans_kept_in_the_order_they_ended() -> None:
    """Draining a batch a slice at a time keeps the calls in order: leaf i is the i-th child."""
    with trace.capture() as result:
        loop(CALLS)
    (root,) = result.roots
    assert [child.inputs for child in root.children] == [{"item": i} for i in range(CALLS)]
    assert [child.output for child in root.children] == [2 * i for i in range(CALLS)]


def test_nested_captures_each_keep_every_call() -> None:
    """Two captures open at once each drain their own batches and each keep every call."""
    with trace.capture() as outer:
        leaf(-1)
        with trace.capture() as inner:
            loop(CALLS)
    assert len(inner) == CALLS + 1
    assert len(outer) == CALLS + 2


def test_max_spans_capture_drains_into_its_bounded_store() -> None:
    """A capped capture drains a slice at a time too and keeps its first and last calls."""
    with trace.capture(max_spans=100) as result:
        loop(CALLS)
    assert result.dropped_spans == CALLS + 1 - len(result)
    (root,) = result.roots
    inputs = [child.inputs["item"] for child in root.children]
    assert inputs[0] == 0
    assert inputs[-1] == CALLS - 1
