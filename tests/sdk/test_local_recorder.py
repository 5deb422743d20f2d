"""The local recorder behaves as the OpenTelemetry SDK does, span for span.

Every test drives the same OpenTelemetry API calls through the real SDK
(`TracerProvider` -> in-memory exporter) and through `LocalProvider`, then
compares what each span holds as plain data. The SDK is the reference:
what the recorder must reproduce is whatever it does, odd values included.
"""

from __future__ import annotations

import contextlib
import logging
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry import context as context_api, trace as trace_api
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import (
    NonRecordingSpan,
    SpanContext,
    Status,
    StatusCode,
    TraceFlags,
    TraceState,
)

from flow_xray import trace
from flow_xray.runtime import tracer as runtime_tracer
from flow_xray.sdk import local as local_module
from flow_xray.sdk.local import LocalProvider, local_recording_allowed
from flow_xray.sdk.local_span import LocalSpan, _new_context
from flow_xray.sdk.processor import attach, get_processor
from flow_xray.tracing.recording import api_call_recorder

Drive = Callable[[trace_api.Tracer], None]


class _Ended:
    """Stands in for the collecting processor: keeps the spans the recorder starts and ends
    (and checks the ids it hands over are theirs)."""

    def __init__(self) -> None:
        self.started_spans: list[Any] = []
        self.ended_spans: list[Any] = []

    def on_start(self, span: Any, parent_context: Any = None, span_id: int | None = None) -> None:
        assert span_id == span.context.span_id
        self.started_spans.append(span)

    def on_end(self, span: Any, span_id: int | None = None) -> None:
        assert span_id == span.context.span_id
        self.ended_spans.append(span)


@contextlib.contextmanager
def _warnings_muted() -> Iterator[None]:
    """The SDK (and the recorder, as it) logs a warning for each ignored write: not news here."""
    logging.disable(logging.WARNING)
    try:
        yield
    finally:
        logging.disable(logging.NOTSET)


def _plain(span: ReadableSpan | LocalSpan) -> dict[str, Any]:
    """What a span says, without its random ids and clock times."""
    parent = span.parent
    return {
        "name": span.name,
        "kind": span.kind.name,
        "attributes": list(dict(span.attributes or {}).items()),
        "events": [(e.name, list(dict(e.attributes or {}).items())) for e in span.events],
        "links": [list(dict(link.attributes or {}).items()) for link in span.links],
        "status": (span.status.status_code.name, span.status.description),
        "has_parent": parent is not None,
        "scope": span.instrumentation_scope.name if span.instrumentation_scope else None,
        "ended": span.end_time is not None,
    }


def _both(drive: Drive) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The ended spans of ``drive`` on the SDK and on the local recorder, as plain data."""
    exporter = InMemorySpanExporter()
    sdk = TracerProvider()
    sdk.add_span_processor(SimpleSpanProcessor(exporter))
    drive(sdk.get_tracer("bench.lib", "1.0"))
    kept = _Ended()
    drive(LocalProvider(kept).get_tracer("bench.lib", "1.0"))  # type: ignore[arg-type]
    sdk.shutdown()
    return [_plain(s) for s in exporter.get_finished_spans()], [_plain(s) for s in kept.ended_spans]


class _Shown:
    def __str__(self) -> str:
        return "shown"


ODD_VALUES: list[tuple[str, Any]] = [
    ("list of ints", [1, 2, 3]),
    ("mixed list", [1, "a", 2.5]),
    ("None", None),
    ("bytes", b"\x00raw"),
    ("dict", {"a": 1, "b": [1, 2]}),
    ("object with __str__", _Shown()),
    ("object without __str__", object()),
    ("nested list", [[1, 2], ["x"]]),
    ("tuple", ("a", "b")),
    ("empty list", []),
    ("bool", True),
    ("huge int", 2**70),
]


@pytest.mark.parametrize(("label", "value"), ODD_VALUES, ids=[label for label, _ in ODD_VALUES])
def test_an_attribute_value_of_any_type_is_kept_as_the_sdk_keeps_it(label: str, value: Any) -> None:
    """set_attribute, set_attributes and start_span's attributes store what the SDK stores."""

    def drive(tracer: trace_api.Tracer) -> None:
        span = tracer.start_span("s", attributes={"at.start": value, "plain": "x"})
        span.set_attribute("one", value)
        span.set_attributes({"many": value, "after": 1})
        span.end()

    sdk, local = _both(drive)
    assert local == sdk


