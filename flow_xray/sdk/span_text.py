"""Spans ready for export: foreign spans' secrets scrubbed, surrogates escaped, huge ints text.

flow-xray's own attributes are already writable and scrubbed (they pass
`flow_xray.serialize`). Spans of other instrumentations (OpenInference, the
OpenAI instrumentation, raw OpenTelemetry) carry what their library saw:
credentials in headers, URLs, connection strings and exception text; lone
surrogates in their name, attributes, events or status, or ints beyond 64 bits
in attribute values, on which the OTLP protobuf encoder drops the attribute
(printing a traceback) or fails the whole batch. `exportable_spans` gives
flow-xray's exporters (OTLP, the OTLP JSON file) the batch as it is when
nothing needs changing (a cached name verdict per key, a quick pre-check and
an ``isascii`` or range test per value), and otherwise a copy of just the
spans that do.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan
from opentelemetry.trace import Status

from flow_xray.runtime.tracer import TRACER_NAME
from flow_xray.serialize import Limits, get_limits, scrub_text
from flow_xray.serialize.encode import int_attribute
from flow_xray.serialize.text import has_unwritable, writable, writable_data
from flow_xray.tree.foreign import scrub_attributes

_INT64 = 1 << 63


def _bad_scalar(value: Any) -> bool:
    if isinstance(value, str):
        return has_unwritable(value)
    return type(value) is int and not -_INT64 <= value < _INT64  # OTLP ints are 64-bit


def _bad(value: Any) -> bool:
    if isinstance(value, (tuple, list)):
        return any(_bad_scalar(v) for v in value)
    return _bad_scalar(value)


def _bad_attributes(attributes: Mapping[str, Any] | None) -> bool:
    return bool(attributes) and any(
        has_unwritable(k) or _bad(v)
        for k, v in attributes.items()  # type: ignore[union-attr]
    )


def _needs_escaping(span: ReadableSpan, resources: dict[int, tuple[Any, bool]]) -> bool:
    """Whether ``span`` holds anything to escape; ``resources``: each resource seen in the
    batch and its verdict, by identity (a batch's spans share one: its attributes are
    read once)."""
    status = span.status.description
    if (
        has_unwritable(span.name)
        or (status is not None and has_unwritable(status))
        or _bad_attributes(span.attributes)
        or any(has_unwritable(e.name) or _bad_attributes(e.attributes) for e in span.events)
    ):
        return True
    resource = span.resource
    seen = resources.get(id(resource))  # (it holds its resource: the id is not reused)
    if seen is None or seen[0] is not resource:
        seen = resources[id(resource)] = (resource, _bad_attributes(resource.attributes))
    return seen[1]


def _int_value(value: Any) -> Any:
    """An attribute value with ints beyond 64 bits as text (`int_attribute`): an array
    holding one has all its ints as text, so it stays of one type."""
    if isinstance(value, (tuple, list)):
        if any(type(v) is int and int_attribute(v) is not v for v in value):
            return tuple(str(int_attribute(v)) if type(v) is int else v for v in value)
        return value
    return int_attribute(value) if type(value) is int else value


def bounded_ints(values: tuple[Any, ...]) -> tuple[Any, ...]:
    """Attribute ``values`` with every int beyond 64 bits as text; ``values`` itself if none.

    Such ints (another instrumentation may set ``10**5000``) cannot be written
    as OTLP, and CPython refuses to print the biggest: kept as they are, they
    would stop the trace from being saved.
    """
    if any(_bad(v) and not isinstance(v, str) for v in values):
        return tuple(map(_int_value, values))
    return values


def _attributes(attributes: Mapping[str, Any] | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in (attributes or {}).items():
        bounded = _int_value(value)
        if isinstance(bounded, (tuple, list)):
            bounded = tuple(writable_data(list(bounded)))
        out[writable(key)] = writable_data(bounded)
    return out


def _foreign(span: ReadableSpan) -> bool:
    scope = span.instrumentation_scope
    return scope is None or scope.name != TRACER_NAME


def _scrubbed(span: ReadableSpan, limits: Limits) -> ReadableSpan:
    """``span`` itself when it holds no secret, else a copy with them replaced."""
    attributes = scrub_attributes(span.attributes or {}, limits)
    events = [(e, scrub_attributes(e.attributes or {}, limits)) for e in span.events]
    name = scrub_text(span.name, limits)
    description = span.status.description
    status = scrub_text(description, limits) if description else description
    if (
        attributes is None
        and all(clean is None for _, clean in events)
        and name is span.name
        and status is description
    ):
        return span
    return ReadableSpan(
        name=name,
        context=span.context,
        parent=span.parent,
        resource=span.resource,
        attributes=span.attributes if attributes is None else attributes,
        events=[e if clean is None else Event(e.name, clean, e.timestamp) for e, clean in events],
        links=span.links,
        kind=span.kind,
        status=Status(span.status.status_code, status),
        start_time=span.start_time,
        end_time=span.end_time,
        instrumentation_scope=span.instrumentation_scope,
    )


def _escaped(span: ReadableSpan) -> ReadableSpan:
    status = span.status
    return ReadableSpan(
        name=writable(span.name),
        context=span.context,
        parent=span.parent,
        resource=Resource(_attributes(span.resource.attributes), span.resource.schema_url),
        attributes=_attributes(span.attributes),
        events=[
            Event(writable(e.name), _attributes(e.attributes), e.timestamp) for e in span.events
        ],
        links=span.links,
        kind=span.kind,
        status=Status(status.status_code, writable(status.description or "") or None),
        start_time=span.start_time,
        end_time=span.end_time,
        instrumentation_scope=span.instrumentation_scope,
    )


def _exportable(
    span: ReadableSpan, limits: Limits, resources: dict[int, tuple[Any, bool]]
) -> ReadableSpan:
    try:
        if limits.redact and _foreign(span):
            span = _scrubbed(span, limits)
    except Exception:  # an odd span is exported unscrubbed rather than breaking the batch
        pass
    try:
        return _escaped(span) if _needs_escaping(span, resources) else span
    except Exception:  # the SDK encoder copes with it or drops it
        return span


def exportable_spans(spans: Sequence[ReadableSpan]) -> Sequence[ReadableSpan]:
    """``spans`` with foreign spans' secrets scrubbed, surrogates escaped, huge ints as text.

    Secrets: the rules of `flow_xray.serialize.secrets` under the process-wide
    limits (`scrub_attributes`), applied to the attributes, event attributes,
    name and status message of spans from other tracers. Surrogates: see
    `flow_xray.serialize.text.writable`. The batch itself comes back when no
    span needed any of it.
    """
    limits = get_limits()
    out: list[ReadableSpan] | None = None
    resources: dict[int, tuple[Any, bool]] = {}
    for at, span in enumerate(spans):
        ready = _exportable(span, limits, resources)
        if ready is not span:
            if out is None:
                out = list(spans)
            out[at] = ready
    return spans if out is None else out


__all__ = ["exportable_spans"]
