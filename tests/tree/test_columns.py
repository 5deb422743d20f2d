"""A trace's columns (what the viewer page packs) hold what its JSON form holds, node for node."""

from __future__ import annotations

import contextlib
import itertools
import json
from typing import Any

from opentelemetry import trace as otel_trace

from flow_xray import trace
from flow_xray.analysis.accounting import build_result
from flow_xray.jsontext import JsonText
from flow_xray.render.payload import pack, read_page, unpack
from flow_xray.render.trace_page import trace_to_html
from flow_xray.tree.columns import trace_columns
from flow_xray.tree.lazy import LazyNode
from flow_xray.tree.model import ACCOUNTING_FIELDS, DATA_FIELDS, SPAN_FIELDS, TraceResult
from flow_xray.tree.spans import NO_END, EventRecord, SpanRecord, SpanStore

MIME = "application/json"


@trace
def leaf(i: int) -> Any:
    if i == 3:
        raise KeyError("three")
    return {"i": i, "tags": ["a", "b"]} if i % 2 else i


@trace(kind="llm")
def chat(prompt: str) -> str:
    trace.annotate(model="gpt-4o-mini", prompt_tokens=12, completion_tokens=3)
    return "ok"


@trace(attributes={"team": "search"})
def run(n: int) -> None:
    chat("hi")
    with otel_trace.get_tracer("some.instrumentation").start_as_current_span("foreign") as span:
        span.set_attribute("input.value", '{"q": 1}')
        span.set_attribute("input.mime_type", "application/json")
    for i in range(n):
        with contextlib.suppress(KeyError):
            leaf(i)


def _captured(n: int = 6) -> TraceResult:
    with trace.capture() as result:
        run(n)
    return result


def _plain(value: Any) -> Any:
    return json.loads(value) if type(value) is JsonText else value


def test_a_nodes_fields_are_its_spans_then_the_accountings() -> None:
    """`DATA_FIELDS` is `SPAN_FIELDS` then `ACCOUNTING_FIELDS` (lazy nodes export in that order)."""
    assert (*SPAN_FIELDS, *ACCOUNTING_FIELDS) == DATA_FIELDS
    assert "name" in SPAN_FIELDS and "status" in SPAN_FIELDS


def test_columns_are_the_nodes_in_pre_order_with_parents() -> None:
    """One list per field plus ``parent``; row i is the i-th node in pre-order."""
    result = _captured()
    columns = trace_columns(result.roots)
    nodes = list(result)
    assert set(columns) == {*DATA_FIELDS, "parent"}
    assert all(len(values) == len(nodes) for values in columns.values())
    assert columns["name"] == [n.name for n in nodes]
    assert columns["parent"][0] == -1
    assert [columns["name"][p] for p in columns["parent"][1:]] == ["run"] * (len(nodes) - 1)


def test_columns_match_the_filled_nodes_and_leave_them_unfilled() -> None:
    """Values read for the columns equal the nodes' own fields; building them fills no node."""
    result = _captured()
    assert result.totals.nodes > 0  # the accounting reads only what it needs
    unfilled = [n for n in result if isinstance(n, LazyNode) and n._source is not None]
    assert unfilled, "plain calls stay unfilled after the build"
    columns = trace_columns(result.roots)
    assert all(n._source is not None for n in unfilled)
    for row, node in enumerate(result):
        for field in DATA_FIELDS:
            assert _plain(columns[field][row]) == getattr(node, field), (node.name, field)


def _mixed_store(metadata: bool = True) -> SpanStore:
    """Rows of every kind the column reader treats apart, under two traces: plain calls, one
    that never ended, errors, events, metadata, another instrumentation's, a cancelled call,
    and records appended from elsewhere (a child process's, one without an end)."""
    store = SpanStore()
    io = ("openinference.span.kind", "input.value", "input.mime_type", "output.value")
    io += ("output.mime_type", "code.function.name", "process.pid")
    store.add(
        1,
        0xA,
        0,
        "root",
        100,
        990,
        "UNSET",
        None,
        io,
        ("CHAIN", '{"n":3}', MIME, "[1]", MIME, "root", 7),
    )
    for i in range(40):
        end = NO_END if i == 5 else 200 + i
        store.add(
            1,
            0x100 + i,
            0xA,
            "leaf",
            150 + i,
            end,
            "UNSET",
            None,
            io,
            ("TOOL", f'{{"i":{i}}}', MIME, str(i), MIME, "leaf", 7),
        )
    store.add(
        1,
        0x20,
        0xA,
        "bad",
        300,
        310,
        "ERROR",
        "ValueError: x",
        ("exception.type",),
        ("ValueError",),
        (
            EventRecord(
                "exception", 305, {"exception.type": "ValueError", "exception.message": "x"}
            ),
        ),
    )
    if metadata:  # spans with metadata are filled as the tree is built
        store.add(
            1,
            0x21,
            0xA,
            "noted",
            320,
            330,
            "UNSET",
            None,
            ("flow_xray.meta.step",),
            (2,),
            (EventRecord("checkpoint", 325, {"k": "v"}),),
        )
        store.add(
            1,
            0x22,
            0xA,
            "llm",
            340,
            350,
            "UNSET",
            None,
            ("gen_ai.request.model", "gen_ai.usage.input_tokens"),
            ("gpt-4o", 5),
        )
    store.add(
        1,
        0x23,
        0xA,
        "GET",
        360,
        370,
        "UNSET",
        None,
        ("otel.scope.name", "http.url"),
        ("requests", "https://x"),
    )
    store.add(
        1, 0x24, 0xA, "stopped", 380, 390, "UNSET", None, ("flow_xray.outcome",), ("cancelled",)
    )
    store.add(
        2,
        0xB,
        0,
        "other trace",
        50,
        60,
        "OK",
        None,
        io,
        ("CHAIN", "{}", MIME, "null", MIME, "o", 8),
    )
    store.append(
        SpanRecord(
            f"{1:032x}",
            f"{0x30:016x}",
            f"{0xA:016x}",
            "child process",
            400,
            500,
            attributes={"input.value": '{"c":1}', "input.mime_type": MIME},
        )
    )
    store.append(SpanRecord(f"{1:032x}", f"{0x31:016x}", f"{0xA:016x}", "child open", 410, None))
    return store