def test_bad_keys_are_dropped_as_the_sdk_drops_them() -> None:
    """An empty key or a key that is not text: the SDK's outcome, whatever it is."""

    def drive(tracer: trace_api.Tracer) -> None:
        span = tracer.start_span("s")
        span.set_attribute("", "empty")
        span.set_attributes({"ok": 1, 7: "number key", "": "again"})  # type: ignore[dict-item]
        span.end()

    with _warnings_muted():
        sdk, local = _both(drive)
    assert local == sdk


def test_a_key_set_again_moves_last_as_in_the_sdk() -> None:
    """Attribute order (which an exporter writes) follows the SDK's: a re-set key moves last."""

    def drive(tracer: trace_api.Tracer) -> None:
        span = tracer.start_span("s", attributes={"a": 1, "b": 2, "c": 3})
        span.set_attribute("a", 10)
        span.set_attributes({"b": 20, "d": 4})
        span.end()

    sdk, local = _both(drive)
    assert local == sdk
    assert [key for key, _ in local[0]["attributes"]] == ["c", "a", "b", "d"]


def test_the_sdk_limits_from_the_environment_apply(monkeypatch: pytest.MonkeyPatch) -> None:
    """OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT, value length and event limits: the oldest attributes
    go first, long text is cut, as the SDK does with the same environment."""
    monkeypatch.setenv("OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT", "5")
    monkeypatch.setenv("OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT", "8")
    monkeypatch.setenv("OTEL_SPAN_EVENT_COUNT_LIMIT", "2")

    def drive(tracer: trace_api.Tracer) -> None:
        span = tracer.start_span("s", attributes={f"k{i}": i for i in range(4)})
        span.set_attributes({"long": "x" * 40, "k9": 9, "k10": ["abcdefghijkl", "ok"]})
        for number in range(4):
            span.add_event(f"e{number}", {"text": "y" * 20})
        span.end()

    with _warnings_muted():
        sdk, local = _both(drive)
    assert local == sdk
    assert len(local[0]["attributes"]) == 5 and len(local[0]["events"]) == 2


def test_status_rules_are_the_sdks() -> None:
    """OK is final, UNSET is ignored, a description with a Status object is ignored."""

    def drive(tracer: trace_api.Tracer) -> None:
        first = tracer.start_span("unset ignored then error")
        first.set_status(StatusCode.UNSET)
        first.set_status(StatusCode.ERROR, "boom")
        first.end()
        second = tracer.start_span("ok is final")
        second.set_status(Status(StatusCode.OK))
        second.set_status(StatusCode.ERROR, "too late")
        second.end()
        third = tracer.start_span("status object")
        with _warnings_muted():
            third.set_status(Status(StatusCode.ERROR, "kept"), "ignored")
        third.end()

    sdk, local = _both(drive)
    assert local == sdk
    assert [s["status"] for s in local] == [("ERROR", "boom"), ("OK", None), ("ERROR", "kept")]


def test_nothing_changes_once_a_span_ended() -> None:
    """Writes after end() are ignored (with the SDK's warning), and a second end() too."""

    def drive(tracer: trace_api.Tracer) -> None:
        span = tracer.start_span("s", attributes={"before": 1})
        span.end()
        span.set_attribute("after", 2)
        span.add_event("late")
        span.set_status(StatusCode.ERROR, "late")
        span.update_name("renamed")
        span.end()

    with _warnings_muted():
        sdk, local = _both(drive)
    assert local == sdk and len(local) == 1


def test_exceptions_are_recorded_as_the_sdk_records_them() -> None:
    """record_exception and a span used as a context manager: the same event and status."""

    def drive(tracer: trace_api.Tracer) -> None:
        span = tracer.start_span("explicit")
        try:
            raise KeyError("missing")
        except KeyError as exc:
            span.record_exception(exc, {"extra": 1}, escaped=True)
        span.end()
        with pytest.raises(ValueError), tracer.start_span("as a with block"):
            raise ValueError("bad value")
        with pytest.raises(ValueError), tracer.start_as_current_span("current", end_on_exit=True):
            raise ValueError("bad again")

    sdk, local = _both(drive)

    def without_stack(spans: list[dict[str, Any]]) -> list[dict[str, Any]]:
        for span in spans:  # the traceback holds the line numbers of this file's two runs
            span["events"] = [
                (name, [(k, v) for k, v in attrs if k != "exception.stacktrace"])
                for name, attrs in span["events"]
            ]
        return spans

    assert without_stack(local) == without_stack(sdk)
    assert local[1]["status"] == ("ERROR", "ValueError: bad value")


