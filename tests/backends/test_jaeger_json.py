"""Reading Jaeger JSON (what Jaeger's UI and query API return) into the flow-xray tree.

The golden file is what a real Jaeger v2 returned for the backend agent's
trace (``GET /api/traces/ID``, saved by `test_jaeger_view_e2e`, machine paths
replaced); the small documents below pin the format's corners.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from flow_xray import TraceFileError, TraceResult
from flow_xray.formats.jaeger_json import is_jaeger_json, read_jaeger_json
from flow_xray.formats.registry import load_trace

GOLDEN = Path(__file__).resolve().parent / "golden" / "jaeger_trace.json"
TRACE_ID = "0123456789abcdef0123456789abcdef"


def _golden() -> Any:
    return json.loads(GOLDEN.read_text(encoding="utf-8"))


def _tag(key: str, value: Any, kind: str = "string") -> dict[str, Any]:
    return {"key": key, "type": kind, "value": value}


def _span(span_id: str, name: str, **extra: Any) -> dict[str, Any]:
    span: dict[str, Any] = {
        "traceID": TRACE_ID,
        "spanID": span_id,
        "operationName": name,
        "references": [],
        "startTime": 1_700_000_000_000_000,
        "duration": 1500,
        "tags": [],
        "logs": [],
        "processID": "p1",
    }
    span.update(extra)
    return span


def _document(*spans: dict[str, Any]) -> dict[str, Any]:
    return {
        "data": [
            {
                "traceID": TRACE_ID,
                "spans": list(spans),
                "processes": {"p1": {"serviceName": "svc", "tags": []}},
                "warnings": None,
            }
        ],
        "total": 0,
        "limit": 0,
        "offset": 0,
        "errors": None,
    }


# --- the golden answer of a real Jaeger ---------------------------------------------


def test_golden_trace_is_recognised_as_jaeger_json() -> None:
    """The query API's answer is Jaeger JSON; flow-xray and OTLP documents are not."""
    assert is_jaeger_json(_golden())
    assert not is_jaeger_json({"version": 1, "nodes": []})
    assert not is_jaeger_json({"resourceSpans": []})


def test_golden_trace_loads_as_the_agent_tree() -> None:
    """`load_trace` builds the agent's tree: one root, its three calls, rank under search."""
    (root,) = load_trace(GOLDEN).roots
    assert root.name == "agent"
    assert [child.name for child in root.children] == ["plan", "search", "fetch"]
    assert [child.name for child in root.children[1].children] == ["rank"]


def test_golden_trace_keeps_kinds_inputs_and_outputs() -> None:
    """Kinds come from openinference.span.kind; inputs and outputs decode from their JSON."""
    nodes = {node.name: node for root in load_trace(GOLDEN).roots for node in root}
    assert {name: node.kind for name, node in nodes.items()} == {
        "agent": "agent",
        "plan": "llm",
        "search": "tool",
        "rank": "chain",
        "fetch": "tool",
    }
    assert nodes["search"].inputs == {"query": "backends", "limit": 2}
    assert nodes["rank"].output == ["backends-a", "backends-b"]


def test_golden_trace_keeps_usage_and_the_error() -> None:
    """The LLM call's model and tokens are its usage; the failed call is an error with its stack."""
    result = load_trace(GOLDEN)
    nodes = {node.name: node for root in result.roots for node in root}
    assert nodes["plan"].meta["model"] == "gpt-4o-mini"
    assert (nodes["plan"].meta["prompt_tokens"], nodes["plan"].meta["completion_tokens"]) == (
        120,
        40,
    )
    assert nodes["fetch"].status == "error"
    assert nodes["fetch"].error == "TimeoutError: upstream slow: https://example.invalid/backends-a"
    assert "raise TimeoutError" in (nodes["fetch"].traceback or "")
    assert (result.totals.nodes, result.totals.errors, result.totals.total_tokens) == (5, 1, 160)


def test_golden_trace_has_no_jaeger_only_tags() -> None:
    """Status, span kind and (flow-xray's own) scope tags become fields again, not
    attributes of the node."""
    for root in load_trace(GOLDEN).roots:
        for node in root:
            assert not {"otel.status_code", "error", "span.kind", "otel.scope.name"} & set(
                node.attributes
            ), node.name


