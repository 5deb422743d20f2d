"""``load_trace`` reads the span files other tools write, and names the ones it cannot read."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SimpleSpanProcessor
from opentelemetry.trace import Status, StatusCode

from flow_xray.cli import cli
from flow_xray.errors import TraceFileError
from flow_xray.formats.registry import load_trace

TRACE = "5b8efff798038103d269b633813fc60c"
ROOT, CHILD = "eee19b7ec3c1b174", "00f067aa0ba902b7"
T0 = 1_700_000_000_000_000_000


def _nulls(**value: Any) -> dict[str, Any]:
    """An AnyValue with every field written, the unused ones null (as Phoenix exports)."""
    fields = ("string_value", "bool_value", "int_value", "double_value", "array_value")
    return {**dict.fromkeys(fields), "kvlist_value": None, "bytes_value": None, **value}


def _otlp_span(span_id: str, parent: str | None, name: str, **attrs: dict[str, Any]) -> Any:
    return {
        "trace_id": TRACE,
        "span_id": span_id,
        "parent_span_id": parent,
        "name": name,
        "start_time_unix_nano": T0,
        "end_time_unix_nano": T0 + 1_000_000,
        "attributes": [{"key": k, "value": v} for k, v in attrs.items()],
        "events": [],
        "status": {"code": 1, "message": ""},
    }


def write(tmp_path: Path, name: str, content: Any) -> Path:
    path = tmp_path / name
    path.write_text(content if isinstance(content, str) else json.dumps(content), "utf-8")
    return path


def test_phoenix_otlp_export_with_null_anyvalues(tmp_path: Path) -> None:
    """Phoenix's ``/spans/otlpv1`` export: tokens stay numbers, not the string "None"."""
    document = {
        "data": [
            _otlp_span(ROOT, None, "agent"),
            _otlp_span(
                CHILD,
                ROOT,
                "ChatCompletion",
                **{
                    "llm.token_count.prompt": _nulls(int_value=12),
                    "llm.token_count.completion": _nulls(int_value="7"),
                    "llm.model_name": _nulls(string_value="gpt-4o-mini"),
                },
            ),
        ],
        "next_cursor": None,
    }
    result = load_trace(write(tmp_path, "phoenix.json", document))
    chat = result.find("ChatCompletion")
    assert chat is not None and chat.parent_id == ROOT
    assert (chat.meta["prompt_tokens"], chat.meta["completion_tokens"]) == (12, 7)
    assert result.totals.total_tokens == 19


def test_snake_case_otlp_json(tmp_path: Path) -> None:
    """OTLP JSON with protobuf field names (``resource_spans``, ``scope_spans``) is read."""
    document = {
        "resource_spans": [
            {
                "resource": {"attributes": []},
                "scope_spans": [
                    {
                        "scope": {"name": "openinference.instrumentation.openai"},
                        "spans": [
                            _otlp_span(
                                ROOT,
                                None,
                                "chat",
                                **{"n": {"int_value": "3"}, "ok": {"bool_value": True}},
                            )
                        ],
                    }
                ],
            }
        ]
    }
    (node,) = load_trace(write(tmp_path, "snake.json", document))
    assert node.attributes["n"] == 3 and node.attributes["ok"] is True
    assert node.attributes["otel.scope.name"] == "openinference.instrumentation.openai"


def test_several_pretty_printed_objects(tmp_path: Path) -> None:
    """``jq .`` output of a JSON-lines file: several indented objects one after another."""

    def line(span_id: str, parent: str | None, name: str) -> Any:
        return {"resourceSpans": [{"scopeSpans": [{"spans": [_otlp_span(span_id, parent, name)]}]}]}

    text = json.dumps(line(ROOT, None, "agent"), indent=2) + "\n"
    text += json.dumps(line(CHILD, ROOT, "tool"), indent=2) + "\n"
    result = load_trace(write(tmp_path, "jq.json", text))
    assert [n.name for n in result] == ["agent", "tool"]


