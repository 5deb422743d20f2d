"""Captures, the runner, isolation, thread pools and the provider rules."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from opentelemetry import trace as trace_api
from opentelemetry.sdk.trace import SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from flow_xray import propagate, trace


@trace
def work(i: int) -> int:
    return i * 2


@trace
def parent_of_pool(n: int, wrap: bool) -> list[int]:
    with ThreadPoolExecutor(max_workers=4) as pool:
        fn = propagate(work) if wrap else work
        return list(pool.map(fn, range(n)))


def test_capture_is_filled_even_when_the_block_raises() -> None:
    """The result has the spans and the exception when the with-block fails."""

    @trace
    def explode() -> None:
        raise RuntimeError("bad")

    capture = trace.capture()
    with pytest.raises(RuntimeError), capture as result:
        work(1)
        explode()
    assert [n.name.rpartition(".<locals>.")[2] for n in result] == ["work", "explode"]
    assert isinstance(result.exception, RuntimeError)
    assert result.totals.errors == 1


def test_run_records_value_and_exception_without_raising() -> None:
    """trace.run returns a result: value on success, exception on failure."""

    def fails() -> None:
        work(3)
        raise ValueError("nope")

    good = trace.run(work, 21)
    bad = trace.run(fails)
    assert good.ok and good.value == 42 and len(good) == 1
    assert not bad.ok and isinstance(bad.exception, ValueError)
    assert [n.name for n in bad] == ["work"]


def test_run_accepts_coroutine_functions() -> None:
    """trace.run drives an async function to completion."""

    @trace
    async def fetch(x: int) -> int:
        await asyncio.sleep(0)
        return x + 1

    result = trace.run(fetch, 1)
    assert result.value == 2 and result.find("fetch") is not None


def test_spans_outside_a_capture_are_not_collected() -> None:
    """Only calls inside the with-block appear."""
    work(0)
    with trace.capture() as result:
        work(1)
    work(2)
    assert [n.inputs["i"] for n in result] == [1]


def test_nested_captures_both_receive_inner_spans() -> None:
    """An inner capture sees its own calls; the outer one sees everything."""
    with trace.capture() as outer:
        work(1)
        with trace.capture() as inner:
            work(2)
    assert [n.inputs["i"] for n in outer] == [1, 2]
    assert [n.inputs["i"] for n in inner] == [2]


def test_concurrent_captures_in_threads_are_disjoint() -> None:
    """Two threads capturing at once each get only their own calls."""
    results: dict[int, Any] = {}
    barrier = threading.Barrier(2)

    def job(tag: int) -> None:
        with trace.capture() as result:
            barrier.wait()
            for _ in range(50):
                work(tag)
        results[tag] = result

    threads = [threading.Thread(target=job, args=(t,)) for t in (1, 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for tag in (1, 2):
        assert len(results[tag]) == 50
        assert {n.inputs["i"] for n in results[tag]} == {tag}


def test_concurrent_captures_in_asyncio_tasks_are_disjoint() -> None:
    """Two tasks capturing at once each get only their own calls."""

    @trace
    async def step(tag: int) -> int:
        await asyncio.sleep(0)
        return tag

    async def job(tag: int) -> Any:
        with trace.capture() as result:
            for _ in range(20):
                await step(tag)
        return result

    async def main() -> list[Any]:
        return list(await asyncio.gather(job(1), job(2)))

    first, second = asyncio.run(main())
    assert {n.inputs["tag"] for n in first} == {1} and len(first) == 20
    assert {n.inputs["tag"] for n in second} == {2} and len(second) == 20


def test_propagate_attaches_thread_pool_work_to_its_parent() -> None:
    """With propagate(), pool workers' spans are children of the submitting span."""
    with trace.capture() as result:
        assert parent_of_pool(6, wrap=True) == [0, 2, 4, 6, 8, 10]
    (root,) = result.roots
    assert root.name == "parent_of_pool"
    assert sorted(c.inputs["i"] for c in root.children) == list(range(6))


def test_without_propagate_pool_work_is_lost_to_the_capture() -> None:
    """Plain pool.map runs outside the capture's context: the helper is what fixes that."""
    with trace.capture() as result:
        parent_of_pool(3, wrap=False)
    assert [n.name for n in result] == ["parent_of_pool"]


def test_all_threads_capture_collects_unpropagated_threads() -> None:
    """capture(all_threads=True) sees spans from threads started without context."""
    with trace.capture(all_threads=True) as result:
        t = threading.Thread(target=work, args=(7,))
        t.start()
        t.join()
    assert [n.inputs["i"] for n in result] == [7]


def test_spans_still_open_at_exit_are_marked_incomplete() -> None:
    """A call still running when the capture closes appears with incomplete=True."""
    started = threading.Event()
    release = threading.Event()

    @trace
    def slow() -> None:
        started.set()
        release.wait(5)

    with trace.capture(all_threads=True) as result:
        thread = threading.Thread(target=slow)
        thread.start()
        started.wait(5)
    release.set()
    thread.join()
    node = result.find("slow")
    assert node is not None and node.incomplete and node.latency_ms is None