def test_links_and_kinds_and_renames_are_kept() -> None:
    """Span kinds, links (with the SDK's validity rule) and update_name."""
    linked = SpanContext(0x1234, 0x99, is_remote=True, trace_flags=TraceFlags(1))

    def drive(tracer: trace_api.Tracer) -> None:
        span = tracer.start_span(
            "client",
            kind=trace_api.SpanKind.CLIENT,
            links=[trace_api.Link(linked, {"why": "batch"})],
        )
        span.add_link(linked, {"n": 2})
        span.add_link(trace_api.INVALID_SPAN_CONTEXT)  # says nothing: not kept
        span.update_name("client renamed")
        span.end()

    sdk, local = _both(drive)
    assert local == sdk
    assert local[0]["kind"] == "CLIENT" and len(local[0]["links"]) == 2


def test_span_contexts_follow_the_sdks_default_sampler_and_ids() -> None:
    """W3C ids; a child keeps its parent's trace id; a remote unsampled parent gives a
    non-recording span nobody sees; a root is sampled with a random trace id."""
    kept = _Ended()
    tracer = LocalProvider(kept).get_tracer("t")  # type: ignore[arg-type]
    sdk_tracer = TracerProvider().get_tracer("t")
    root = tracer.start_span("root")
    sdk_root = sdk_tracer.start_span("root")
    context = root.get_span_context()
    assert context.is_valid and not context.is_remote
    assert context.trace_flags == sdk_root.get_span_context().trace_flags
    child = tracer.start_span("child", trace_api.set_span_in_context(root))
    assert child.get_span_context().trace_id == context.trace_id
    assert child.parent.span_id == context.span_id  # type: ignore[attr-defined]
    unsampled = SpanContext(0xABC, 0xDEF, is_remote=True, trace_flags=TraceFlags(0))
    parent = trace_api.set_span_in_context(NonRecordingSpan(unsampled))
    dropped = tracer.start_span("not sampled", parent)
    sdk_dropped = sdk_tracer.start_span("not sampled", parent)
    assert type(dropped) is type(sdk_dropped) is NonRecordingSpan
    assert dropped.get_span_context().trace_id == 0xABC and not dropped.is_recording()
    assert dropped.get_span_context().trace_flags == sdk_dropped.get_span_context().trace_flags
    for span in (child, root):
        span.end()
    assert [s.name for s in kept.ended_spans] == ["child", "root"]
    assert [s.name for s in kept.started_spans] == ["root", "child"]


def test_a_span_context_is_made_when_first_asked_for_and_kept() -> None:
    """A local span keeps its ids and makes its `SpanContext` when first asked (most spans
    never are: one object less per call for the garbage collector); then always the same
    one, which its children hold as their parent."""

    class Quiet:  # (`_Ended` checks ids against the context: it would ask for it)
        def on_start(self, span: Any, parent_context: Any = None, span_id: Any = None) -> None:
            pass

        def on_end(self, span: Any, span_id: Any = None) -> None:
            pass

    tracer = LocalProvider(Quiet()).get_tracer("t")  # type: ignore[arg-type]
    span = tracer.start_span("s")
    assert span._context is None  # type: ignore[attr-defined]
    context = span.get_span_context()
    assert span.get_span_context() is context is span.context  # type: ignore[attr-defined]
    assert context.is_valid and not context.is_remote
    child = tracer.start_span("c", trace_api.set_span_in_context(span))
    assert child.parent is context  # type: ignore[attr-defined]
    assert child.get_span_context().trace_id == context.trace_id
    child.end()
    span.end()


