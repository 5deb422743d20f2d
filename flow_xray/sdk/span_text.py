"""Spans OTLP can encode: foreign spans' lone surrogates escaped, their huge ints made text.

flow-xray's own attributes are already writable (they pass `flow_xray.serialize`);
spans of other instrumentations may carry lone surrogates in their name,
attributes, events or status, or ints beyond 64 bits in attribute values, and
the OTLP protobuf encoder then drops the attribute (printing a traceback) or
fails the whole batch. `writable_spans` returns the batch as it is when
nothing needs changing (a type and ``isascii`` or range check per value), and
otherwise a copy of just the spans that do.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan
from opentelemetry.trace import Status

from flow_xray.serialize.encode import int_attribute
from flow_xray.serialize.text import has_unwritable, writable, writable_data

_INT64 = 1 << 63


def _bad_scalar(value: Any) -> bool:
    if isinstance(value, str):
        return has_unwritable(value)
    return type(value) is int and not -_INT64 <= value < _INT64


def _bad(value: Any) -> bool:
    if isinstance(value, (tuple, list)):
        return any(_bad_scalar(v) for v in value)
    return _bad_scalar(value)


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
            if any(type(v) is int and int_attribute(v) is not v for v in value):
                # One int too big: all of them as text, so the array stays of one type.
                value = [str(int_attribute(v)) if type(v) is int else v for v in value]
            value = tuple(writable_data(list(value)))
        elif type(value) is int:
            value = int_attribute(value)
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
    """``spans`` with lone surrogates escaped and ints beyond 64 bits as text.

    See `flow_xray.serialize.text.writable` and `flow_xray.serialize.encode.int_attribute`.
    """
    try:
        if not any(_needs_escaping(s) for s in spans):
            return spans
        return [_escaped(s) if _needs_escaping(s) else s for s in spans]
    except Exception:  # an odd span is exported as it is; the SDK encoder copes or drops it
        return spans


__all__ = ["writable_spans"]
