"""The OTLP/JSON reader: every spelling producers write reads into the same span records."""

from __future__ import annotations

import json
import math
import tracemalloc
from pathlib import Path

import pytest

from flow_xray.errors import TraceFileError
from flow_xray.formats.otlp_json import read_otlp_json
from flow_xray.formats.registry import load_trace
from flow_xray.tree.spans import SpanRecord

T0 = 1_700_000_000_000_000_000
SECOND = 1_000_000_000


def test_reader_accepts_snake_case_base64_ids_and_int_nanos() -> None:
    """Protobuf-JSON style input (snake_case, base64 ids, integer times) reads the same."""
    line = json.dumps(
        {
            "resource_spans": [
                {
                    "scope_spans": [
                        {
                            "spans": [
                                {
                                    "trace_id": "W47/95gDgQPSabYzgT/GDA==",
                                    "span_id": "APBnqgupArc=",
                                    "parent_span_id": "7uGbfsPBsXQ=",
                                    "name": "search",
                                    "start_time_unix_nano": T0,
                                    "end_time_unix_nano": T0 + SECOND,
                                    "status": {"code": "STATUS_CODE_ERROR", "message": "boom"},
                                    "attributes": [{"key": "n", "value": {"int_value": 7}}],
                                }
                            ]
                        }
                    ]
                }
            ]
        }
    )
    assert read_otlp_json([line]) == [
        SpanRecord(
            trace_id="5b8efff798038103d269b633813fc60c",
            span_id="00f067aa0ba902b7",
            parent_id="eee19b7ec3c1b174",
            name="search",
            start_ns=T0,
            end_ns=T0 + SECOND,
            status="ERROR",
            status_message="boom",
            attributes={"n": 7},
        )
    ]


def _line(attributes: list[dict[str, object]], **span: object) -> str:
    body = {
        "traceId": "5b8efff798038103d269b633813fc60c",
        "spanId": "eee19b7ec3c1b174",
        "name": "s",
        "startTimeUnixNano": "1",
        "endTimeUnixNano": "2",
        "attributes": attributes,
        **span,
    }
    return json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [body]}]}]})


def test_reader_decodes_every_any_value_kind() -> None:
    """kvlist → dict, array → tuple, ints from strings, doubles incl. non-finite, empty → None."""
    attributes = [
        {"key": "s", "value": {"stringValue": "x"}},
        {"key": "b", "value": {"boolValue": True}},
        {"key": "i", "value": {"intValue": "-9007199254740993"}},
        {"key": "d", "value": {"doubleValue": 2.5}},
        {"key": "inf", "value": {"doubleValue": "Infinity"}},
        {"key": "raw", "value": {"bytesValue": "AAE="}},
        {"key": "none", "value": {}},
        {
            "key": "kv",
            "value": {
                "kvlistValue": {
                    "values": [
                        {"key": "inner", "value": {"arrayValue": {"values": [{"intValue": "1"}]}}}
                    ]
                }
            },
        },
        {"key": "empty", "value": {"arrayValue": {}}},
    ]
    (record,) = read_otlp_json([_line(attributes)])
    assert dict(record.attributes) == {
        "s": "x",
        "b": True,
        "i": -9007199254740993,
        "d": 2.5,
        "inf": math.inf,
        "raw": "AAE=",
        "none": None,
        "kv": {"inner": (1,)},
        "empty": (),
    }


def test_span_without_end_time_is_open_and_zero_parent_is_none() -> None:
    """A missing end time means the span never ended; an all-zero parent id means a root."""
    line = _line([], endTimeUnixNano="0", parentSpanId="0000000000000000")
    (record,) = read_otlp_json([line])
    assert (record.end_ns, record.parent_id) == (None, None)


def test_blank_lines_are_skipped(tmp_path: Path) -> None:
    """Empty and whitespace-only lines between objects are ignored."""
    path = tmp_path / "gaps.jsonl"
    path.write_text("\n" + _line([]) + "\n   \n" + _line([]) + "\n\n", encoding="utf-8")
    assert [r.name for r in read_otlp_json(path)] == ["s", "s"]


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ("{not json", "line 3: not JSON"),
        ("[1, 2]", "line 3: not OTLP JSON: not a JSON object"),
        ('{"spans": []}', "line 3: not OTLP JSON: no 'resourceSpans' list"),
        (_line([], spanId="xyz"), "line 3: not OTLP JSON: spanId 'xyz'"),
        (_line([], startTimeUnixNano="soon"), "line 3: not OTLP JSON: startTimeUnixNano 'soon'"),
        (_line([], status={"code": 7}), "line 3: not OTLP JSON: status code 7"),
        (_line([{"value": {"intValue": "1"}}]), "line 3: not OTLP JSON: attribute"),
    ],
)
def test_malformed_line_raises_trace_file_error_naming_the_line(bad: str, message: str) -> None:
    """Bad input is a TraceFileError that says which line and what is wrong."""
    with pytest.raises(TraceFileError, match=message):
        read_otlp_json([_line([]), "", bad])


def test_unreadable_path_is_a_trace_file_error(tmp_path: Path) -> None:
    """A missing file is reported as a TraceFileError naming the path."""
    missing = tmp_path / "missing.jsonl"
    with pytest.raises(TraceFileError, match=r"missing\.jsonl: cannot read"):
        read_otlp_json(missing)


def _collector_line(number: int, spans: int = 50) -> str:
    """One line as the Collector's file exporter writes it: ``spans`` spans of 12 attributes."""
    encoded = [
        {
            "traceId": f"{number + 1:032x}",
            "spanId": f"{number * 1000 + i + 1:016x}",
            "name": "step",
            "kind": 1,
            "startTimeUnixNano": str(10**18 + i),
            "endTimeUnixNano": str(10**18 + i + 5),
            "attributes": [
                {"key": f"k{j}", "value": {"stringValue": f"value {j} of {i}"}} for j in range(12)
            ],
            "status": {},
        }
        for i in range(spans)
    ]
    scope = {"scope": {"name": "t"}, "spans": encoded}
    return json.dumps({"resourceSpans": [{"resource": {}, "scopeSpans": [scope]}]})


def test_a_json_lines_file_is_read_a_line_at_a_time(tmp_path: Path) -> None:
    """Loading 200 Collector lines (10,000 spans) never holds every line's parsed objects:
    its peak is below what the parsed lines alone take (it was 1.3 times that)."""
    text = "\n".join(_collector_line(n) for n in range(200))
    path = tmp_path / "spans.jsonl"
    path.write_text(text)
    tracemalloc.start()
    try:
        parsed = [json.loads(line) for line in text.splitlines()]
        every_line = tracemalloc.get_traced_memory()[0]
        del parsed
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        result = load_trace(path)
        peak = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    assert len(result) == 10_000
    assert peak < every_line, (peak, every_line)


def test_a_line_past_the_first_that_is_not_json_names_where(tmp_path: Path) -> None:
    """The lines after the first are parsed as they are read: a broken one is still the
    same one-line error, naming its line and how many documents came before it."""
    path = tmp_path / "spans.jsonl"
    path.write_text(_collector_line(0, 2) + "\n" + _collector_line(1, 2) + "\n{broken\n")
    with pytest.raises(TraceFileError) as caught:
        load_trace(path)
    message = str(caught.value)
    assert message.startswith(f"{path} is not a trace: not JSON (line 3, after 2 documents)")
