"""OTLP export plumbing: targets from arguments and environment, exporters, loss accounting.

`resolve_target` turns ``endpoint`` / ``protocol`` / ``headers`` (or the
standard ``OTEL_EXPORTER_OTLP_*`` variables) into a validated `OtlpTarget`.
`ExportPipeline` wraps one exporter in a batch processor that counts every span
it was handed and every span the destination accepted, so the difference — spans
lost to a backend that is down or slow, or to a full queue — can be reported
once at shutdown instead of a log line per failed retry.

Every export is bounded in time: exporters are built with ``timeout=`` (which in
opentelemetry-exporter-otlp 1.45 caps the whole retry/backoff loop, not just one
attempt), and `run_bounded` abandons a flush that overruns its budget.
"""

from __future__ import annotations

import logging
import os
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final
from urllib.parse import unquote, urlsplit, urlunsplit

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

from flow_xray.errors import ConfigurationError
from flow_xray.runtime import patches
from flow_xray.runtime.sdk_state import EXPORT, LOG_SCOPE
from flow_xray.sdk.span_text import exportable_spans
from flow_xray.serialize import get_limits, scrub_text

logger = logging.getLogger("flow_xray")
_debug_log = logging.getLogger("flow_xray.otlp")

GRPC: Final = "grpc"
HTTP_PROTOBUF: Final = "http/protobuf"
PROTOCOLS: Final = (GRPC, HTTP_PROTOBUF)
TRACES_PATH: Final = "/v1/traces"
HTTP_DEFAULT_PORT: Final = 4318

# The SDK exporters log every transient failure and retry, and the batch
# processor every span a full queue drops; while flow-xray's own exporters and
# processors run, those records are kept at DEBUG and summed up in one warning.
_SDK_EXPORTER_LOGGERS: Final = (
    "opentelemetry.exporter.otlp.proto.grpc.exporter",
    "opentelemetry.exporter.otlp.proto.http.trace_exporter",
    "opentelemetry.exporter.otlp.common.http",
    "opentelemetry.sdk._shared_internal",  # the batch processor's "Queue full" line
)


_RETRY_NOTE: Final = re.compile(r",? retrying in [0-9.]+s\.?")
_GENERIC_ERRORS: Final = ("max retries or shutdown", "Shutdown in progress")


@dataclass(frozen=True)
class OtlpTarget:
    """Where and how to send spans: a protocol, a normalised URL and request headers.

    For gRPC the endpoint is ``scheme://host:port``; for HTTP it is the full
    URL of the traces resource (``.../v1/traces``).
    """

    protocol: str
    endpoint: str
    headers: tuple[tuple[str, str], ...] = ()


# Where the environment names the OTLP traces endpoint, the signal-specific one first.
ENDPOINT_VARIABLES: Final = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")


def _env(*names: str) -> tuple[str, str] | None:
    """Return (name, value) of the first variable in ``names`` that is set and non-empty."""
    for name in names:
        value = os.environ.get(name, "").strip()
        if value:
            return name, value
    return None


def endpoint_from_env() -> tuple[str, str] | None:
    """(variable, value) of the OTLP traces endpoint the environment names; None if none."""
    return _env(*ENDPOINT_VARIABLES)


def split_header(item: str) -> tuple[str, str] | None:
    """A ``K=V`` header item as its name and value, stripped; None when it is not ``K=V``.

    Not ``K=V``: no ``=``, or nothing before it. Values are taken as they are
    (`parse_headers` percent-decodes the environment's).
    """
    key, sep, value = item.partition("=")
    if not sep or not key.strip():
        return None
    return key.strip(), value.strip()


def shown_header(item: str) -> str:
    """A malformed header item as an error may show it: its name, never its value.

    ``Authorization: Bearer x`` shows as ``'Authorization'…``; an item with no
    ``=``, ``:`` or blank (``TOKEN``) may be the credential itself, so only its
    length is shown.
    """
    text = item.strip()
    parts = re.split(r"[\s:=]", text, maxsplit=1)
    if len(parts) == 1:
        return f"an item of {len(text)} character{'s' if len(text) != 1 else ''} without '='"
    return f"{parts[0][:40]!r}…" if parts[0] else "an item without a name"


