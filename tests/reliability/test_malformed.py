"""Malformed trace files are bad input: a `TraceFileError` from ``load``, one short ``error:``
line from ``view``, never another exception, never a hang.

A corpus of files an attacker or a broken tool could hand over (times past
the float and 64-bit ranges, 401-digit numbers, ids of 10 MB, NaN and
infinities, wrong types in every field, in each format flow-xray reads), and
property tests over generated spans of each format: a file either loads and
renders (page, JSON, summary) or is refused with a `TraceFileError`.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings, strategies as st

from flow_xray import TraceResult
from flow_xray.cli import cli
from flow_xray.errors import TraceFileError
from flow_xray.formats.registry import load_trace
from flow_xray.terminal import LINE_LIMIT

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
SPAN = "00f067aa0ba902b7"
BIG = "9" * 401  # a number past the float range


def otlp(**fields: Any) -> str:
    span = {
        "traceId": TRACE,
        "spanId": SPAN,
        "name": "call",
        "startTimeUnixNano": "1000",
        "endTimeUnixNano": "2000",
        **fields,
    }
    return json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}) + "\n"


def flow(**fields: Any) -> str:
    node = {"name": "call", "latency_ms": 1.0, "children": [], **fields}
    return json.dumps({"version": 1, "nodes": [node]})


def jaeger(**fields: Any) -> str:
    span = {
        "traceID": TRACE,
        "spanID": SPAN,
        "operationName": "call",
        "startTime": 1,
        "duration": 1,
        **fields,
    }
    return json.dumps({"data": [{"traceID": TRACE, "spans": [span], "processes": {}}]})


def console(**fields: Any) -> str:
    span = {
        "name": "call",
        "context": {"trace_id": "0x" + TRACE, "span_id": "0x" + SPAN},
        "start_time": "2024-01-01T00:00:00Z",
        "end_time": "2024-01-01T00:00:01Z",
        **fields,
    }
    return json.dumps(span, indent=2)


MALFORMED: dict[str, str] = {
    "OTLP start of 401 digits": otlp(startTimeUnixNano=BIG),
    "OTLP end of 401 digits": otlp(endTimeUnixNano=BIG),
    "OTLP end past 2**64": otlp(endTimeUnixNano=str(2**64)),
    "OTLP negative start": otlp(startTimeUnixNano="-1"),
    "OTLP event time of 401 digits": otlp(events=[{"name": "e", "timeUnixNano": BIG}]),
    "OTLP start of 5,000 digits": otlp(startTimeUnixNano="9" * 5000),
    "OTLP start as a float": otlp(startTimeUnixNano=1.5e300),
    "OTLP 10 MB trace id": otlp(traceId="a" * 10_000_000),
    "OTLP 10 MB span id": otlp(spanId="b" * 10_000_000),
    "OTLP trace id as a number": otlp(traceId=12345),
    "OTLP 10 MB status code": otlp(status={"code": "X" * 10_000_000}),
    "OTLP attribute value of 1 MB, not an AnyValue": otlp(
        attributes=[{"key": "k", "value": "v" * 1_000_000}]
    ),
    "flow-xray latency of 401 digits": flow(latency_ms=int(BIG)),
    "flow-xray start of 401 digits": flow(start_ms=int(BIG)),
    "flow-xray latency Infinity": flow(latency_ms=math.inf),
    "flow-xray latency NaN": flow(latency_ms=math.nan),
    "flow-xray start -Infinity": flow(start_ms=-math.inf),
    "flow-xray 10 MB trace id": flow(trace_id="f" * 10_000_000),
    "flow-xray 10 MB parent id": flow(parent_id="f" * 10_000_000),
    "flow-xray trace id as a list": flow(trace_id=[1, 2]),
    "flow-xray 10 MB version": json.dumps({"version": "v" * 10_000_000, "nodes": []}),
    "Jaeger start of 401 digits": jaeger(startTime=int(BIG)),
    "Jaeger duration of 1e300": jaeger(duration=1e300),
    "Jaeger negative duration": jaeger(duration=-5),
    "Jaeger start Infinity": jaeger(startTime=math.inf),
    "Jaeger 10 MB trace id": jaeger(traceID="1" * 10_000_000),
    "Jaeger error list of strings": json.dumps({"data": [], "errors": ["x" * 1_000_000]}),
    "console start of 401 digits": console(start_time=int(BIG)),
    "console start in year 1": console(start_time="0001-01-01T00:00:00Z"),
    "console start in year 9999": console(start_time="9999-12-31T23:59:59+14:00"),
    "console 10 MB span id": console(context={"trace_id": TRACE, "span_id": "0x" + "1" * 10**7}),
}


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_a_malformed_file_is_a_trace_file_error(tmp_path: Path, name: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(MALFORMED[name], encoding="utf-8")
    with pytest.raises(TraceFileError) as raised:
        TraceResult.load(path)
    assert len(str(raised.value)) < 1000  # never the 10 MB value echoed


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_view_of_a_malformed_file_is_one_short_error_line(tmp_path: Path, name: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(MALFORMED[name], encoding="utf-8")
    done = CliRunner().invoke(cli, ["view", str(path), "--html", str(tmp_path / "o.html")])
    assert done.exit_code == 2, done.output
    (line,) = done.stderr.splitlines()
    assert line.startswith("error: ") and len(line) <= LINE_LIMIT, line
    assert "Traceback" not in done.output and not (tmp_path / "o.html").exists()


# --- generated files: they load and render, or they are refused ----------------------------

numbers = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.integers(min_value=10**300, max_value=10**400),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(st.sampled_from("0123456789-+.e"), max_size=30),
    st.sampled_from([None, True, "", "NaN", [1], {"a": 1}, BIG]),
)
ids = st.one_of(
    st.text(st.sampled_from("0123456789abcdefABCDEF"), max_size=40),
    st.text(max_size=20),
    st.sampled_from(["", None, 0, TRACE, SPAN, "A" * 300, "AAAAAAAAAAAAAAAAAAAAAA=="]),
)
names = st.one_of(st.text(max_size=20), st.sampled_from([None, 5, "\x1b[2J\u202e"]))


def check_loads_or_refuses(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    try:
        result = load_trace(path)
    except TraceFileError:
        return
    result.to_html()
    result.to_json()
    result.totals.summary()


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(start=numbers, end=numbers, trace_id=ids, span_id=ids, parent=ids, name=names)
def test_generated_otlp_spans_load_or_are_refused(
    tmp_path: Path, start: Any, end: Any, trace_id: Any, span_id: Any, parent: Any, name: Any
) -> None:
    text = otlp(
        startTimeUnixNano=start,
        endTimeUnixNano=end,
        traceId=trace_id,
        spanId=span_id,
        parentSpanId=parent,
        name=name,
        events=[{"name": "e", "timeUnixNano": end}],
    )
    check_loads_or_refuses(tmp_path / "g.jsonl", text)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(latency=numbers, start=numbers, trace_id=ids, parent=ids, name=names, tokens=numbers)
def test_generated_flow_xray_nodes_load_or_are_refused(
    tmp_path: Path, latency: Any, start: Any, trace_id: Any, parent: Any, name: Any, tokens: Any
) -> None:
    text = flow(
        latency_ms=latency,
        start_ms=start,
        trace_id=trace_id,
        parent_id=parent,
        name=name,
        meta={"prompt_tokens": tokens, "estimated_cost_usd": tokens},
    )
    check_loads_or_refuses(tmp_path / "g.json", text)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(start=numbers, duration=numbers, trace_id=ids, span_id=ids, name=names)
def test_generated_jaeger_spans_load_or_are_refused(
    tmp_path: Path, start: Any, duration: Any, trace_id: Any, span_id: Any, name: Any
) -> None:
    text = jaeger(
        startTime=start, duration=duration, traceID=trace_id, spanID=span_id, operationName=name
    )
    check_loads_or_refuses(tmp_path / "g.json", text)