def test_a_context_that_outlives_its_capture_does_not_keep_collecting() -> None:
    """Spans started later in a context copied during a capture (a task, a thread) are not kept.

    Otherwise a long-lived task spawned inside a capture would grow the closed
    capture's span list forever.
    """
    import contextvars

    from flow_xray.runtime.captures import _ACTIVE
    from flow_xray.sdk.processor import get_processor

    with trace.capture():
        leftover = contextvars.copy_context()
    for i in range(10):
        leftover.run(work, i)
    (collector,) = leftover.run(_ACTIVE.get)
    assert len(collector.finished) == 0 and collector.open == {}
    assert get_processor()._members == {}


def test_captures_closed_out_of_order_stay_independent() -> None:
    """Closing an outer capture first leaves the inner one collecting, and re-opens nothing."""
    from flow_xray.runtime.captures import _ACTIVE

    outer, inner = trace.capture(), trace.capture()
    outer.__enter__()
    inner_result = inner.__enter__()
    outer.__exit__(None, None, None)
    work(1)
    inner.__exit__(None, None, None)
    assert [n.inputs["i"] for n in inner_result] == [1]
    assert _ACTIVE.get() == ()


def test_a_failure_building_the_result_does_not_raise_from_the_block(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """If turning spans into a tree fails, the with-block still completes normally."""
    import flow_xray.sdk.capture

    def broken(records: Any) -> Any:
        raise RuntimeError("tree broke")

    monkeypatch.setattr(flow_xray.sdk.capture, "build_result", broken)
    with trace.capture() as result:
        assert work(2) == 4
    assert result.roots == [] and result.ok


# --- provider rules ---------------------------------------------------------------


def test_user_provider_stays_global_and_receives_our_spans(
    user_provider: tuple[TracerProvider, InMemorySpanExporter],
) -> None:
    """Under a user's SDK provider, flow-xray adds its processor and replaces nothing."""
    provider, exporter = user_provider
    with trace.capture() as result:
        work(5)
    assert trace_api.get_tracer_provider() is provider
    (span,) = exporter.get_finished_spans()
    assert span.name == "work"
    assert span.attributes is not None
    assert span.attributes["openinference.span.kind"] == "CHAIN"
    assert json.loads(str(span.attributes["input.value"])) == {"i": 5}
    assert span.attributes["output.value"] == "10"
    assert [n.name for n in result] == ["work"]


def test_other_instrumentations_spans_are_captured(
    user_provider: tuple[TracerProvider, InMemorySpanExporter],
) -> None:
    """Spans from another tracer (e.g. an HTTP instrumentation) join the tree."""
    other = trace_api.get_tracer("some.instrumentation")

    @trace
    def fetch() -> None:
        with other.start_as_current_span("GET /items") as span:
            span.set_attribute("http.response.status_code", 200)

    with trace.capture() as result:
        fetch()
    (root,) = result.roots
    (child,) = root.children
    assert child.name == "GET /items" and child.attributes["http.response.status_code"] == 200


def test_capture_without_global_provider_installs_nothing_global() -> None:
    """With no provider set, capture uses a private one and leaves the global proxy alone."""
    with trace.capture() as result:
        work(1)
    assert len(result) == 1
    assert type(trace_api.get_tracer_provider()).__name__ == "ProxyTracerProvider"


def test_sdk_disabled_records_nothing_and_calls_still_work(
    monkeypatch: pytest.MonkeyPatch, otel_globals: Callable[[], None]
) -> None:
    """OTEL_SDK_DISABLED=true turns spans off while functions keep working."""
    monkeypatch.setenv("OTEL_SDK_DISABLED", "true")
    trace_api.set_tracer_provider(TracerProvider())
    with trace.capture() as result:
        assert work(4) == 8
    assert len(result) == 0


class BrokenProcessor(SpanProcessor):
    """A third-party processor that fails in every hook."""

    def on_start(self, span: Any, parent_context: Any = None) -> None:
        raise RuntimeError("on_start broke")

    def on_end(self, span: Any) -> None:
        raise RuntimeError("on_end broke")


def test_a_broken_processor_never_breaks_the_users_function(
    user_provider: tuple[TracerProvider, InMemorySpanExporter],
) -> None:
    """A processor raising in its hooks: the call still returns its value, untraced."""
    provider, _ = user_provider
    provider.add_span_processor(BrokenProcessor())
    assert work(21) == 42


def test_a_provider_set_during_a_capture_is_joined_not_replaced(
    user_provider: tuple[TracerProvider, InMemorySpanExporter],
    otel_globals: Callable[[], None],
) -> None:
    """A global provider installed while a capture is open receives spans and feeds the capture."""
    otel_globals()  # forget the user's provider: none is global when the capture opens
    with trace.capture(all_threads=True) as result:
        work(1)  # no global provider yet: flow-xray's private one
        provider, exporter = TracerProvider(), InMemorySpanExporter()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        trace_api.set_tracer_provider(provider)  # e.g. the traced script's own set-up
        work(2)
    assert trace_api.get_tracer_provider() is provider
    assert [s.name for s in exporter.get_finished_spans()] == ["work"]
    assert [n.inputs["i"] for n in result] == [1, 2]


def test_a_closed_capture_leaves_later_calls_untraced(otel_globals: Callable[[], None]) -> None:
    """With no provider configured, calls after a capture closed record nothing, as before it.

    flow-xray's private provider serves open captures only; otherwise every later
    call would build a real span that no capture ever reads.
    """
    seen: list[bool] = []

    @trace
    def probe() -> None:
        seen.append(trace_api.get_current_span().is_recording())

    probe()
    with trace.capture():
        probe()
    probe()
    assert seen == [False, True, False]