def test_trace_result_load_reads_jaeger_json() -> None:
    """`TraceResult.load` reads the same file through the same loader."""
    assert TraceResult.load(GOLDEN).to_dict() == load_trace(GOLDEN).to_dict()


# --- the format's corners ------------------------------------------------------------


def test_a_single_trace_object_is_read_too() -> None:
    """The bare trace object (the UI's trace JSON, without the ``data`` envelope) is read."""
    (trace,) = _document(_span("00000000000000aa", "root"))["data"]
    (record,) = read_jaeger_json(trace)
    assert (record.name, record.span_id, record.trace_id) == ("root", "00000000000000aa", TRACE_ID)


def test_times_are_microseconds() -> None:
    """startTime and duration are microseconds: the record holds nanoseconds."""
    (record,) = read_jaeger_json(_document(_span("00000000000000aa", "root")))
    assert record.start_ns == 1_700_000_000_000_000_000
    assert record.end_ns == record.start_ns + 1_500_000


def test_short_ids_are_zero_padded() -> None:
    """A 64-bit trace id (Jaeger drops the zero high half) and short span ids are padded."""
    span = _span("aa", "root", traceID="1f")
    (record,) = read_jaeger_json({"traceID": "1f", "spans": [span], "processes": {}})
    assert record.trace_id == "0" * 30 + "1f"
    assert record.span_id == "00000000000000aa"


def test_parent_is_the_first_child_of_reference() -> None:
    """The CHILD_OF reference is the parent even after a FOLLOWS_FROM link."""
    refs = [
        {"refType": "FOLLOWS_FROM", "traceID": TRACE_ID, "spanID": "00000000000000cc"},
        {"refType": "CHILD_OF", "traceID": TRACE_ID, "spanID": "00000000000000aa"},
    ]
    records = read_jaeger_json(
        _document(
            _span("00000000000000aa", "root"), _span("00000000000000bb", "kid", references=refs)
        )
    )
    assert records[1].parent_id == "00000000000000aa"


def test_a_reference_into_another_trace_is_not_a_parent() -> None:
    """A reference to a span of another trace leaves the span a root."""
    refs = [{"refType": "CHILD_OF", "traceID": "ff" * 16, "spanID": "00000000000000aa"}]
    (record,) = read_jaeger_json(_document(_span("00000000000000bb", "kid", references=refs)))
    assert record.parent_id is None


def test_legacy_parent_span_id_is_read() -> None:
    """Older Jaeger JSON names the parent in ``parentSpanID`` instead of a reference."""
    (record,) = read_jaeger_json(
        _document(_span("00000000000000bb", "kid", references=None, parentSpanID="aa"))
    )
    assert record.parent_id == "00000000000000aa"


def test_tag_types_become_python_values() -> None:
    """int64 (also as text, past 2**53), float64, bool and string tags keep their types."""
    tags = [
        _tag("n", 7, "int64"),
        _tag("big", "9007199254740993", "int64"),
        _tag("x", 0.5, "float64"),
        _tag("flag", True, "bool"),
        _tag("text_flag", "false", "bool"),
        _tag("s", "hi"),
        _tag("raw", "AAE=", "binary"),
    ]
    (record,) = read_jaeger_json(_document(_span("00000000000000aa", "root", tags=tags)))
    assert record.attributes == {
        "n": 7,
        "big": 9007199254740993,
        "x": 0.5,
        "flag": True,
        "text_flag": False,
        "s": "hi",
        "raw": "AAE=",
    }


def test_status_tags_become_the_status() -> None:
    """otel.status_code/description are the status; Jaeger's error=true is not an attribute."""
    tags = [
        _tag("otel.status_code", "ERROR"),
        _tag("otel.status_description", "boom"),
        _tag("error", True, "bool"),
        _tag("span.kind", "internal"),
        _tag("otel.scope.name", "flow_xray"),
        _tag("keep", "me"),
    ]
    (record,) = read_jaeger_json(_document(_span("00000000000000aa", "root", tags=tags)))
    assert (record.status, record.status_message) == ("ERROR", "boom")
    assert record.attributes == {"keep": "me"}