def test_a_span_context_made_directly_is_the_apis() -> None:
    """The recorder builds its span contexts without the constructor's range checks: the
    same tuple, type and fields as ``SpanContext(...)`` gives, with and without a state."""
    state = TraceState([("vendor", "value")])
    for trace_id, span_id, flags, trace_state in (
        (1, 1, TraceFlags(TraceFlags.SAMPLED), None),
        ((1 << 128) - 1, (1 << 64) - 1, TraceFlags(0), state),
        (0xABC, 0xDEF, TraceFlags(TraceFlags.SAMPLED), state),
    ):
        made = _new_context(trace_id, span_id, flags, trace_state)
        expected = SpanContext(trace_id, span_id, False, flags, trace_state)
        assert type(made) is SpanContext and tuple(made) == tuple(expected)
        assert (made.is_valid, made.trace_state, made.is_remote) == (
            expected.is_valid,
            expected.trace_state,
            False,
        )


_ENDINGS: list[tuple[str, dict[str, Any] | None, bool, Callable[[trace_api.Span], None]]] = [
    ("output and OK", {"output.value": "7", "output.mime_type": "application/json"}, True, None),
    ("a key set again moves last", {"a": 10, "b": "x"}, True, None),
    ("odd values cleaned", {"list": [1, 2], "obj": object(), "": "empty"}, True, None),
    ("nothing, not OK", None, False, None),
    ("incomplete, not OK", {"flow_xray.incomplete": True}, False, None),
    ("OK replaces an error", {"x": 1}, True, lambda s: s.set_status(StatusCode.ERROR, "e")),
    ("an error stays without OK", {"x": 1}, False, lambda s: s.set_status(StatusCode.ERROR, "e")),
    ("already OK", None, True, lambda s: s.set_status(StatusCode.OK)),
    ("ended before", {"late": 1}, True, lambda s: s.end()),
]


