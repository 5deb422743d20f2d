"""Failures counted as failures: cancelled and interrupted calls are neither errors nor ok.

A call stopped by ``asyncio.CancelledError`` (a failing sibling in a
``TaskGroup``, ``gather`` cancelled, ``asyncio.timeout`` / ``wait_for``) is
``cancelled``; Ctrl-C and SIGTERM make ``interrupted``. Their spans keep an
UNSET status, carry ``flow_xray.outcome`` and an exception event, and the
totals count them apart from errors. Spans other tools wrote are read the same
way from their exception event.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from opentelemetry import trace as otel_trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from flow_xray import trace
from flow_xray.formats.registry import load_trace
from flow_xray.tree.model import TraceResult

SIBLINGS = 20


@trace
async def sibling(number: int) -> None:
    await asyncio.sleep(30)


@trace
async def fails() -> None:
    await asyncio.sleep(0.01)
    raise ValueError("the real failure")


@trace
async def slow() -> None:
    await asyncio.sleep(30)


def statuses(result: TraceResult) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for node in result:
        found.setdefault(node.name.rpartition(".")[2], []).append(node.status)
    return found


@pytest.mark.skipif(sys.version_info < (3, 11), reason="asyncio.TaskGroup is Python 3.11+")
def test_taskgroup_with_one_failure_shows_one_error_and_the_cancelled_siblings() -> None:
    """One ValueError among 20 siblings: "1 error, 20 cancelled", the group passes it up."""

    @trace
    async def group() -> None:
        async with asyncio.TaskGroup() as tasks:  # type: ignore[attr-defined]  # 3.11+
            tasks.create_task(fails())
            for number in range(SIBLINGS):
                tasks.create_task(sibling(number))

    with trace.capture() as result, contextlib.suppress(BaseException):
        asyncio.run(group())
    found = statuses(result)
    assert found["sibling"] == ["cancelled"] * SIBLINGS
    assert found["fails"] == ["error"] and found["group"] == ["error"]
    totals = result.totals
    assert (totals.errors, totals.cancelled, totals.interrupted) == (1, SIBLINGS, 0)
    assert "1 error, 20 cancelled" in totals.summary()
    assert all(n.error is None and n.incomplete for n in result if n.name == "sibling")


def test_gather_whose_siblings_are_cancelled_after_a_failure() -> None:
    """``gather`` then cancelling the rest (the classic pattern): one error, the rest cancelled."""

    @trace
    async def run_all() -> None:
        tasks = [asyncio.ensure_future(fails())]
        tasks += [asyncio.ensure_future(sibling(n)) for n in range(3)]
        try:
            await asyncio.gather(*tasks)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    with trace.capture() as result, contextlib.suppress(ValueError):
        asyncio.run(run_all())
    assert statuses(result)["sibling"] == ["cancelled"] * 3
    assert (result.totals.errors, result.totals.cancelled) == (1, 3)


def test_timeouts_cancel_the_inner_call_and_fail_the_caller_only_if_it_lets_them_out() -> None:
    """``asyncio.wait_for`` and ``asyncio.timeout``: the waited-on call is cancelled; a caller
    that handles the TimeoutError is ok, one that lets it out is the one error."""

    @trace
    async def patient() -> str:
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(slow(), 0.01)
        if sys.version_info >= (3, 11):
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(0.01):  # type: ignore[attr-defined]  # 3.11+
                    await slow()
        return "handled"

    @trace
    async def impatient() -> None:
        await asyncio.wait_for(slow(), 0.01)

    async def main() -> None:
        await patient()
        with contextlib.suppress(asyncio.TimeoutError):
            await impatient()

    with trace.capture() as result:
        asyncio.run(main())
    found = statuses(result)
    slow_calls = 3 if sys.version_info >= (3, 11) else 2
    assert found["slow"] == ["cancelled"] * slow_calls
    assert found["patient"] == ["ok"] and found["impatient"] == ["error"]
    assert (result.totals.errors, result.totals.cancelled) == (1, slow_calls)


def test_keyboard_interrupt_is_interrupted_and_sys_exit_zero_is_ok() -> None:
    @trace
    def stopped() -> None:
        raise KeyboardInterrupt

    @trace
    def exits_cleanly() -> None:
        raise SystemExit(0)

    @trace
    def exits_failing() -> None:
        raise SystemExit(3)

    with trace.capture() as result:
        for call in (stopped, exits_cleanly, exits_failing):
            with contextlib.suppress(BaseException):
                call()
    found = statuses(result)
    assert found == {
        "stopped": ["interrupted"],
        "exits_cleanly": ["ok"],
        "exits_failing": ["error"],
    }
    assert (result.totals.errors, result.totals.interrupted) == (1, 1)


def test_a_cancelled_span_keeps_status_unset_with_the_outcome_and_an_exception_event(
    otel_globals: Any,
) -> None:
    """What a backend sees: UNSET (not ERROR), ``flow_xray.outcome``, no ``error.type``."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    otel_trace.set_tracer_provider(provider)

    async def main() -> None:
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(slow(), 0.01)

    asyncio.run(main())
    provider.shutdown()
    span = next(s for s in exporter.get_finished_spans() if s.name == "slow")
    assert span.status.status_code is StatusCode.UNSET
    assert span.attributes is not None
    assert span.attributes["flow_xray.outcome"] == "cancelled"
    assert "error.type" not in span.attributes
    event = next(e for e in span.events if e.name == "exception")
    assert event.attributes is not None
    assert str(event.attributes["exception.type"]).endswith("CancelledError")