def test_columns_read_a_mixed_store_as_its_nodes_are() -> None:
    """Whatever a store's rows hold, and whichever nodes were filled before, each column
    holds what the node's own field gives."""
    for metadata, step in itertools.product((True, False), (None, 7, 1)):
        # none filled before (with metadata: those filled when built), some, all
        result = build_result(_mixed_store(metadata))
        for node in list(result)[::step] if step else ():
            assert isinstance(node, LazyNode)
            node.fill()
        columns = trace_columns(result.roots)
        expected = list(build_result(_mixed_store(metadata)))  # filled by reading every field below
        assert columns["name"] == [n.name for n in expected]
        for row, node in enumerate(expected):
            for field in DATA_FIELDS:
                assert _plain(columns[field][row]) == getattr(node, field), (node.name, field)
        kinds = {"root", "leaf", "bad", "GET", "stopped", "other trace", "child process"}
        assert kinds | ({"noted", "llm"} if metadata else set()) <= set(columns["name"])


def test_columns_of_plain_and_failed_calls_none_filled() -> None:
    """Calls none of which is filled when built (plain ones, one failing) read as the nodes do."""
    store = SpanStore()
    keys = ("input.value", "input.mime_type")
    store.add(1, 0xA, 0, "root", 100, 900, "UNSET", None, keys, ('{"a":1}', MIME))
    store.add(1, 0xB, 0xA, "bad", 200, 300, "ERROR", "KeyError: 'k'", keys, ('{"b":2}', MIME))
    result = build_result(store)
    columns = trace_columns(result.roots)
    for row, node in enumerate(build_result(store)):
        for field in DATA_FIELDS:
            assert _plain(columns[field][row]) == getattr(node, field), (node.name, field)
    assert columns["error"] == [None, "KeyError: 'k'"]


def test_only_flow_xray_containers_come_as_json_text() -> None:
    """Inputs and object/array outputs that flow-xray wrote come as their JSON text; scalar
    outputs and other instrumentations' values come decoded."""
    columns = trace_columns(_captured().roots)
    pairs = zip(columns["inputs"], columns["output"], strict=True)
    kinds = dict(zip(columns["name"], pairs, strict=True))
    assert type(kinds["run"][0]) is JsonText
    foreign_inputs, _ = kinds["foreign"]
    assert type(foreign_inputs) is dict and foreign_inputs == {"q": 1}
    # a leaf returns ints (decoded) and dicts (JSON text)
    leaf_outputs = [
        o for n, o in zip(columns["name"], columns["output"], strict=True) if n == "leaf"
    ]
    assert {type(o) for o in leaf_outputs} >= {int, JsonText}


def test_the_page_from_columns_holds_what_the_page_from_the_json_form_holds() -> None:
    """`TraceResult.to_html` (columns) and `trace_to_html(to_dict())` embed the same calls."""
    result = _captured()
    fast = read_page(result.to_html())
    slow = read_page(trace_to_html(result.to_dict()))
    for row in (*fast["nodes"], *slow["nodes"]):
        row.setdefault("meta", {})  # the JSON form leaves out an empty meta
    assert fast["nodes"] == slow["nodes"]
    assert fast["overview"] == slow["overview"] and fast["totals"] == slow["totals"]


def test_pack_round_trips_every_column_kind() -> None:
    """Constant, scalar, string, detail and JSON-text columns, with absent rows, unpack as given."""
    columns = {
        "same": ["x", "x", "x"],
        "none": [None, None, None],
        "num": [1, 2.5, None],
        "flag": [True, False, True],
        "text": ["a", None, "a\udc80"],
        "detail": [{"k": [1, 2]}, JsonText('{"k":[1,2]}'), []],
        "parent": [-1, 0, 0],
    }
    rows = unpack(pack({"mode": "trace"}, columns, {"text": [1]}))["nodes"]
    assert rows[0] == {
        "same": "x",
        "none": None,
        "num": 1,
        "flag": True,
        "text": "a",
        "detail": {"k": [1, 2]},
        "parent": -1,
    }
    assert "text" not in rows[1] and rows[1]["detail"] == {"k": [1, 2]}
    assert rows[2]["text"] == "a\udc80" and rows[2]["detail"] == [] and rows[2]["num"] is None
