"""Send the agent's trace through a Collector into Jaeger and read back what Jaeger holds.

Jaeger's query API answers ``GET /api/traces/ID`` with the JSON its UI reads:
``{"data": [{"traceID", "spans": [...], "processes": {...}}]}``. Each span's
OTLP attributes are its ``tags``; its status, span kind and scope are tags too
(`JAEGER_DERIVED`); its events are ``logs`` whose ``event`` field is the name.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.backends.agent_run import AgentRun, Span, run_agent
from tests.backends.servers import Collector, Jaeger

# Tags Jaeger's OTLP translation adds for fields that are not attributes in OTLP.
JAEGER_DERIVED = frozenset(
    {
        "otel.status_code",
        "otel.status_description",
        "error",
        "span.kind",
        "otel.scope.name",
        "otel.scope.version",
        "w3c.tracestate",
    }
)


def tag_value(tag: dict[str, Any]) -> Any:
    """A Jaeger tag's value as Python data (``binary``: the bytes its base64 text encodes)."""
    kind, value = tag.get("type", "string"), tag["value"]
    if kind == "int64":
        return int(value)
    if kind == "float64":
        return float(value)
    if kind == "bool":
        return bool(value)
    if kind == "binary":
        return base64.b64decode(value)
    return value


def tags(items: list[dict[str, Any]] | None) -> dict[str, Any]:
    """Jaeger ``tags`` (or log ``fields``) as a dict."""
    return {item["key"]: tag_value(item) for item in items or []}


@dataclass(frozen=True)
class StoredSpan:
    """A span as Jaeger stores it: the attributes, the derived tags and the events apart."""

    span: Span
    derived: dict[str, Any]
    process: dict[str, Any]


@dataclass(frozen=True)
class Landed:
    """A run and what Jaeger returned for its trace."""

    run: AgentRun
    body: dict[str, Any]
    stored: dict[str, StoredSpan]

    def by_name(self) -> dict[str, StoredSpan]:
        """Stored spans keyed by name."""
        return {item.span.name: item for item in self.stored.values()}


def stored_spans(body: dict[str, Any]) -> dict[str, StoredSpan]:
    """Every span of Jaeger's answer, by span id (ids zero-padded as OTLP writes them)."""
    (trace,) = body["data"]
    processes = {
        pid: {"service.name": process["serviceName"], **tags(process.get("tags"))}
        for pid, process in trace["processes"].items()
    }
    stored: dict[str, StoredSpan] = {}
    for item in trace["spans"]:
        attributes = tags(item.get("tags"))
        derived = {key: attributes.pop(key) for key in JAEGER_DERIVED if key in attributes}
        parents = [
            ref["spanID"].rjust(16, "0")
            for ref in item.get("references") or []
            if ref.get("refType") == "CHILD_OF"
        ]
        events = []
        for log in item.get("logs") or []:
            fields = tags(log.get("fields"))
            events.append((str(fields.pop("event", "")), fields))
        status = str(derived.get("otel.status_code", "UNSET"))
        span = Span(
            name=item["operationName"],
            span_id=item["spanID"].rjust(16, "0"),
            parent_id=parents[0] if parents else None,
            status=status,
            status_message=derived.get("otel.status_description"),
            attributes=attributes,
            events=events,
        )
        stored[span.span_id] = StoredSpan(span, derived, processes[item["processID"]])
    return stored


def land(collector: Collector, jaeger: Jaeger, tmp_path: Path, service_name: str) -> Landed:
    """Run the agent into ``collector`` and wait until Jaeger holds all its spans."""
    run = run_agent(tmp_path, collector.grpc_url, service_name=service_name)
    body = jaeger.wait_for_trace(run.trace_id, len(run.spans))
    assert body and body.get("data"), (
        f"trace {run.trace_id} not in Jaeger: {body!r}\n{collector.server.log()[-3000:]}"
    )
    return Landed(run=run, body=body, stored=stored_spans(body))
