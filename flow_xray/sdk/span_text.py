"""Spans whose text OTLP can encode: lone surrogates from foreign spans escaped before export.

flow-xray's own attributes are already writable (they pass `flow_xray.serialize`);
spans of other instrumentations may carry lone surrogates in their name,
attributes, events or status, and the OTLP protobuf encoder then drops the
attribute or fails the whole batch. `writable_spans` returns the batch as it
is when nothing needs escaping (a type and ``isascii`` check per string), and
otherwise a copy of just the spans that do.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan
from opentelemetry.trace import Status

from flow_xray.serialize.text import has_unwritable, writable, writable_data


def _bad(value: Any) -> bool:
    if isinstance(value, str):
        return has_unwritable(value)
    if isinstance(value, (tuple, list)):
        return any(isinstance(v, str) and has_unwritable(v) for v in value)
    return False


def _bad_attributes(attributes: Mapping[str, Any] | None) -> bool:
    return bool(attributes) and any(
        has_unwritable(k) or _bad(v)
        for k, v in attributes.items()  # type: ignore[union-attr]
    )


def _needs_escaping(span: ReadableSpan) -> bool:
    status = span.status.description
    return (
        has_unwritable(span.name)
        or (status is not None and has_unwritable(status))
        or _bad_attributes(span.attributes)
        or any(has_unwritable(e.name) or _bad_attributes(e.attributes) for e in span.events)
        or _bad_attributes(span.resource.attributes)
    )


def _attributes(attributes: Mapping[str, Any] | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in (attributes or {}).items():
        if isinstance(value, (tuple, list)):
            value = tuple(writable_data(list(value)))
        out[writable(key)] = writable_data(value)
    return out


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


def writable_spans(spans: Sequence[ReadableSpan]) -> Sequence[ReadableSpan]:
    """``spans`` with every lone surrogate escaped (see `flow_xray.serialize.text.writable`)."""
    try:
        if not any(_needs_escaping(s) for s in spans):
            return spans
        return [_escaped(s) if _needs_escaping(s) else s for s in spans]
    except Exception:  # an odd span is exported as it is; the SDK encoder copes or drops it
        return spans


__all__ = ["writable_spans"]
