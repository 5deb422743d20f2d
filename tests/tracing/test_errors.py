"""What a failed call stores: bounded message, user frames only, the raising frame named."""

from __future__ import annotations

import contextlib
import inspect
import time
from collections.abc import Callable

from flow_xray import trace
from flow_xray.tree.model import TraceNode


def _failed(func: Callable[[], object]) -> TraceNode:
    """Run ``func`` (which raises) in a capture; its node."""
    with trace.capture() as result, contextlib.suppress(Exception):
        func()
    assert result.roots[0].error is not None
    return result.roots[0]


def test_the_stored_traceback_has_no_flow_xray_frames() -> None:
    """Nested traced calls: the stored text lists the user's frames, not the wrapper's."""

    @trace
    def inner() -> None:
        raise ValueError("deep")

    @trace
    def outer() -> None:
        inner()

    node = _failed(outer)
    assert node.traceback is not None
    assert "flow_xray" not in node.traceback and "decorator.py" not in node.traceback
    assert node.traceback.count('File "') == 2
    assert node.traceback.rstrip().endswith("ValueError: deep")


def test_the_raising_frame_is_stored_as_path_line() -> None:
    """flow_xray.error.location is `path:line` of the raise; the event has code.* attributes."""

    @trace
    def fails() -> None:
        raise KeyError("k")

    source, start = inspect.getsourcelines(inspect.unwrap(fails))
    line = start + next(i for i, text in enumerate(source) if "raise KeyError" in text)
    node = _failed(fails)
    assert node.attributes["flow_xray.error.location"] == f"tests/tracing/test_errors.py:{line}"
    event = next(e for e in node.events if e["name"] == "exception")["attributes"]
    assert event["code.line.number"] == line
    assert event["code.function.name"] == "fails"
    assert event["code.file.path"].endswith("test_errors.py")


def test_an_exception_carrying_50_mb_costs_milliseconds() -> None:
    """The message of an exception with 50 MB of bytes is a short summary, quickly made."""
    payload = b"\x00" * 50_000_000

    @trace
    def fails() -> None:
        raise ValueError(payload)

    started = time.perf_counter()
    node = _failed(fails)
    elapsed = time.perf_counter() - started
    assert node.error is not None and node.error.startswith("ValueError: <bytes len=50000000")
    assert len(node.traceback or "") < 4000
    assert elapsed < 2.0  # a hang guard, not a speed target (bench_worst_values.py measures)


def test_chained_exceptions_keep_python_s_layout() -> None:
    """A cause is printed first, then Python's 'direct cause' line, then the new exception."""

    @trace
    def fails() -> None:
        try:
            {}["missing"]
        except KeyError as exc:
            raise RuntimeError("lookup failed") from exc

    text = _failed(fails).traceback or ""
    assert (
        text.index("KeyError: 'missing'")
        < text.index("direct cause")
        < text.index("RuntimeError: lookup failed")
    )


def test_credentials_in_messages_and_source_lines_are_scrubbed() -> None:
    """A DSN password in the message (and in the raising source line) never reaches the span."""

    @trace
    def connect() -> None:
        raise ConnectionError("cannot reach postgres://app:s3cr3t-pw@db:5432/orders")

    node = _failed(connect)
    assert "s3cr3t-pw" not in (node.error or "") + (node.traceback or "")
    assert "postgres://app:[REDACTED:url-password]@db:5432/orders" in (node.error or "")
