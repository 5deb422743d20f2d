"""`configure()`: the OpenTelemetry provider and OTLP export set-up, plus `flush` and `shutdown`.

Provider rules: flow-xray never replaces a global TracerProvider. ``configure``
installs its own SDK provider as the global one only when none is set; when
another SDK provider is already global (``opentelemetry-instrument``, the
application's own set-up) it adds flow-xray's collecting processor and the
exporters explicitly asked for to *that* provider and returns it.

Export is batched (a `BatchSpanProcessor` with a bounded queue, so a slow or
absent backend costs memory up to the queue size and no latency on the traced
calls). At exit the queue is flushed within ``export_timeout_s`` plus one second;
spans that did not make it are reported in one warning on the ``flow_xray``
logger, naming the count and the destination.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlsplit

from opentelemetry import trace as trace_api
from opentelemetry.sdk.resources import SERVICE_NAME, Resource
from opentelemetry.sdk.trace import SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.sampling import ParentBased, Sampler, TraceIdRatioBased

from flow_xray.errors import ConfigurationError
from flow_xray.runtime import patches, tracer
from flow_xray.runtime.sdk_state import EXPORT
from flow_xray.sdk import processor as flow_processor
from flow_xray.sdk.otlp import ExportPipeline, build_exporter, close_all, flush_all
from flow_xray.sdk.otlp_json_export import OtlpJsonFileExporter
from flow_xray.sdk.otlp_target import OtlpTarget, resolve_target

__all__ = ["configure", "environment_service_name", "flush", "shutdown"]

logger = logging.getLogger("flow_xray")

JSON_FILE = "otlp-json-file"
# A local file should be complete: its queue is larger than the SDK's default, and
# bounded (a runaway loop cannot exhaust memory) by the span-ending thread exporting
# once half of it waits (`CountingBatchSpanProcessor`'s ``complete``), never by loss.
JSON_QUEUE_SIZE = 65_536
CLOSE_MARGIN_S = 1.0

DEFAULT_TIMEOUT_S = 5.0


def _sdk_disabled() -> bool:
    return os.environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true"


def _resource(
    service_name: str | None, resource_attributes: Mapping[str, object] | None
) -> Resource:
    attributes: dict[str, object] = dict(resource_attributes or {})
    for key in attributes:
        if not isinstance(key, str) or not key:
            raise ConfigurationError(f"resource_attributes: key {key!r} is not a non-empty string")
    if service_name is not None:
        if not service_name.strip():
            raise ConfigurationError("service_name must not be empty")
        attributes[SERVICE_NAME] = service_name
    # Resource.create merges OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME under ours.
    created = Resource.create(attributes)  # type: ignore[arg-type]
    return _HashedResource(created.attributes, created.schema_url)


class _HashedResource(Resource):
    """A `Resource` that works out its hash once. The SDK's OTLP encoder groups a batch's
    spans by their resource, and `Resource.__hash__` writes the attributes out as sorted
    JSON on every call: 2.5 µs for each span exported. Equal to, and hashing as, the
    `Resource` of the same attributes (they cannot change)."""

    _hash: int | None = None

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = super().__hash__()
        return self._hash

    def __reduce__(self) -> tuple[type[Resource], tuple[dict[str, Any], str | None]]:
        # Copied or pickled as a plain `Resource`: a str's hash differs from one process
        # to the next, so the one worked out here must not travel.
        return Resource, (dict(self.attributes), self.schema_url)


def environment_service_name() -> str | None:
    """The service name ``OTEL_SERVICE_NAME`` or ``OTEL_RESOURCE_ATTRIBUTES`` sets, or None.

    A command's own default name (``flow-xray demo``'s) applies only without one.
    """
    name = Resource.create().attributes.get(SERVICE_NAME)
    return name if isinstance(name, str) and not name.startswith("unknown_service") else None


def _sampler(sample_ratio: float | None) -> Sampler | None:
    """None lets the SDK read OTEL_TRACES_SAMPLER / OTEL_TRACES_SAMPLER_ARG."""
    if sample_ratio is None:
        return None
    if isinstance(sample_ratio, bool) or not 0.0 <= sample_ratio <= 1.0:
        raise ConfigurationError(f"sample_ratio must be between 0 and 1, got {sample_ratio!r}")
    return ParentBased(TraceIdRatioBased(sample_ratio))


def _warn_if_ignored(
    provider: TracerProvider,
    service_name: str | None,
    resource_attributes: Mapping[str, object] | None,
    sample_ratio: float | None,
    foreign: bool,
) -> None:
    """A provider's resource and sampler are fixed at creation: say when a request cannot apply."""
    requested = dict(resource_attributes or {})
    if service_name is not None:
        requested[SERVICE_NAME] = service_name
    current = provider.resource.attributes
    if any(current.get(key) != value for key, value in requested.items()) or (
        foreign and sample_ratio is not None
    ):
        logger.warning(
            "flow-xray: an OpenTelemetry provider is already installed; its service name, "
            "resource attributes and sampler stay as they are"
        )


