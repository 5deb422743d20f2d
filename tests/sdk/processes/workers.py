"""Work the library tests send to other processes (importable by spawned children)."""

from __future__ import annotations

from opentelemetry import trace as trace_api

from flow_xray import trace


@trace
def square(x: int) -> int:
    return x * x


@trace
def handed_over() -> int:
    """A traced call that only marks where work landed."""
    return 1


def parent_seen() -> tuple[str, str]:
    """(trace id, span id) of the call current in this process, as hex (not traced)."""
    context = trace_api.get_current_span().get_span_context()
    return format(context.trace_id, "032x"), format(context.span_id, "016x")
