"""Building the tree from plain span records, and the TraceResult model."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from flow_xray.analysis.accounting import build_result
from flow_xray.errors import TraceFileError
from flow_xray.tree.model import TraceNode, TraceResult
from flow_xray.tree.spans import EventRecord, SpanRecord, SpanStore

T0 = 1_700_000_000_000_000_000
TRACE = "0af7651916cd43dd8448eb211c80319c"


def span(
    span_id: str,
    parent: str | None,
    start_ms: float,
    end_ms: float | None,
    name: str | None = None,
    **attrs: object,
) -> SpanRecord:
    return SpanRecord(
        trace_id=TRACE,
        span_id=span_id,
        parent_id=parent,
        name=name or span_id,
        start_ns=T0 + int(start_ms * 1e6),
        end_ns=None if end_ms is None else T0 + int(end_ms * 1e6),
        attributes={k.replace("__", "."): v for k, v in attrs.items()},
    )


def test_children_are_ordered_by_start_and_roots_collected() -> None:
    """Records in any order become a forest ordered by start time."""
    records = [
        span("c2", "r1", 5, 6),
        span("r2", None, 20, 30),
        span("c1", "r1", 1, 2),
        span("r1", None, 0, 10),
    ]
    result = build_result(records)
    assert [n.name for n in result.roots] == ["r1", "r2"]
    assert [c.name for c in result.roots[0].children] == ["c1", "c2"]
    assert [n.name for n in result] == ["r1", "c1", "c2", "r2"]
    assert result.roots[1].start_ms == 20.0 and result.roots[1].latency_ms == 10.0


def test_span_with_unknown_parent_becomes_a_root() -> None:
    """A remote or uncaptured parent does not hide the span."""
    result = build_result([span("a", "ffffffffffffffff", 0, 1)])
    assert [n.name for n in result.roots] == ["a"]
    assert result.roots[0].parent_id == "ffffffffffffffff"


def test_a_repeated_span_id_becomes_one_node() -> None:
    """The same span reported twice (a re-sent export batch) appears once in the tree."""
    records = [span("r", None, 0, 10), span("c", "r", 1, 2), span("c", "r", 1, 2)]
    result = build_result(records)
    assert [n.name for n in result] == ["r", "c"]


def test_a_parent_cycle_keeps_every_span_and_ends() -> None:
    """Corrupt input where spans are each other's parents still yields a finite tree."""
    records = [span("a", "b", 0, 5), span("b", "a", 1, 2), span("c", "b", 2, 3)]
    result = build_result(records)
    assert [n.name for n in result] == ["a", "b", "c"]
    assert len(result.to_dict()["nodes"]) == 1


def test_a_store_s_own_parent_and_cycle_rows_become_roots() -> None:
    """A capture stores each span as it ends (a parent after its children), so the build
    skips its cycle walk when no row's parent comes before it: a span that is its own
    parent, and a ring among the rows, still become roots, every span kept."""
    store = SpanStore()
    keys = ("input.value",)
    rows = [  # (span id, parent id, name, start): in end order, as a capture stores them
        (0x1, 0x1, "self", 10),
        (0x3, 0x4, "ring-b", 30),
        (0x4, 0x3, "ring-a", 20),
        (0x6, 0x5, "child", 50),
        (0x5, 0x0, "root", 40),
    ]
    for span_id, parent, name, start in rows:
        store.add(1, span_id, parent, name, start, start + 5, "UNSET", None, keys, ("{}",))
    result = build_result(store)
    assert [r.name for r in result.roots] == ["self", "ring-a", "root"]
    assert [n.name for n in result] == ["self", "ring-a", "ring-b", "root", "child"]
    assert build_result(list(store)).roots == result.roots


def test_a_span_id_of_zero_is_no_parent_for_the_roots() -> None:
    """An invalid span id 0 in a store (parent 0 means "none") adopts no root."""
    store = SpanStore()
    for span_id, name, start in ((0x0, "zero", 10), (0x7, "root", 20)):
        store.add(1, span_id, 0, name, start, start + 5, "UNSET", None, (), ())
    assert [r.name for r in build_result(store).roots] == ["zero", "root"]