def shown_endpoint(url: str) -> str:
    """An endpoint as an error may show it: a ``user:password@`` part's password (or a lone
    ``token@``) replaced, whatever characters it holds, and credentials scrubbed.

    ``http://u:p/a#s@host:x`` shows as ``http://u:[REDACTED:url-password]@host:x``.
    """
    scheme, sep, rest = url.partition("://")
    if not sep:
        scheme, rest = "", url
    at = rest.rfind("@")
    if at >= 0:
        user, colon, _ = rest[:at].partition(":")
        userinfo = f"{user}:[REDACTED:url-password]" if colon else "[REDACTED:url-userinfo]"
        rest = f"{userinfo}@{rest[at + 1 :]}"
    return scrub_text(f"{scheme}{sep}{rest}", get_limits())


def parse_headers(text: str, source: str) -> dict[str, str]:
    """Parse ``k1=v1,k2=v2`` (values percent-decoded, as in ``OTEL_EXPORTER_OTLP_HEADERS``).

    Raises:
        ConfigurationError: an item is not ``K=V`` or has an empty key.
    """
    headers: dict[str, str] = {}
    for item in text.split(","):
        if not item.strip():
            continue
        parts = split_header(item)
        key = unquote(parts[0]).strip() if parts is not None else ""
        if parts is None or not key or any(ch.isspace() for ch in key):
            raise ConfigurationError(
                f"{source}: header {shown_header(item)} is not of the form K=V"
            )
        headers[key.lower()] = unquote(parts[1]).strip()
    return headers


def _headers_from(value: Mapping[str, str] | str | None) -> dict[str, str] | None:
    if value is None:
        return None
    if isinstance(value, str):
        return parse_headers(value, "headers")
    result: dict[str, str] = {}
    for key, item in value.items():
        if not isinstance(key, str) or not key.strip() or not isinstance(item, str):
            shown = shown_header(key) if isinstance(key, str) else type(key).__name__
            raise ConfigurationError(f"headers: {shown}=… is not a string K=V pair")
        if any(ch.isspace() for ch in key.strip()):  # as parse_headers: gRPC and HTTP refuse it
            raise ConfigurationError(f"headers: header name {key.strip()!r} contains a space")
        result[key.strip().lower()] = item
    return result


def resolve_protocol(protocol: str | None) -> str | None:
    """Validate an explicit protocol, else read the OTEL protocol variables; None means infer."""
    source = "protocol"
    if protocol is None:
        found = _env("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL")
        if found is None:
            return None
        source, protocol = found
    normalised = protocol.strip().lower()
    if normalised not in PROTOCOLS:
        raise ConfigurationError(
            f"{source}: unsupported OTLP protocol {protocol!r} (use 'grpc' or 'http/protobuf')"
        )
    return normalised