def _add_pipeline(provider: TracerProvider, pipeline: ExportPipeline) -> None:
    EXPORT.pipelines.setdefault(provider, {})[pipeline.key] = pipeline
    provider.add_span_processor(pipeline.processor)


def _has_pipeline(provider: TracerProvider, key: tuple[str, str]) -> bool:
    return key in EXPORT.pipelines.get(provider, {})


def configure(
    *,
    endpoint: str | None = None,
    protocol: str | None = None,
    headers: Mapping[str, str] | str | None = None,
    service_name: str | None = None,
    resource_attributes: Mapping[str, object] | None = None,
    sample_ratio: float | None = None,
    json_path: str | os.PathLike[str] | None = None,
    set_global: bool = True,
    export_timeout_s: float = DEFAULT_TIMEOUT_S,
) -> TracerProvider:
    """Set up an SDK TracerProvider with flow-xray's processor and optional OTLP export.

    Args:
        endpoint: OTLP receiver, e.g. ``http://localhost:4317`` (gRPC) or
            ``http://localhost:4318`` (HTTP; ``/v1/traces`` is appended). Default:
            ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` / ``OTEL_EXPORTER_OTLP_ENDPOINT``;
            with neither, nothing is exported over OTLP.
        protocol: ``"grpc"`` or ``"http/protobuf"``; default from
            ``OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL``, else port 4318 or a
            ``/v1/traces`` path means HTTP, anything else gRPC.
        headers: a mapping or ``"k=v,k2=v2"``; default ``OTEL_EXPORTER_OTLP_(TRACES_)HEADERS``.
        service_name: ``service.name``; default ``OTEL_SERVICE_NAME``.
        resource_attributes: merged over ``OTEL_RESOURCE_ATTRIBUTES``.
        sample_ratio: ParentBased(TraceIdRatio) sampling; default ``OTEL_TRACES_SAMPLER(_ARG)``.
        json_path: also write OTLP/JSON lines to this file (batched like OTLP export).
        set_global: make the provider global when no SDK provider is global yet.
        export_timeout_s: cap on each export (retries included) and on the exit flush.

    Returns:
        The provider spans now flow through: the new one, or the SDK provider
        that was already global (then service name, resource and sampler
        arguments cannot apply and a warning says so). With
        ``OTEL_SDK_DISABLED=true`` a bare provider whose tracers are no-ops.

    Raises:
        ConfigurationError: bad protocol, endpoint, header, ratio or timeout, or a
            ``json_path`` that cannot be written; nothing is installed then.

    Calling it again adds new destinations only: an endpoint or file already
    exporting from the same provider is not registered twice.

    Example::

        configure(endpoint="http://localhost:4317", service_name="agent")
    """
    if export_timeout_s <= 0:
        raise ConfigurationError(f"export_timeout_s must be positive, got {export_timeout_s!r}")
    sampler = _sampler(sample_ratio)
    resource = _resource(service_name, resource_attributes)
    target = resolve_target(endpoint, protocol, headers)
    json_key = None
    if json_path is not None:
        resolved = Path(json_path).resolve()
        if not resolved.parent.is_dir():
            raise ConfigurationError(f"json_path: folder {resolved.parent} does not exist")
        json_key = (JSON_FILE, str(resolved))
    if _sdk_disabled():
        return TracerProvider(resource=resource, shutdown_on_exit=False)

    with EXPORT.lock:
        current, none_global = tracer.provider_in_use()
        if set_global and not none_global and isinstance(current, TracerProvider):
            created, provider = False, current
            foreign = provider not in EXPORT.owned
            _warn_if_ignored(provider, service_name, resource_attributes, sample_ratio, foreign)
        else:
            created, foreign = True, False
            provider = TracerProvider(resource=resource, sampler=sampler, shutdown_on_exit=False)
        # Open the file before anything changes, so an unwritable path leaves no half set-up.
        json_exporter = None
        if json_key is not None and not _has_pipeline(provider, json_key):
            json_exporter = _open_json_exporter(json_key[1])
        if created:
            _register(provider, set_global and none_global, set_global)
        flow_processor.attach(provider)
        if foreign:
            target = _foreign_target(provider, target, explicit=endpoint is not None)
        if target is not None and not _has_pipeline(provider, (target.protocol, target.endpoint)):
            exporter = build_exporter(target, export_timeout_s)
            _add_pipeline(provider, ExportPipeline((target.protocol, target.endpoint), exporter))
        if json_key is not None and json_exporter is not None:
            pipeline = ExportPipeline(json_key, json_exporter, JSON_QUEUE_SIZE, complete=True)
            _add_pipeline(provider, pipeline)
        EXPORT.timeout_s = max(EXPORT.timeout_s or 0.0, export_timeout_s)
        patches.install(_SHUTDOWN_AT_EXIT)
    return provider