def test_start_times_past_64_bits_with_a_tie_still_build() -> None:
    """A file's start times need not fit 64 bits; two equal ones order by span id."""
    start = 2**70
    records = [
        span("r", None, start, start + 9),
        span("c2", "r", start, 1),
        span("c1", "r", start, 1),
    ]
    (root,) = build_result(records).roots
    assert [c.name for c in root.children] == ["c1", "c2"]


def test_clock_skewed_child_still_nests_under_its_parent() -> None:
    """A child that starts before its parent (clock skew between hosts) is not cut loose."""
    records = [span("p", None, 5, 10), span("c", "p", 4, 6)]
    (root,) = build_result(records).roots
    assert root.name == "p" and [c.name for c in root.children] == ["c"]


def test_unended_span_is_incomplete_without_latency() -> None:
    """end_ns None means incomplete and no latency."""
    (node,) = build_result([span("a", None, 0, None)]).roots
    assert node.incomplete and node.latency_ms is None


def test_genai_openinference_and_deprecated_token_names_are_all_read() -> None:
    """Tokens show up whichever attribute family another instrumentation used."""
    records = [
        span(
            "a",
            None,
            0,
            1,
            gen_ai__usage__input_tokens=10,
            gen_ai__usage__output_tokens=5,
            gen_ai__request__model="gpt-4o",
        ),
        span(
            "b",
            None,
            2,
            3,
            llm__token_count__prompt=7,
            llm__token_count__completion=3,
            llm__token_count__total=10,
            llm__model_name="claude-3-5-haiku",
        ),
        span("c", None, 4, 5, gen_ai__usage__prompt_tokens=4, gen_ai__usage__completion_tokens=1),
    ]
    a, b, c = build_result(records).roots
    assert (a.meta["prompt_tokens"], a.meta["completion_tokens"], a.meta["total_tokens"]) == (
        10,
        5,
        15,
    )
    assert a.kind == "llm" and a.meta["model"] == "gpt-4o"
    assert a.meta["estimated_cost_usd"] > 0  # priced from the table when no cost attribute
    assert (b.meta["prompt_tokens"], b.meta["total_tokens"]) == (7, 10)
    assert (c.meta["prompt_tokens"], c.meta["completion_tokens"]) == (4, 1)
    assert "estimated_cost_usd" not in c.meta  # unknown model: no cost, not zero


def test_error_and_traceback_come_from_status_and_exception_event() -> None:
    """ERROR status plus the exception event give 'Type: message' and the traceback."""
    record = SpanRecord(
        trace_id=TRACE,
        span_id="a",
        parent_id=None,
        name="f",
        start_ns=T0,
        end_ns=T0 + 1,
        status="ERROR",
        status_message="division by zero",
        events=(
            EventRecord(
                "exception",
                T0,
                {
                    "exception.type": "ZeroDivisionError",
                    "exception.message": "division by zero",
                    "exception.stacktrace": "Traceback ...",
                },
            ),
        ),
    )
    (node,) = build_result([record]).roots
    assert node.status == "error"
    assert node.error == "ZeroDivisionError: division by zero"
    assert node.traceback == "Traceback ..."


def test_inputs_and_output_are_decoded_from_json() -> None:
    """input.value JSON becomes the inputs dict; text output stays text."""
    (node,) = build_result(
        [
            span(
                "a",
                None,
                0,
                1,
                input__value='{"q": "hi"}',
                input__mime_type="application/json",
                output__value="hello",
                output__mime_type="text/plain",
                flow_xray__meta__user="u1",
                custom=(1, 2),
            ),
        ]
    ).roots
    assert node.inputs == {"q": "hi"}
    assert node.output == "hello"
    assert node.meta["user"] == "u1"
    assert node.attributes == {"custom": [1, 2]}


def test_round_trip_through_json_is_lossless(tmp_path: Path) -> None:
    """to_dict/from_dict and save/load give back an equal result."""
    records = [
        span(
            "r",
            None,
            0,
            10,
            input__value='{"x": [1, 2.5, null]}',
            output__value='{"ok": true}',
            output__mime_type="application/json",
            gen_ai__usage__input_tokens=3,
        ),
        span("c", "r", 1, None),
    ]
    result = build_result(records)
    assert TraceResult.from_dict(json.loads(result.to_json())) == result
    path = tmp_path / "trace.json"
    result.save(path)
    loaded = TraceResult.load(path)
    assert loaded == result
    envelope = json.loads(path.read_text())
    assert envelope["version"] == 1
    assert {"id", "name", "inputs", "output", "error", "latency_ms", "meta", "children"} <= set(
        envelope["nodes"][0]
    )


