"""The page's own decoder (``static/payload.js``, under Node.js) reads what `pack` writes."""

from __future__ import annotations

import base64
import gzip
import json
import random
import shutil
import struct
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from flow_xray.jsontext import JsonText
from flow_xray.render.payload import pack, unpack

DECODER = Path(__file__).resolve().parent / "js" / "decode_payload.js"
SPAN = [f"{(i * 0x9E3779B97F4A7C15) % (1 << 64):016x}" for i in range(300)]


def decoded(packed: dict[str, Any], e2e_missing: Callable[[str], Any], *queries: str) -> Any:
    """The rows payload.js makes of ``packed`` (each row's fields that are not undefined),
    and each query's matches among them and among plain copies (see decode_payload.js)."""
    node = shutil.which("node")
    if node is None:
        e2e_missing("node (Node.js) is not installed")
    done = subprocess.run(
        [node, str(DECODER), *queries],
        input=json.dumps(packed),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def kinds(packed: dict[str, Any]) -> dict[str, str]:
    """Each column's kind in a packed payload (as `unpack` reads it)."""
    data = gzip.decompress(base64.b64decode(packed["packed"]))
    (size,) = struct.unpack_from("<I", data)
    return {c[0]: c[1] for c in json.loads(data[4 : 4 + size])["columns"]}


def test_integers_travel_as_bytes_while_a_float_holds_them_exactly(
    e2e_missing: Callable[[str], Any],
) -> None:
    """A column of ints (parents, counts) is read back as the same ints; one holding an int
    a float cannot hold (2**53 and beyond) stays JSON text; two in a row that far apart
    travel as they are (not as their difference)."""
    exact = [(-1) ** i * (i * 30_000_000_000_007 % (2**52)) for i in range(300)]
    big = [*exact[:-1], 2**53]
    apart = [(-1) ** i * (2**53 - 1) for i in range(300)]
    packed = pack({"mode": "trace"}, {"exact": exact, "big": big, "apart": apart})
    stored = kinds(packed)
    assert stored["exact"] in ("N", "K") and stored["big"] == "v" and stored["apart"] == "K"
    rows = unpack(packed)["nodes"]
    assert [row["exact"] for row in rows] == exact and [row["big"] for row in rows] == big
    assert [row["apart"] for row in rows] == apart
    assert all(type(row["exact"]) is int for row in rows)
    page = decoded(packed, e2e_missing)["rows"]
    assert [row["exact"] for row in page] == exact and [row["apart"] for row in page] == apart


def test_the_page_decodes_every_column_kind_as_unpack_does(
    e2e_missing: Callable[[str], Any],
) -> None:
    """300 calls with ids, span ids, exact and inexact times, nulls, shared and own details
    and absent fields: the browser's decoder gives the rows `unpack` gives, kind by kind."""
    count = len(SPAN)
    columns: dict[str, list[Any]] = {
        "id": ["n" + s for s in SPAN],
        "span_id": SPAN,
        "name": [f"step_{i % 7}" for i in range(count)],
        "kind": ["chain"] * count,
        "start_ms": [i * 1000.5 / 7 for i in range(count)],
        "latency_ms": [(i * 7919 % 1000003) / 1e6 for i in range(count)],
        "self_ms": [None if i % 5 == 0 else i / 3 for i in range(count)],
        "flag": [i % 2 == 0 for i in range(count)],
        "parent": [i - 1 for i in range(count)],
        "inputs": [JsonText(json.dumps({"i": i, "q": f"question \u00e9 {i}"})) for i in SPAN],
        "attributes": [{"code.function.name": f"step_{i % 7}"} for i in range(count)],
        "error": [None if i % 3 else "ValueError: bad" for i in range(count)],
        "meta": [{} for _ in range(count)],
    }
    packed = pack({"mode": "trace", "title": "t"}, columns, {"error": [1, 2], "self_ms": [7]})
    assert kinds(packed) == {
        "id": "p",
        "span_id": "X",
        "name": "s",
        "kind": "c",
        "start_ms": "F",
        "latency_ms": kinds(packed)["latency_ms"],  # ("N" or "K": what gzips smaller)
        "self_ms": "F",
        "flag": "v",
        "parent": "N",
        "inputs": "J",
        "attributes": "j",
        "error": "s",
        "meta": "c",
    }
    page = decoded(packed, e2e_missing)
    assert page["head"] == {"mode": "trace", "title": "t"}
    assert page["rows"] == unpack(packed)["nodes"]


def test_times_in_whole_nanoseconds_are_read_back_exactly(
    e2e_missing: Callable[[str], Any],
) -> None:
    """Times that are nanoseconds over 1e6 (large and out of order too) travel as integers
    and come back as the very same floats."""
    starts = [0.0, 27356.207801, 0.029574, 86_400_000.000001, 3.5, 1e-06, 9_007_199_254.74]
    packed = pack({"mode": "trace"}, {"start_ms": starts})
    assert kinds(packed) == {"start_ms": "K"}  # (out of order: stored as they are)
    assert [row["start_ms"] for row in decoded(packed, e2e_missing)["rows"]] == starts
    assert [row["start_ms"] for row in unpack(packed)["nodes"]] == starts


def test_a_column_equal_to_another_in_most_calls_travels_as_its_difference(
    e2e_missing: Callable[[str], Any],
) -> None:
    """Self times equal to the latency in most calls (leaves) are stored less the latency
    (nearly all zeros) and come back exactly, in the page and in `unpack`; start times that
    grow are stored as steps, latencies as they are; a column equal to another in fewer
    than half the calls is stored alone."""
    count = 20_000
    draw = random.Random(7).randrange
    latency = [draw(1, 100_000) for _ in range(count)]  # (ns, a fixed seed)
    columns: dict[str, list[Any]] = {
        "start_ms": [(i * 13_000 + i * 31 % 7) / 1e6 for i in range(count)],
        "latency_ms": [k / 1e6 for k in latency],
        "self_ms": [(k if i % 100 else k // 4) / 1e6 for i, k in enumerate(latency)],
        "other_ms": [(k if i % 3 == 0 else k * 2) / 1e6 for i, k in enumerate(latency)],
        "parent": [i // 100 - 1 for i in range(count)],
    }
    packed = pack({"mode": "trace"}, columns)
    data = gzip.decompress(base64.b64decode(packed["packed"]))
    (size,) = struct.unpack_from("<I", data)
    stored = {c[0]: c[1:3] for c in json.loads(data[4 : 4 + size])["columns"]}
    assert stored["start_ms"][0] == "N" and len(stored["start_ms"][1]) == 2
    assert stored["latency_ms"][0] == "K" and len(stored["latency_ms"][1]) == 2
    assert stored["self_ms"][0] == "K" and stored["self_ms"][1][2] == "latency_ms"
    assert len(stored["other_ms"][1]) == 2  # equal in a third of the calls: alone
    assert stored["parent"][0] == "N" and stored["parent"][1][1:] == [1]  # (not a time: scale 1)
    expected = [dict(zip(columns, row, strict=True)) for row in zip(*columns.values(), strict=True)]
    assert unpack(packed)["nodes"] == expected
    assert decoded(packed, e2e_missing)["rows"] == expected


DETAILS = [
    '{"step":1,"query":"Question Number 1"}',  # canonical: searched as written
    '{"step": 2, "query": "spaced out"}',  # spaces: written out again before the search
    '{"a":1.50,"b":1e3,"c":-0,"d":12345678901234567}',  # numbers JavaScript writes otherwise
    '{"q":"caf\\u00e9 \\u001f \\/"}',  # escapes JavaScript writes otherwise
    '{"b":1,"10":"ten","a":{"0":"zero"}}',  # keys JavaScript puts first
    '{"x":1,"x":2}',  # a repeated key: the last one stays
    '["list",{"nested":[true,null]}]',
    '"just a string"',
    "null",
]
QUERIES = [
    "question",
    '"question number 1"',
    '"step":2',
    '"step": 2',
    "1.5",
    "1.50",
    "1000",
    '"c":0',
    "-0",
    "12345678901234568",
    "café",
    "\\u00e9",
    "\\/",
    '{"10":"ten","b":1',
    '"x":2',
    '"x":1',
    '"nested":[true,null]',
    "just",
    '"just',
    "null",
    "-question",
    "x:2",
    "step:2",
    "d:question",
    'd:"step":1',
    "d:1.5",
    "d:1.50",
    "d:café",
    "d:\\u00e9",
    'd:{"10":"ten"',
    "d:just",
    "i:7",
    "i:-0",
    "q:café",
    "p:c:\\temp",
    "0:zero",
]


def _inputs(i: int) -> str:
    """Row i's input text: an object holding a detail and a Windows path, or (every 10th) a
    list, whose keys are its indexes (not in its text)."""
    if i % 10 == 3:
        return f'["zero",{i}]'
    return f'{{"i":{i},"d":{DETAILS[i % len(DETAILS)]},"p":"c:\\\\temp"}}'


def test_search_finds_in_decoded_rows_what_it_finds_in_the_values(
    e2e_missing: Callable[[str], Any],
) -> None:
    """Free-text and key:value search read canonical detail texts unparsed: for inputs
    JavaScript would write out differently (spaces, numbers, escapes, key order, repeated
    keys), every query matches the same rows as on plain objects holding the parsed values."""
    count = 300  # enough for each row's own text ("J"); outputs share theirs ("j")
    columns: dict[str, list[Any]] = {
        "name": [f"call_{i}" for i in range(count)],
        "inputs": [JsonText(_inputs(i)) for i in range(count)],
        "output": [JsonText(DETAILS[-1 - i % len(DETAILS)]) for i in range(count)],
    }
    packed = pack({"mode": "trace"}, columns)
    assert (kinds(packed)["inputs"], kinds(packed)["output"]) == ("J", "j")
    page = decoded(packed, e2e_missing, *QUERIES)
    found = {query: m["decoded"] for query, m in page["matches"].items()}
    assert found == {query: m["plain"] for query, m in page["matches"].items()}
    asked = [i for i in range(count) if i % 9 == 8 or (i % 9 == 0 and i % 10 != 3)]
    assert found['"question number 1"'] == asked
    # (1.50 as JavaScript writes it: 1.5)
    assert found["1.50"] == [] and found["d:1.50"] == []
    assert found["d:1.5"] == [i for i in range(count) if i % 9 == 2 and i % 10 != 3]
    assert found["0:zero"] == list(range(3, count, 10))
    assert found["p:c:\\temp"] == [i for i in range(count) if i % 10 != 3]


def test_a_span_text_that_is_not_json_does_not_stop_the_page() -> None:
    """Every call holding the same text that only looks like JSON (a foreign span's
    ``input.value``): the page is written, the text kept as it is for the page to read."""
    columns: dict[str, list[Any]] = {"inputs": [JsonText("{not json")] * 3, "parent": [-1, 0, 0]}
    packed = pack({"mode": "trace"}, columns)
    assert kinds(packed)["inputs"] == "j"
    data = gzip.decompress(base64.b64decode(packed["packed"]))
    assert data.endswith(b"\0{not json")