def resolve_target(
    endpoint: str | None,
    protocol: str | None,
    headers: Mapping[str, str] | str | None,
    *,
    use_env_endpoint: bool = True,
) -> OtlpTarget | None:
    """Build the OTLP target from arguments, falling back to ``OTEL_EXPORTER_OTLP_*``.

    Returns None when no endpoint is given and none is in the environment (or
    ``use_env_endpoint`` is False). Protocol: explicit, else the protocol
    variables, else inferred — port 4318 or a ``/v1/traces`` path means
    HTTP/protobuf, anything else gRPC. An HTTP base URL gets ``/v1/traces``
    appended, except a URL from ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``, which
    the OTLP specification says to use as-is.

    Raises:
        ConfigurationError: bad protocol, malformed endpoint or header.
    """
    source, signal_specific = "endpoint", False
    if endpoint is None:
        found = endpoint_from_env()
        if found is None or not use_env_endpoint:
            return None
        source, endpoint = found
        signal_specific = source == "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
    text = endpoint.strip()
    if "://" not in text:
        text = f"http://{text}"  # a bare host:port, as gRPC users often write it
    parts = urlsplit(text)
    try:
        port = parts.port
    except ValueError as exc:
        raise ConfigurationError(
            f"{source}: bad port in OTLP endpoint {shown_endpoint(endpoint)!r}"
        ) from exc
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigurationError(
            f"{source}: OTLP endpoint {shown_endpoint(endpoint)!r} "
            "is not an http(s)://host[:port] URL"
        )
    path = parts.path.rstrip("/")
    chosen = resolve_protocol(protocol)
    if chosen is None:
        inferred_http = port == HTTP_DEFAULT_PORT or path.endswith(TRACES_PATH)
        chosen = HTTP_PROTOBUF if inferred_http else GRPC
    if chosen == GRPC:
        if path:
            raise ConfigurationError(
                f"{source}: a gRPC OTLP endpoint has no path, got {shown_endpoint(endpoint)!r} "
                "(for OTLP/HTTP pass protocol='http/protobuf')"
            )
        url = urlunsplit((parts.scheme, parts.netloc, "", "", ""))
    else:
        if not signal_specific and not path.endswith(TRACES_PATH):
            path += TRACES_PATH
        url = urlunsplit((parts.scheme, parts.netloc, path or "/", parts.query, ""))
    resolved = _headers_from(headers)
    if resolved is None:
        found = _env("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "OTEL_EXPORTER_OTLP_HEADERS")
        resolved = parse_headers(found[1], found[0]) if found else {}
    return OtlpTarget(chosen, url, tuple(sorted(resolved.items())))


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

    return HttpExporter(endpoint=target.endpoint, headers=headers, timeout=timeout_s)


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


class LossCountingExporter(SpanExporter, _LogSink):
    """Wrap an exporter: count the spans it accepted, never raise, drop everything once closed."""

    def __init__(self, inner: SpanExporter) -> None:
        self._inner = inner
        self._lock = threading.Lock()
        self._closed = False
        self.exported = 0
        self.last_error: str | None = None
        patches.install(_QUIET_LOGS)

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        """Forward to the wrapped exporter unless closed; failures become a count, not a raise."""
        if self._closed:
            return SpanExportResult.FAILURE
        previous, LOG_SCOPE.sink = LOG_SCOPE.sink, self
        try:
            result = self._inner.export(exportable_spans(spans))
        except Exception as exc:  # an exporter bug must not kill the batch worker
            self.last_error = f"{type(exc).__name__}: {exc}"
            _debug_log.debug("export raised", exc_info=True)
            return SpanExportResult.FAILURE
        finally:
            LOG_SCOPE.sink = previous
        if result is SpanExportResult.SUCCESS:
            with self._lock:
                self.exported += len(spans)
        return result

    def note(self, message: str) -> None:
        """Keep the most telling SDK error message for the loss warning.

        The SDK's final line can be generic ("max retries or shutdown"); the
        retry lines before it carry the cause.
        """
        if self.last_error is None or not any(g in message for g in _GENERIC_ERRORS):
            self.last_error = message

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
    """

    def __init__(
        self, exporter: SpanExporter, destination: str, max_queue_size: int | None = None
    ) -> None:
        super().__init__(exporter, max_queue_size=max_queue_size)
        self.destination = destination
        self._count_lock = threading.Lock()
        self._warned_full = False
        self.submitted = 0
        self.abandoned = False

    def on_end(self, span: ReadableSpan) -> None:
        """Count, then enqueue (a full queue drops the span; the count makes that visible)."""
        if self.abandoned or span.context is None or not span.context.trace_flags.sampled:
            return
        with self._count_lock:
            self.submitted += 1
        previous, LOG_SCOPE.sink = LOG_SCOPE.sink, self
        try:
            super().on_end(span)
        finally:
            LOG_SCOPE.sink = previous

    def note(self, message: str) -> None:
        """Turn the SDK's per-span "Queue full" warnings into one."""
        if not self._warned_full:
            self._warned_full = True
            logger.warning(
                "flow-xray: export queue for %s is full, dropping spans (total reported at exit)",
                self.destination,
            )


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
        self, key: tuple[str, str], exporter: SpanExporter, max_queue_size: int | None = None
    ) -> None:
        self.key = key
        self.exporter = LossCountingExporter(exporter)
        self.processor = CountingBatchSpanProcessor(self.exporter, key[1], max_queue_size)
        EXPORT.alive.add(self)
        patches.install(_RESTART_COUNTS_AT_FORK)

    def _restart_counts(self) -> None:
        """In a forked child: the SDK empties the inherited queue, so count from zero.

        The parent's counts stay the parent's; kept here they would report the
        parent's queued spans as lost when the child exits.
        """
        self.processor.submitted = 0
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