@pytest.mark.parametrize(
    ("label", "attributes", "ok", "before"), _ENDINGS, ids=[e[0] for e in _ENDINGS]
)
def test_a_call_ended_in_one_step_is_the_three_api_calls(
    label: str,
    attributes: dict[str, Any] | None,
    ok: bool,
    before: Callable[[trace_api.Span], None] | None,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """``@trace`` ends a call on the recorder with `LocalTracer.end_call` (attributes, OK,
    end under one lock); on the SDK with ``set_attributes``, ``set_status(OK)`` and
    ``end()``: the spans, and the warnings about an ended span, are the same."""

    warned: list[list[str]] = []  # the SDK's warnings, then the recorder's

    def drive(tracer: trace_api.Tracer) -> None:
        caplog.clear()
        span = tracer.start_span("call", attributes={"a": 1, "b": 2, "c": 3})
        if before is not None:
            before(span)
        _recorder(tracer, "call", {})[1](span, attributes, ok)
        warned.append([r.getMessage() for r in caplog.records])

    with caplog.at_level(logging.WARNING):
        sdk, local = _both(drive)
    assert local == sdk
    assert warned[1] == warned[0]  # the same warnings, word for word


def _recorder(tracer: trace_api.Tracer, name: str, static: dict[str, Any]) -> Any:
    """How ``@trace`` starts and ends a function's calls on ``tracer`` (as `_Spec.recorder_for`)."""
    return runtime_tracer.call_recorder_of(tracer, name, static) or api_call_recorder(
        tracer, name, static
    )


def test_only_the_local_recorder_has_a_call_recorder_of_its_own() -> None:
    assert runtime_tracer.call_recorder_of(TracerProvider().get_tracer("t"), "f", {}) is None
    local = LocalProvider(_Ended()).get_tracer("t")  # type: ignore[arg-type]
    assert runtime_tracer.call_recorder_of(local, "f", {}) is not None


_STARTS: list[tuple[str, dict[str, Any], dict[str, Any] | None]] = [
    ("static and inputs", {"kind": "CHAIN", "line": 3}, {"input.value": "{}", "mime": "json"}),
    ("no inputs", {"kind": "CHAIN"}, None),
    ("nothing at all", {}, None),
    ("an input replaces a static value", {"a": 1, "b": 2}, {"a": "input"}),
    ("odd static values", {"list": [1, 2], "obj": object(), "": "empty"}, {"in": 1}),
    ("odd input values", {"a": 1}, {"list": (1, 2), "none": None, "big": 2**70}),
    ("too many for the limit", {f"s{i}": i for i in range(4)}, {f"i{i}": i for i in range(3)}),
    ("too long for the limit", {"a": "x" * 20}, {"b": "y" * 20}),
]


@pytest.mark.parametrize(("label", "static", "inputs"), _STARTS, ids=[e[0] for e in _STARTS])
def test_a_call_started_in_one_step_is_start_span_then_set_span_in_context(
    label: str,
    static: dict[str, Any],
    inputs: dict[str, Any] | None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``@trace`` starts a call on the recorder in one step (`LocalTracer.call_recorder`); on
    the SDK with ``start_span`` (static and input attributes together) and
    ``set_span_in_context``: the same spans (limits applied alike), the same parents, and
    a context holding the span as the current one over what was current before."""
    monkeypatch.setenv("OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT", "5")
    monkeypatch.setenv("OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT", "8")
    marker = context_api.create_key("marker")

    def drive(tracer: trace_api.Tracer) -> None:
        start, end = _recorder(tracer, "call", static)
        token = context_api.attach(context_api.set_value(marker, "kept"))
        try:
            with tracer.start_as_current_span("outer") as outer:
                span, context = start(inputs)
                assert trace_api.get_current_span(context) is span
                assert context_api.get_value(marker, context) == "kept"
                assert trace_api.get_current_span() is outer  # not attached by the start
                assert span.get_span_context().trace_id == outer.get_span_context().trace_id
                assert span.parent.span_id == outer.get_span_context().span_id  # type: ignore[attr-defined]
                end(span, None, True)
            root, _ = start(inputs)  # no current span: a new trace
            assert root.parent is None  # type: ignore[attr-defined]
            end(root, None, False)
        finally:
            context_api.detach(token)

    sdk, local = _both(drive)
    assert local == sdk
    assert [s["name"] for s in local] == ["call", "outer", "call"]


def test_the_sdk_disabled_gives_no_op_tracers(monkeypatch: pytest.MonkeyPatch) -> None:
    """OTEL_SDK_DISABLED=true: the recorder's tracers record nothing, as the SDK's."""
    monkeypatch.setenv("OTEL_SDK_DISABLED", "true")
    tracer = LocalProvider(_Ended()).get_tracer("t")  # type: ignore[arg-type]
    assert isinstance(tracer, trace_api.NoOpTracer)


@pytest.mark.parametrize(
    ("variable", "value", "allowed"),
    [
        ("FLOW_XRAY_RECORDER", "sdk", False),
        ("FLOW_XRAY_RECORDER", "local", True),
        ("OTEL_TRACES_SAMPLER", "traceidratio", False),
        ("OTEL_PYTHON_ID_GENERATOR", "xray", False),
        ("OTEL_SERVICE_NAME", "svc", True),
    ],
)
def test_the_sdk_path_is_kept_where_the_environment_asks_for_sdk_behaviour(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str, allowed: bool
) -> None:
    """A sampler or id generator named in the environment, or FLOW_XRAY_RECORDER=sdk: the SDK."""
    for name in ("FLOW_XRAY_RECORDER", "OTEL_TRACES_SAMPLER", "OTEL_PYTHON_ID_GENERATOR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(variable, value)
    assert local_recording_allowed() is allowed


def test_an_api_laying_span_contexts_out_otherwise_gets_the_sdk_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The recorder reads span contexts as the API's 6-tuples: where the API's constructor
    builds them otherwise, captures use SDK spans (the probe: a context of another layout)."""
    for name in ("FLOW_XRAY_RECORDER", "OTEL_TRACES_SAMPLER", "OTEL_PYTHON_ID_GENERATOR"):
        monkeypatch.delenv(name, raising=False)  # (the suite also runs with the SDK path asked)
    assert local_module._api_layout() and local_recording_allowed()

    class Shuffled(tuple):  # type: ignore[type-arg]
        def __new__(cls, trace_id: int, span_id: int, *rest: Any, **named: Any) -> Shuffled:
            return tuple.__new__(cls, (span_id, trace_id, False, TraceFlags(1), None, True))

        is_valid = True

    monkeypatch.setattr(local_module, "SpanContext", Shuffled)
    assert not local_module._api_layout()
    monkeypatch.setattr(local_module, "_API_LAYOUT", local_module._api_layout())
    assert not local_recording_allowed()


# --- whole captures, the two paths side by side ----------------------------------------


@pytest.fixture
def private_provider(otel_globals: Callable[[], None]) -> Iterator[Callable[[str], None]]:
    """Choose the private provider captures use: ``"local"`` or ``"sdk"``; restored after."""
    before = runtime_tracer.private_provider()

    def use(which: str) -> None:
        if which == "local":
            runtime_tracer.set_private_provider(LocalProvider(get_processor()))
        else:
            provider = TracerProvider()
            attach(provider)
            runtime_tracer.set_private_provider(provider)

    yield use
    runtime_tracer.set_private_provider(before)


@trace
def _leaf(number: int) -> int:
    trace_api.get_current_span().set_attribute("user.note", [number, number + 1])
    return number * 2


@trace(kind="tool")
def _fails(text: str) -> None:
    raise ValueError(f"bad {text}")


@trace
def _numbers(count: int) -> Iterator[int]:
    yield from range(count)


@trace(name="pipeline")
def _pipeline(items: list[int]) -> int:
    other = trace_api.get_tracer("other.instrumentation")  # a proxy: no provider is global
    total = 0
    for item in items:
        with other.start_as_current_span("db.query", attributes={"db.rows": item}) as span:
            span.add_event("fetched", {"rows": item})
            total += _leaf(item)
    with contextlib.suppress(ValueError):
        _fails("input")
    return total + sum(_numbers(3))


def _captured(use: Callable[[str], None], which: str) -> list[dict[str, Any]]:
    use(which)
    with trace.capture() as result:
        _pipeline([1, 2])
    nodes = []
    for node in result:
        data = node.to_dict()
        for key in ("id", "span_id", "parent_id", "trace_id", "latency_ms", "start_ms"):
            data.pop(key, None)
        data.pop("children", None)
        for event in data.get("events", []):
            event.pop("time_ms", None)
        data["traceback"] = (data.get("traceback") or "").count("\n")
        nodes.append(data)
    return nodes


def test_a_capture_holds_the_same_trace_on_both_paths(
    private_provider: Callable[[str], None],
) -> None:
    """@trace calls, another instrumentation's spans (through a proxy tracer), a user's
    attribute on the current span, a handled failure and a generator: the captured trace
    on the local recorder is the SDK path's, node for node."""
    sdk = _captured(private_provider, "sdk")
    local = _captured(private_provider, "local")
    assert local == sdk
    names = [node["name"] for node in local]
    assert names == ["pipeline", "db.query", "_leaf", "db.query", "_leaf", "_fails", "_numbers"]


FAST_SUITE = [sys.executable, "-m", "pytest", "-m", "not slow", "-q", "-n", "2"]


@pytest.mark.slow
def test_the_fast_suite_passes_on_the_sdk_path_too() -> None:
    """Every fast test again with captures on SDK spans (``FLOW_XRAY_RECORDER=sdk``): the
    suite as a whole is the check that the two paths agree. (This run takes a minute or so.)"""
    root = Path(__file__).resolve().parents[2]
    environment = {**os.environ, "FLOW_XRAY_RECORDER": "sdk"}
    environment.pop("PYTEST_XDIST_WORKER", None)
    done = subprocess.run(
        FAST_SUITE,
        cwd=root,
        env=environment,
        capture_output=True,
        text=True,
        timeout=1200,
        check=False,
    )
    summary = done.stdout.strip().splitlines()[-1:] or [done.stderr[-2000:]]
    assert done.returncode == 0, "\n".join([*summary, done.stdout[-6000:]])
    assert " passed" in summary[0] and "failed" not in summary[0]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_gets_new_span_locks() -> None:
    """Spans share their locks; one that another thread holds at a fork would stay held in
    the child. The child's spans take new locks: spans of that lock's stripe still end,
    the one open at the fork on that very lock too."""
    script = textwrap.dedent(
        """
        import os, signal, threading
        from flow_xray.sdk.local import LocalProvider
        from flow_xray.sdk.local_span import LOCKS

        class Kept:
            def on_start(self, span, parent_context=None, span_id=None): pass
            def on_end(self, span, span_id=None): pass

        tracer = LocalProvider(Kept()).get_tracer("t")
        before = tracer.start_span("before")
        held = before._lock
        holding, done = threading.Event(), threading.Event()

        def hold():
            with held:
                holding.set()
                done.wait(30)

        threading.Thread(target=hold).start()
        holding.wait(30)
        pid = os.fork()
        if pid == 0:
            signal.alarm(20)  # a hang ends the child with SIGALRM
            ended = 0
            while ended < 200:  # ~3 of them on the held lock's stripe in the parent
                span = tracer.start_span("in child")
                span.end()
                ended += 1
            before.set_attribute("ended in", "child")
            before.end()
            os._exit(0 if held not in LOCKS.pool and before.end_time else 3)
        done.set()
        _, status = os.waitpid(pid, 0)
        print(os.waitstatus_to_exitcode(status))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "0"


def test_a_spans_warnings_are_logged_with_no_span_lock_held(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Every warning a span logs itself (a write to an ended span, a description beside a
    `Status`) reaches the log handlers after the span's lock is let go: a handler that writes
    to spans never waits on a lock its thread holds. The words are the SDK's."""
    from flow_xray.sdk.local_span import LOCKS

    held_when_logged: list[bool] = []

    class Watch(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            held_when_logged.append(any(lock._is_owned() for lock in LOCKS.pool))  # type: ignore[attr-defined]

    def drive(tracer: trace_api.Tracer) -> None:
        other = tracer.start_span("other")
        described = tracer.start_span("described")
        described.set_status(Status(StatusCode.ERROR, "kept"), "ignored")
        described.end()
        span = tracer.start_span("s")
        span.end()
        span.set_attribute("after", 2)
        span.set_attributes({"after": 2})
        span.add_event("late")
        span.add_link(other.get_span_context())
        span.update_name("renamed")
        span.set_status(StatusCode.ERROR, "late")
        span.record_exception(ValueError("late"))
        span.end()
        other.end()

    messages: list[list[str]] = []
    watch = Watch(logging.WARNING)
    logging.getLogger().addHandler(watch)
    try:
        for make in (_sdk_tracer, _local_tracer):
            caplog.clear()
            with caplog.at_level(logging.WARNING):
                drive(make())
            messages.append([r.getMessage() for r in caplog.records])
        local = LocalProvider(_Ended()).get_tracer("t")  # type: ignore[arg-type]
        ended = local.start_span("ended in one step")
        ended.end()
        local.end_call(ended, {"late": 1}, True)  # type: ignore[attr-defined]
    finally:
        logging.getLogger().removeHandler(watch)
    assert messages[1] == messages[0] and len(messages[1]) >= 8
    assert held_when_logged and not any(held_when_logged)


def _sdk_tracer() -> trace_api.Tracer:
    return TracerProvider().get_tracer("t")


def _local_tracer() -> trace_api.Tracer:
    return LocalProvider(_Ended()).get_tracer("t")  # type: ignore[arg-type]


def test_log_handlers_writing_to_spans_in_two_threads_do_not_deadlock() -> None:
    """Two threads each warned about their own ended span while a handler in each writes to
    a span sharing the other's lock, both at once (a barrier): had the warnings been logged
    under the locks, each thread would hold one and wait for the other's forever."""
    script = textwrap.dedent(
        """
        import logging, threading
        from flow_xray.sdk.local import LocalProvider

        class Kept:
            def on_start(self, span, parent_context=None, span_id=None): pass
            def on_end(self, span, span_id=None): pass

        tracer = LocalProvider(Kept()).get_tracer("t")
        by_stripe = {}
        while len(by_stripe) < 2:  # one span of each of two lock stripes
            span = tracer.start_span("s")
            by_stripe.setdefault(span._lock, span)
        first, second = by_stripe.values()
        ended = {}
        for name, span in (("a", first), ("b", second)):
            done = tracer.start_span(name)
            while done._lock is not span._lock:  # an ended span on the same stripe as ``span``
                done = tracer.start_span(name)
            done.end()
            ended[name] = done
        writes_to = {"a": second, "b": first}  # each thread's handler: the other's stripe
        meet = threading.Barrier(2, timeout=10)

        class Writer(logging.Handler):
            def handle(self, record):  # (without the handler's own lock: both threads at once)
                self.emit(record)
                return True

            def emit(self, record):
                name = threading.current_thread().name
                if name in writes_to:
                    meet.wait()
                    writes_to[name].set_attribute("logged", record.getMessage())

        logging.getLogger().addHandler(Writer())
        workers = [
            threading.Thread(
                target=ended[name].set_attribute, args=("late", 1), name=name, daemon=True
            )
            for name in ("a", "b")
        ]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join(10)
        print(sum(worker.is_alive() for worker in workers), first.attributes.get("logged"))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.stdout.split(None, 1) == ["0", "Setting attribute on ended span.\n"], done.stderr
