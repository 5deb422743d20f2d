"""OTLP export plumbing: exporters, loss accounting, and usage counted once on the wire.

`ExportPipeline` wraps one exporter in a batch processor that counts every span
it was handed and every span the destination accepted, so the difference — spans
lost to a backend that is down or slow, or to a full queue — can be reported
once at shutdown instead of a log line per failed retry. Where spans go (an
`OtlpTarget` from arguments or the ``OTEL_EXPORTER_OTLP_*`` variables) is
`flow_xray.sdk.otlp_target`'s.

Every export is bounded in time: exporters are built with ``timeout=`` (which in
opentelemetry-exporter-otlp 1.45 caps the whole retry/backoff loop, not just one
attempt), and `run_bounded` abandons a flush that overruns its budget.
"""

from __future__ import annotations

import contextvars
import logging
import re
import threading
import time
from collections.abc import Callable, Sequence
from typing import Final
from urllib.parse import quote, unquote, urlsplit

from opentelemetry import context as context_api
from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan, Span
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

from flow_xray.runtime import patches
from flow_xray.runtime.sdk_state import EXPORT, LOG_SCOPE
from flow_xray.sdk.otlp_response import CheckingSession, Verdict
from flow_xray.sdk.otlp_target import GRPC, OtlpTarget
from flow_xray.sdk.span_text import exportable_spans
from flow_xray.sdk.usage_gate import UsageGate
from flow_xray.serialize import get_limits, scrub_text
from flow_xray.terminal import one_line

logger = logging.getLogger("flow_xray")
_debug_log = logging.getLogger("flow_xray.otlp")

# The SDK exporters log every transient failure and retry, and the batch
# processor every span a full queue drops; while flow-xray's own exporters and
# processors run, those records are kept at DEBUG and summed up in one warning.
_SDK_EXPORTER_LOGGERS: Final = (
    "opentelemetry.exporter.otlp.proto.grpc.exporter",
    "opentelemetry.exporter.otlp.proto.http.trace_exporter",
    "opentelemetry.exporter.otlp.common.http",
    "opentelemetry.sdk._shared_internal",  # the batch processor's "Queue full" line
)


# The context key under which the SDK's exporters run ("suppress instrumentation").
_SUPPRESS_KEY: Final = getattr(
    context_api, "_SUPPRESS_INSTRUMENTATION_KEY", "suppress_instrumentation"
)
_SDK_QUEUE_SIZE: Final = 2048  # the batch processor's default queue (OTEL_BSP_MAX_QUEUE_SIZE)
_RETRY_NOTE: Final = re.compile(r",? retrying in [0-9.]+s\.?")
_GENERIC_ERRORS: Final = ("max retries or shutdown", "Shutdown in progress")


def build_exporter(target: OtlpTarget, timeout_s: float) -> SpanExporter:
    """Construct the SDK OTLP span exporter for ``target``, every export capped at ``timeout_s``."""
    headers = dict(target.headers)
    # Each exporter loads only when asked for: the gRPC one brings grpcio (heavy).
    if target.protocol == GRPC:
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import (  # noqa: PLC0415
            OTLPSpanExporter as GrpcExporter,
        )

        return GrpcExporter(endpoint=target.endpoint, headers=headers, timeout=timeout_s)
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import (  # noqa: PLC0415
        OTLPSpanExporter as HttpExporter,
    )

    # The session judges each answer: only an OTLP success counts as delivered.
    return HttpExporter(
        endpoint=target.endpoint, headers=headers, timeout=timeout_s, session=CheckingSession()
    )


class _LogSink:
    """Something that takes over SDK log records raised while it runs on this thread."""

    def note(self, message: str) -> None:
        raise NotImplementedError


class _QuietInScope(logging.Filter):
    """Hand SDK log records raised inside flow-xray's calls to their owner (kept at DEBUG)."""

    def filter(self, record: logging.LogRecord) -> bool:
        sink: _LogSink | None = LOG_SCOPE.sink
        if sink is None:
            return True
        message = record.getMessage()
        _debug_log.debug("%s", message)
        sink.note(_RETRY_NOTE.sub("", message))
        return False