def _otlp_line(spans: list[dict[str, Any]]) -> str:
    return json.dumps(
        {"resourceSpans": [{"scopeSpans": [{"scope": {"name": "x"}, "spans": spans}]}]}
    )


def _span(span_id: str, name: str, exc_type: str | None, code: int) -> dict[str, Any]:
    span: dict[str, Any] = {
        "traceId": "0" * 31 + "1",
        "spanId": span_id,
        "parentSpanId": "" if span_id == "0000000000000001" else "0000000000000001",
        "name": name,
        "startTimeUnixNano": "1000",
        "endTimeUnixNano": "2000",
        "status": {"code": code},
    }
    if exc_type:
        span["events"] = [
            {
                "name": "exception",
                "timeUnixNano": "1500",
                "attributes": [{"key": "exception.type", "value": {"stringValue": exc_type}}],
            }
        ]
    return span


def test_foreign_spans_that_ended_by_cancellation_are_read_as_cancelled(tmp_path: Path) -> None:
    """Other instrumentations mark a CancelledError span ERROR (OpenInference) or leave it
    UNSET; both read as cancelled from the exception event; KeyboardInterrupt as interrupted."""
    path = tmp_path / "spans.jsonl"
    path.write_text(
        _otlp_line(
            [
                _span("0000000000000001", "root", "ExceptionGroup", 2),
                _span("0000000000000002", "failed", "ValueError", 2),
                _span("0000000000000003", "error-cancelled", "asyncio.CancelledError", 2),
                _span("0000000000000004", "unset-cancelled", "CancelledError", 0),
                _span("0000000000000005", "stopped", "KeyboardInterrupt", 2),
            ]
        )
        + "\n",
        encoding="utf-8",
    )
    result = load_trace(path)
    found = {name: status[0] for name, status in statuses(result).items()}
    assert found == {
        "root": "error",
        "failed": "error",
        "error-cancelled": "cancelled",
        "unset-cancelled": "cancelled",
        "stopped": "interrupted",
    }
    totals = result.totals
    assert (totals.errors, totals.cancelled, totals.interrupted) == (1, 2, 1)


def test_outcomes_survive_save_and_load(tmp_path: Path) -> None:
    with trace.capture() as result, contextlib.suppress(asyncio.TimeoutError):
        asyncio.run(asyncio.wait_for(slow(), 0.01))
    result.save(tmp_path / "t.json")
    loaded = TraceResult.load(tmp_path / "t.json")
    assert [n.status for n in loaded] == ["cancelled"]
    assert loaded.totals.cancelled == 1 and loaded.totals.errors == 0