def test_console_span_exporter_output(tmp_path: Path) -> None:
    """What the SDK's ConsoleSpanExporter prints, saved to a file, is a trace."""
    path = tmp_path / "console.txt"
    with path.open("w", encoding="utf-8") as out:
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter(out=out)))
        tracer = provider.get_tracer("probe")
        with (
            tracer.start_as_current_span("root", attributes={"llm.token_count.prompt": 4}),
            tracer.start_as_current_span("child") as child,
        ):
            child.add_event(
                "exception", {"exception.type": "ValueError", "exception.message": "bad"}
            )
            child.set_status(Status(StatusCode.ERROR, "bad"))
        provider.shutdown()
    result = load_trace(path)
    root = result.find("root")
    child_node = result.find("child")
    assert root is not None and child_node is not None
    assert root.children == [child_node] and root.meta["prompt_tokens"] == 4
    assert child_node.error == "ValueError: bad"
    assert child_node.latency_ms is not None and child_node.latency_ms >= 0


def test_phoenix_span_list(tmp_path: Path) -> None:
    """Phoenix's ``/v1/projects/<p>/spans`` export (context, ISO times, status_code)."""
    document = {
        "data": [
            {
                "name": "agent",
                "context": {"trace_id": TRACE, "span_id": ROOT},
                "parent_id": None,
                "span_kind": "AGENT",
                "start_time": "2023-11-14T22:13:20.000000+00:00",
                "end_time": "2023-11-14T22:13:20.250000+00:00",
                "status_code": "ERROR",
                "status_message": "ValueError: nope",
                "attributes": {"openinference.span.kind": "AGENT", "tags": ["a"]},
                "events": [],
            }
        ],
        "next_cursor": None,
    }
    (node,) = load_trace(write(tmp_path, "spans.json", document))
    assert node.latency_ms == 250.0
    assert node.error == "ValueError: nope" and node.kind == "agent"
    assert node.attributes["tags"] == ["a"]


@pytest.mark.parametrize(
    ("content", "names"),
    [
        (
            [{"traceId": TRACE, "id": ROOT, "name": "get", "timestamp": 1, "duration": 5}],
            ["get"],
        ),
        ({"traceEvents": [{"name": "x", "ph": "X", "ts": 1, "dur": 2}]}, ["x"]),
        (
            [
                {"name": "outer", "ph": "B", "ts": 1, "pid": 1, "tid": 1},
                {"name": "inner", "ph": "X", "ts": 2, "dur": 1, "pid": 1, "tid": 1},
                {"ph": "E", "ts": 5, "pid": 1, "tid": 1},
            ],
            ["outer", "inner"],
        ),
    ],
)
def test_zipkin_and_chrome_trace_files_are_read(
    tmp_path: Path, content: Any, names: list[str]
) -> None:
    """Zipkin v2 and Chrome trace events (X events, B/E pairs) open, in ``view`` too."""
    path = write(tmp_path, "other.json", content)
    assert [node.name for node in load_trace(path)] == names
    result = CliRunner().invoke(cli, ["view", str(path), "--html", str(tmp_path / "o.html")])
    assert result.exit_code == 0, result.output


def test_an_unknown_json_file_gets_one_error_line(tmp_path: Path) -> None:
    """A JSON file in no trace format: one ``error:`` line naming what was expected, exit 2."""
    path = write(tmp_path, "other.json", {"hello": "world"})
    with pytest.raises(TraceFileError, match="is not a trace"):
        load_trace(path)
    result = CliRunner().invoke(cli, ["view", str(path)], catch_exceptions=False)
    assert result.exit_code == 2
    assert result.stderr.startswith("error: ") and "Zipkin v2 JSON" in result.stderr
    assert result.stderr.count("\n") == 1


def test_a_broken_second_object_names_where(tmp_path: Path) -> None:
    """Garbage after the first document is reported with its line."""
    text = json.dumps({"resourceSpans": []}) + "\n{not json\n"
    with pytest.raises(TraceFileError, match="line 2"):
        load_trace(write(tmp_path, "broken.jsonl", text))


def test_a_wrong_type_is_found_in_any_node_of_a_shape_seen_before(tmp_path: Path) -> None:
    """Nodes with the same keys are checked by their value types: the third call's text
    latency is named though two calls with these keys loaded fine before it."""
    call = {"name": "step", "id": "n1", "inputs": {}, "latency_ms": 1.5, "start_ms": 0.0}
    children = [{**call, "id": f"n{i}"} for i in range(2, 4)]
    children.append({**call, "id": "n9", "latency_ms": "slow"})
    data = {"nodes": [{**call, "children": children}]}
    with pytest.raises(TraceFileError, match=r"trace node 0_2: 'latency_ms' must be"):
        load_trace(write(tmp_path, "t.json", data))