_QUIET_LOGS: Final = patches.LoggerFilter(
    "OTLP exporter logs", _SDK_EXPORTER_LOGGERS, _QuietInScope()
)


class _ExportScope(_LogSink):
    """One export call on one thread: the SDK's log lines and the server's answer to it."""

    def __init__(self, owner: LossCountingExporter) -> None:
        self._owner = owner
        self.verdict: Verdict | None = None

    def note(self, message: str) -> None:
        self._owner.note(message)

    def otlp_answer(self, verdict: Verdict) -> None:
        """What `flow_xray.sdk.otlp_response.CheckingSession` made of the answer (the last wins)."""
        self.verdict = verdict


class LossCountingExporter(SpanExporter, _LogSink):
    """Wrap an exporter: count the spans it accepted, never raise, drop everything once closed.

    Accepted means what the destination said: for OTLP/HTTP an OTLP success
    (`flow_xray.sdk.otlp_response`), less the spans a partial success rejected.
    """

    def __init__(self, inner: SpanExporter) -> None:
        self._inner = inner
        self._lock = threading.Lock()
        self._closed = False
        self.exported = 0
        self.last_error: str | None = None
        self.where = ""  # the endpoint: its password is taken out of the SDK's messages
        patches.install(_QUIET_LOGS)

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        """Forward to the wrapped exporter unless closed; failures become a count, not a raise."""
        if self._closed:
            return SpanExportResult.FAILURE
        scope = _ExportScope(self)
        previous, LOG_SCOPE.sink = LOG_SCOPE.sink, scope
        try:
            result = self._inner.export(exportable_spans(spans))
        except Exception as exc:  # an exporter bug must not kill the batch worker
            self.last_error = one_line(
                _without_userinfo(f"{type(exc).__name__}: {exc}", self.where)
            )
            _debug_log.debug("export raised", exc_info=True)
            return SpanExportResult.FAILURE
        finally:
            LOG_SCOPE.sink = previous
        verdict = scope.verdict
        loss = verdict.loss(len(spans)) if verdict is not None else None
        if loss is not None:
            self.last_error = loss  # the server's own answer says more than the SDK's line
        if result is SpanExportResult.SUCCESS:
            rejected = min(verdict.rejected, len(spans)) if verdict is not None else 0
            with self._lock:
                self.exported += len(spans) - rejected
        return result

    def note(self, message: str) -> None:
        """Keep the most telling SDK error message for the loss warning.

        The SDK's final line can be generic ("max retries or shutdown"); the
        retry lines before it carry the cause.
        """
        if self.last_error is None or not any(g in message for g in _GENERIC_ERRORS):
            # An SDK line may quote what a server sent, and the gRPC one the endpoint.
            self.last_error = one_line(_without_userinfo(message, self.where))

    def close(self) -> None:
        """Refuse further batches and shut the wrapped exporter down (aborting its backoff)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        try:
            self._inner.shutdown()
        except Exception:  # shutting down must never raise at exit
            _debug_log.debug("exporter shutdown raised", exc_info=True)

    def shutdown(self) -> None:
        """SDK hook; same as `close`."""
        self.close()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        """Nothing is buffered here; the batch processor owns the queue."""
        return True


class CountingBatchSpanProcessor(BatchSpanProcessor, _LogSink):
    """A BatchSpanProcessor (bounded queue) that counts the sampled spans handed to it.

    The SDK logs a warning for every span a full queue drops; here the first
    drop gives one warning and the total goes into the loss report at exit.
    Spans reporting LLM usage pass a `UsageGate` first: each request's figure
    reaches the destination under the summed names once.

    With ``complete`` (a local file, which should hold every span), the queue
    never fills: once half of it waits, the thread ending a span exports the
    queue itself before going on (the program runs at the exporter's pace
    instead of losing spans). A destination that takes nothing in such a round
    is not waited for again.
    """

    def __init__(
        self,
        exporter: LossCountingExporter,
        destination: str,
        max_queue_size: int | None = None,
        *,
        complete: bool = False,
    ) -> None:
        super().__init__(exporter, max_queue_size=max_queue_size)
        self.counted = exporter
        # Spans waiting (handed over, not yet accepted) that make the ending thread export.
        self.catch_up_at = max((max_queue_size or _SDK_QUEUE_SIZE) // 2, 1) if complete else 0
        self.unaccounted = 0  # handed over, never accepted (failed, held): left out of "waiting"
        self.destination = destination
        self._count_lock = threading.Lock()
        self._warned_full = False
        self.submitted = 0
        self.abandoned = False
        self.gate = UsageGate(self._enqueue)

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        """Tell the usage gate (the SDK's batch processor does nothing here)."""
        context = span.context
        if not self.abandoned and context is not None and context.trace_flags.sampled:
            self.gate.started(span)

    def on_end(self, span: ReadableSpan) -> None:
        """Count, then enqueue through the usage gate (a full queue drops the span; the
        count makes that visible)."""
        if self.abandoned or span.context is None or not span.context.trace_flags.sampled:
            return
        with self._count_lock:
            self.submitted += 1
        self.gate.ended(span)

    def _enqueue(self, span: ReadableSpan) -> None:
        previous, LOG_SCOPE.sink = LOG_SCOPE.sink, self
        try:
            super().on_end(span)
        finally:
            LOG_SCOPE.sink = previous
        if self.catch_up_at and self._waiting() >= self.catch_up_at and not _exporting():
            self._catch_up()

    def _flush_suppressed(self) -> None:
        context_api.attach(context_api.set_value(_SUPPRESS_KEY, True))  # (gone with the copy)
        try:
            BatchSpanProcessor.force_flush(self)  # the queue only, not the usage gate's spans
        except Exception:  # exporting is best effort here; the worker still runs
            _debug_log.debug("catching up raised", exc_info=True)

    def _waiting(self) -> int:
        return self.submitted - self.counted.exported - self.unaccounted

    def _catch_up(self) -> None:
        """Export the queue on this thread (``complete``): backpressure instead of loss."""
        before = self.counted.exported
        # Instrumentation suppressed in a copy of the context: a Ctrl-C landing as it is
        # set or unset cannot leave this thread's later spans suppressed for good.
        contextvars.copy_context().run(self._flush_suppressed)
        if self.counted.exported == before:  # it takes nothing: never wait for it again
            self.catch_up_at = 0
        self.unaccounted = max(self.submitted - self.counted.exported, 0)

    def force_flush(self, timeout_millis: int | None = None) -> bool:
        """Release the spans the usage gate holds, then flush the queue."""
        self.gate.release_all()
        return super().force_flush(timeout_millis)

    def shutdown(self) -> None:
        """Release the spans the usage gate holds, then shut the batch processor down."""
        self.gate.release_all()
        super().shutdown()  # type: ignore[no-untyped-call]  # the SDK leaves it unannotated

    def note(self, message: str) -> None:
        """Turn the SDK's per-span "Queue full" warnings into one."""
        if not self._warned_full:
            self._warned_full = True
            logger.warning(
                "flow-xray: export queue for %s is full, dropping spans (total reported at exit)",
                self.destination,
            )


def _exporting() -> bool:
    """Whether this thread is inside an export (the SDK's batch processor, and a catch-up,
    mark it so): a span ended there must not start another export of the same queue,
    whose lock this thread may hold."""
    return bool(context_api.get_value(_SUPPRESS_KEY))


def run_bounded(actions: Sequence[Callable[[], object]], timeout_s: float) -> bool:
    """Run each action on its own daemon thread, waiting at most ``timeout_s`` for all of them.

    Returns True when every action finished in time. An action that overruns
    is abandoned (its daemon thread cannot keep the process alive).
    """
    deadline = time.monotonic() + max(timeout_s, 0.0)
    events: list[threading.Event] = []
    for action in actions:
        done = threading.Event()
        events.append(done)

        def target(action: Callable[[], object] = action, done: threading.Event = done) -> None:
            try:
                action()
            except Exception:  # flushing is best effort; a failure shows up as lost spans
                _debug_log.debug("flush step raised", exc_info=True)
            finally:
                done.set()

        try:
            threading.Thread(target=target, name="flow-xray-flush", daemon=True).start()
        except RuntimeError:  # no new threads during interpreter finalisation
            target()
    return all(done.wait(max(deadline - time.monotonic(), 0.0)) for done in events)


class ExportPipeline:
    """One destination: a loss-counting exporter behind a counting batch processor."""

    def __init__(
        self,
        key: tuple[str, str],
        exporter: SpanExporter,
        max_queue_size: int | None = None,
        *,
        complete: bool = False,
    ) -> None:
        self.key = key
        self.exporter = LossCountingExporter(exporter)
        self.exporter.where = key[1]
        self.processor = CountingBatchSpanProcessor(
            self.exporter, key[1], max_queue_size, complete=complete
        )
        EXPORT.alive.add(self)
        patches.install(_RESTART_COUNTS_AT_FORK)

    def _restart_counts(self) -> None:
        """In a forked child: the SDK empties the inherited queue, so count from zero.

        The parent's counts stay the parent's; kept here they would report the
        parent's queued spans as lost when the child exits.
        """
        self.processor.submitted = 0
        self.processor.unaccounted = 0
        self.processor._count_lock = threading.Lock()
        self.exporter.exported = 0
        self.exporter._lock = threading.Lock()

    def abandon(self) -> None:
        """Export nothing more from this process, without flushing or closing anything.

        For a forked child's copy of a pipeline whose parent still owns the
        real one (and exports the child's spans itself): flushing or closing
        here would send the parent's queue twice or report it as lost.
        """
        self.processor.abandoned = True
        self.exporter._closed = True

    @property
    def lost(self) -> int:
        """Spans handed to this pipeline that the destination has not accepted."""
        return max(self.processor.submitted - self.exporter.exported, 0)

    def report_loss(self) -> int:
        """Warn once if any span was lost; return the number lost.

        Meant for after the processor was flushed and shut down (see `close_all`).
        """
        lost = self.lost
        if lost:
            protocol, where = self.key
            reason = f": {self.exporter.last_error}" if self.exporter.last_error else ""
            limits = get_limits()
            logger.warning(
                "flow-xray: %d span%s not exported to %s (%s)%s",
                lost,
                " was" if lost == 1 else "s were",
                scrub_text(where, limits),
                protocol,
                scrub_text(reason, limits),
            )
        return lost


def _without_userinfo(text: str, endpoint: str) -> str:
    """``text`` without the password of ``endpoint``'s ``user:password@``, however quoted: the
    gRPC exporter names its target as ``user:password@host:port``, without the scheme that
    tells `scrub_text` a URL password from other text."""
    try:
        password = urlsplit(endpoint).password
    except ValueError:
        return text
    if not password:
        return text
    for form in {password, unquote(password), quote(unquote(password), safe="")}:
        text = text.replace(form, "[REDACTED:url-password]")
    return text


def _restart_all_counts() -> None:
    for pipeline in tuple(EXPORT.alive):
        pipeline._restart_counts()


_RESTART_COUNTS_AT_FORK: Final = patches.ForkHook(
    "export pipeline counts", after_in_child=_restart_all_counts
)


def flush_all(pipelines: Sequence[ExportPipeline], timeout_s: float) -> bool:
    """Flush every pipeline in parallel within ``timeout_s``; True if all finished."""
    return run_bounded([p.processor.force_flush for p in pipelines], timeout_s)


def close_all(pipelines: Sequence[ExportPipeline], flush_s: float, close_s: float) -> int:
    """Flush (``flush_s``), then stop exporters and processors (``close_s``); warn about losses.

    Exporters are closed before their processors shut down, so a batch still
    queued after the flush budget is dropped (and counted) instead of waiting
    for another round of retries. Returns the total number of spans lost.
    """
    flush_all(pipelines, flush_s)
    for pipeline in pipelines:
        pipeline.exporter.close()
    run_bounded([p.processor.shutdown for p in pipelines], close_s)
    return sum(pipeline.report_loss() for pipeline in pipelines)