def _register(provider: TracerProvider, make_global: bool, set_global: bool) -> None:
    """A provider `configure` created: made global when none is, else said to be not global."""
    EXPORT.owned.add(provider)
    if make_global:
        trace_api.set_tracer_provider(provider)
    elif set_global:
        logger.warning(
            "flow-xray: a non-SDK TracerProvider is global; "
            "configure() returns a provider that is not global"
        )


def _foreign_target(
    provider: TracerProvider, target: OtlpTarget | None, *, explicit: bool
) -> OtlpTarget | None:
    """What to add under someone else's provider: only an explicit destination not served yet.

    The environment's endpoint is theirs and is most likely exported to already.
    """
    if not explicit:
        return None
    if target is not None and _already_exports(provider, target):
        # `opentelemetry-instrument` with OTEL_EXPORTER_OTLP_ENDPOINT plus the same
        # --otlp-endpoint: a second exporter would send every span twice.
        logger.info(
            "flow-xray: the installed OpenTelemetry provider already exports to %s; "
            "not adding that endpoint again",
            target.endpoint,
        )
        return None
    return target


def _endpoint_key(url: str) -> tuple[str, int | None, str]:
    """host, port and path of an endpoint, however an exporter spells it (``host:4317``...)."""
    parts = urlsplit(url if "://" in url else f"http://{url}")
    try:
        port = parts.port
    except ValueError:
        port = None
    return (parts.hostname or "").lower(), port, parts.path.rstrip("/")


def _exporters(provider: TracerProvider) -> list[object] | None:
    """The exporters behind ``provider``'s span processors; None when they cannot be seen.

    Reads the SDK's processor internals (``_active_span_processor``,
    ``span_exporter`` / ``_batch_processor._exporter``); with another SDK layout
    the answer is None and the caller falls back to the environment.
    """
    multi = getattr(provider, "_active_span_processor", None)
    processors = getattr(multi, "_span_processors", None)
    if not isinstance(processors, tuple):
        return None
    found = []
    for processor in processors:
        exporter = getattr(processor, "span_exporter", None)
        if exporter is None:
            exporter = getattr(getattr(processor, "_batch_processor", None), "_exporter", None)
        if exporter is not None:
            found.append(exporter)
    return found