def test_from_dict_keeps_unknown_node_keys_in_attributes() -> None:
    """Keys a node does not know (newer or foreign writers) land in attributes, not lost."""
    node = TraceNode.from_dict({"name": "a", "custom": 1, "attributes": {"x": 2}})
    assert node.attributes == {"custom": 1, "x": 2}


def test_load_rejects_files_that_are_not_traces(tmp_path: Path) -> None:
    """Unreadable or wrongly shaped files raise TraceFileError."""
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(TraceFileError):
        TraceResult.load(bad)
    bad.write_text('{"something": 1}')
    with pytest.raises(TraceFileError):
        TraceResult.load(bad)
    bad.write_text('{"version": 99, "nodes": []}')
    with pytest.raises(TraceFileError, match="version"):
        TraceResult.load(bad)


def test_totals_sum_tokens_cost_errors_and_wall_time() -> None:
    """Totals count nodes and errors, add tokens and cost, span the wall time."""
    root = TraceNode(
        id="a",
        name="a",
        latency_ms=100.0,
        start_ms=0.0,
        children=[
            TraceNode(
                id="b",
                name="b",
                latency_ms=10,
                start_ms=5,
                status="error",
                meta={
                    "prompt_tokens": 10,
                    "completion_tokens": 5,
                    "total_tokens": 15,
                    "estimated_cost_usd": 0.5,
                },
            ),
            TraceNode(
                id="c",
                name="c",
                latency_ms=10,
                start_ms=20,
                meta={"prompt_tokens": 1, "total_tokens": 1, "estimated_cost_usd": 0.25},
            ),
        ],
    )
    later = TraceNode(id="d", name="d", latency_ms=50.0, start_ms=150.0)
    totals = TraceResult(roots=[root, later]).totals
    assert (totals.nodes, totals.errors) == (4, 1)
    assert (totals.prompt_tokens, totals.completion_tokens, totals.total_tokens) == (11, 5, 16)
    assert totals.cost_usd == 0.75
    assert totals.wall_time_ms == 200.0
    assert TraceResult().totals.cost_usd is None


def test_deep_trees_do_not_hit_the_recursion_limit() -> None:
    """A 5,000-deep chain builds, iterates and round-trips."""
    records = [span("s0", None, 0, 1)] + [
        span(f"s{i}", f"s{i - 1}", i, i + 1) for i in range(1, 5000)
    ]
    result = build_result(records)
    assert len(result) == 5000
    assert TraceResult.from_dict(result.to_dict()) == result


@pytest.mark.slow
def test_hundred_thousand_spans_build_in_reasonable_time() -> None:
    """100k spans build (functional check; the timing target lives in the benchmark)."""
    records = [span("root", None, 0, 1000)] + [
        span(f"c{i}", "root", i / 100, i / 100 + 1, input__value='{"i": 1}') for i in range(99_999)
    ]
    start = time.perf_counter()
    result = build_result(records)
    assert len(result.roots[0].children) == 99_999
    assert time.perf_counter() - start < 30  # sanity bound only, not a performance target


def test_nodes_without_ids_get_stable_positional_ids() -> None:
    """Loading the same id-less JSON twice gives the same DOT-safe ids."""
    data = {"version": 1, "nodes": [{"name": "a", "children": [{"name": "b"}, {"name": "c"}]}]}
    first, second = TraceResult.from_dict(data), TraceResult.from_dict(data)
    assert [n.id for n in first] == ["n0", "n0_0", "n0_1"]
    assert [n.id for n in second] == [n.id for n in first]


def test_wrongly_typed_fields_are_a_trace_file_error() -> None:
    """A field of the wrong type is reported with the node's position, not a later TypeError."""
    data = {"nodes": [{"name": "a", "children": [{"name": "b", "latency_ms": "slow"}]}]}
    with pytest.raises(TraceFileError, match="node 0_0: 'latency_ms'"):
        TraceResult.from_dict(data)