def test_error_tag_alone_marks_a_failure() -> None:
    """A span from a Jaeger client (no otel.status_code) with error=true is an ERROR."""
    tags = [_tag("error", True, "bool")]
    (record,) = read_jaeger_json(_document(_span("00000000000000aa", "root", tags=tags)))
    assert record.status == "ERROR"


def test_logs_become_events_named_by_their_event_field() -> None:
    """Each log is an event named by its ``event`` field, the other fields its attributes."""
    logs = [
        {
            "timestamp": 1_700_000_000_000_500,
            "fields": [_tag("event", "exception"), _tag("exception.type", "ValueError")],
        },
        {"timestamp": 1_700_000_000_000_600, "fields": [_tag("message", "no name")]},
    ]
    (record,) = read_jaeger_json(_document(_span("00000000000000aa", "root", logs=logs)))
    assert [(e.name, e.time_ns, dict(e.attributes)) for e in record.events] == [
        ("exception", 1_700_000_000_000_500_000, {"exception.type": "ValueError"}),
        ("log", 1_700_000_000_000_600_000, {"message": "no name"}),
    ]


def test_several_traces_are_all_read() -> None:
    """A search result with two traces gives the spans of both."""
    first = _document(_span("00000000000000aa", "one"))["data"][0]
    second = {
        **first,
        "traceID": "ab" * 16,
        "spans": [_span("00000000000000bb", "two", traceID="ab" * 16)],
    }
    records = read_jaeger_json({"data": [first, second]})
    assert [(r.name, r.trace_id) for r in records] == [("one", TRACE_ID), ("two", "ab" * 16)]


def test_an_error_answer_names_the_error() -> None:
    """The query API's not-found answer is reported, not read as an empty trace."""
    answer = {"data": None, "errors": [{"code": 404, "msg": "trace not found"}]}
    assert not is_jaeger_json(answer)
    empty = {"data": [], "errors": [{"code": 404, "msg": "trace not found"}]}
    with pytest.raises(TraceFileError, match="trace not found"):
        read_jaeger_json(empty)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"spanID": "not-hex"}, "spanID"),
        ({"operationName": None}, "operationName"),
        ({"startTime": "soon"}, "startTime"),
        ({"tags": [_tag("n", "seven", "int64")]}, "'n'"),
        ({"logs": "none"}, "logs"),
    ],
)
def test_a_malformed_span_is_an_error_naming_it(change: dict[str, Any], message: str) -> None:
    """A malformed span raises TraceFileError naming the trace, the span and the field."""
    with pytest.raises(TraceFileError, match=f"trace 0 span 0: .*{message}"):
        read_jaeger_json(_document(_span("00000000000000aa", "root", **change)))


def test_load_trace_names_the_file_of_a_malformed_jaeger_trace(tmp_path: Path) -> None:
    """`load_trace` reports a broken Jaeger file with its path."""
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(_document(_span("zz", "root"))), encoding="utf-8")
    with pytest.raises(TraceFileError, match=re.escape("broken.json: Jaeger JSON: trace 0 span 0")):
        load_trace(path)


def test_another_instrumentations_span_keeps_its_scope_and_is_scrubbed(tmp_path: Path) -> None:
    """A span another tracer wrote keeps ``otel.scope.name`` (as the processor marks one),
    so its secrets are scrubbed when the file is loaded; flow-xray's own keep no scope."""
    foreign = _span(
        "00000000000000a1",
        "chat",
        tags=[
            _tag("otel.scope.name", "openinference.instrumentation.openai"),
            _tag("http.request.header.authorization", "Bearer abcdefghijklmnop123"),
        ],
    )
    own = _span("00000000000000a2", "agent", tags=[_tag("otel.scope.name", "flow_xray")])
    path = tmp_path / "jaeger.json"
    path.write_text(json.dumps(_document(foreign, own)), encoding="utf-8")
    nodes = {node.name: node for node in load_trace(path)}
    assert nodes["chat"].attributes["otel.scope.name"] == "openinference.instrumentation.openai"
    assert nodes["chat"].attributes["http.request.header.authorization"] == "[REDACTED]"
    assert "otel.scope.name" not in nodes["agent"].attributes