def _already_exports(provider: TracerProvider, target: OtlpTarget) -> bool:
    """Whether a foreign provider already sends spans to ``target``'s endpoint."""
    wanted = _endpoint_key(target.endpoint)
    exporters = _exporters(provider)
    if exporters is not None:
        seen = [e for e in exporters if isinstance(getattr(e, "_endpoint", None), str)]
        if seen:
            return any(_same_endpoint(_endpoint_key(e._endpoint), wanted) for e in seen)  # type: ignore[attr-defined]
    # Nothing to inspect: an auto-instrumented provider exports to the environment's endpoint.
    from_env = resolve_target(None, None, None)
    return from_env is not None and _same_endpoint(_endpoint_key(from_env.endpoint), wanted)


def _same_endpoint(a: tuple[str, int | None, str], b: tuple[str, int | None, str]) -> bool:
    # A gRPC exporter keeps only host:port; an HTTP one the full /v1/traces URL.
    return a[:2] == b[:2] and (not a[2] or not b[2] or a[2] == b[2])


def _open_json_exporter(path: str) -> OtlpJsonFileExporter:
    try:
        return OtlpJsonFileExporter(path)
    except OSError as exc:
        raise ConfigurationError(f"json_path: cannot write {path}: {exc.strerror or exc}") from None


def flush(timeout_s: float | None = None) -> bool:
    """Export every queued span now, waiting at most ``timeout_s`` in total.

    Default timeout: the largest ``export_timeout_s`` given to `configure`.
    Destinations flush in parallel. Returns True when every one finished in
    time (finishing is not succeeding: spans a backend refused are counted
    and reported by `shutdown`).
    """
    return flush_all(_all_pipelines(), _budget(timeout_s))


def shutdown(timeout_s: float | None = None) -> None:
    """Flush, stop every exporter `configure` added, and warn once per destination that lost spans.

    Bounded: ``timeout_s`` (default the largest ``export_timeout_s``) for the
    flush plus one second to close. Then every process-wide patch and fork
    hook flow-xray installed is undone (`flow_xray.runtime.patches.uninstall_all`);
    whatever needs one installs it again, so a later capture works as before.
    Registered with `atexit` by `configure`; safe to call more than once. A
    later `configure` call starts fresh exporters.
    """
    budget = _budget(timeout_s)
    with EXPORT.lock:
        pipelines = _all_pipelines()
        EXPORT.pipelines.clear()
        EXPORT.timeout_s = None
    close_all(pipelines, budget, CLOSE_MARGIN_S)
    patches.uninstall_all()


_SHUTDOWN_AT_EXIT: Final = patches.AtExit("flush exporters at exit", shutdown)


def export_processors() -> list[tuple[Resource, SpanProcessor]]:
    """Every export processor `configure` added, with its provider's resource.

    Spans recorded in child processes reach the exporters through these
    (see `flow_xray.sdk.processes`), with the parent's resource.
    """
    with EXPORT.lock:
        return [
            (provider.resource, pipeline.processor)
            for provider, pipelines in EXPORT.pipelines.items()
            for pipeline in pipelines.values()
        ]


def leave_export_to_parent() -> None:
    """In a forked child whose spans the parent exports: export nothing from this process.

    The child's copies of the exporters would send its spans a second time,
    and their counts (the parent's) would report the parent's queue as lost.
    """
    EXPORT.lock = threading.RLock()  # another thread may have held it at the fork
    pipelines = [p for pipelines in EXPORT.pipelines.values() for p in pipelines.values()]
    EXPORT.pipelines.clear()
    EXPORT.timeout_s = None
    for pipeline in pipelines:
        pipeline.abandon()


def _budget(timeout_s: float | None) -> float:
    if timeout_s is not None:
        return timeout_s
    return DEFAULT_TIMEOUT_S if EXPORT.timeout_s is None else EXPORT.timeout_s


def _all_pipelines() -> list[ExportPipeline]:
    with EXPORT.lock:
        return [p for pipelines in EXPORT.pipelines.values() for p in pipelines.values()]
