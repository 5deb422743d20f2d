"""The compact file's columns: each form gives back exactly the values it was given."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from flow_xray.formats.columnar import encode_column
from flow_xray.formats.columnar_read import Pieces
from flow_xray.jsontext import JsonText

IDS = [f"{n * 0x9E3779B97F4A7C15 % 2**64:016x}" for n in range(1, 600)]


def _round_trip(*chunks: list[Any]) -> tuple[list[str], Pieces]:
    """Each chunk encoded as the writer does, read back into one column."""
    column, encodings = Pieces(), []
    for values in chunks:
        encoding, params, blobs = encode_column(values)
        encodings.append(encoding)
        column.extend(encoding, params, blobs, len(values))
    return encodings, column


@pytest.mark.parametrize(
    ("values", "encoding"),
    [
        ([0.5, None, -0.0, 1e300, 0.1], "float"),
        (IDS, "hex"),
        (["n" + i for i in IDS[:-1]] + [None], "hex"),
        (["ok", "error", "ok", None], "table"),
        ([True, False, None], "table"),
        ([3, 3, None, 2**70], "table"),
        ([i.upper() for i in IDS], "json"),  # not lowercase: hex would change them
        ([{"a": [1, 2]}, "text", None, 5, 1.5, True, [None]], "json"),
    ],
)
def test_values_come_back_as_they_were(values: list[Any], encoding: str) -> None:
    """Each row's value is the value written, of the same type."""
    encodings, column = _round_trip(values)
    assert encodings == [encoding]
    back = [column.value(row) for row in range(len(values))]
    assert back == values
    assert [type(v) for v in back] == [type(v) for v in values]


def test_a_float_column_keeps_nan_infinities_and_the_sign_of_zero() -> None:
    """NaN, both infinities and -0.0 survive (the reader refuses odd times, not this)."""
    _, column = _round_trip([math.inf, math.nan, -math.inf, -0.0])
    back = [column.value(row) for row in range(4)]
    assert back[0] == math.inf and math.isnan(back[1]) and back[2] == -math.inf
    assert math.copysign(1, back[3]) == -1


def test_json_objects_are_handed_to_a_page_as_their_text() -> None:
    """``many(raw=True)``: an object or array as its `JsonText`, a scalar decoded."""
    values = [JsonText('{"x": 1}'), {"y": [2]}, 7, "s"] * 200
    _, column = _round_trip(values)
    assert column.many(range(4), raw=True) == ['{"x": 1}', '{"y": [2]}', 7, "s"]
    assert type(column.many([0], raw=True)[0]) is JsonText
    assert column.many(range(4)) == [{"x": 1}, {"y": [2]}, 7, "s"]


def test_chunks_written_in_different_forms_read_as_one_column() -> None:
    """A column that is a table in one chunk and JSON texts in the next reads in order."""
    first, second = ["a", "b"] * 10, [{"k": i} for i in range(40)]
    encodings, column = _round_trip(first, second, first)
    assert encodings == ["table", "json", "table"]
    assert column.many(range(80)) == first + second + first


def test_each_value_read_is_a_new_object() -> None:
    """Rows written as one shared text are decoded anew each time they are read."""
    shared = {"k": [1]}
    _, column = _round_trip([shared] * 50)
    one, two = column.value(0), column.value(1)
    assert one == two == shared and one is not two


def test_lone_surrogates_are_kept() -> None:
    """A string UTF-8 cannot encode (a lone surrogate) comes back unchanged, in any form."""
    values = ["a\udc80"] * 3 + [f"b\udc80{i}" for i in range(600)]
    _, column = _round_trip(values)
    assert column.many(range(len(values))) == values


def test_json_texts_over_several_chunks_read_by_any_rows() -> None:
    """Chunks of JSON texts (each kept as the string it was written as, with where each text
    ends) read the same row by row, whole, and picked in any order: across chunks, empty
    strings and non-ASCII texts included; kinds, bounds and lengths as the texts say."""
    chunks = [
        [{"i": i, "s": "é" * (i % 3)} for i in range(37)],
        ["", "x", 2**70, -1.5, None, [1, "\u2028"], {"a": ""}, *(f"t{i}" for i in range(30))],
        [{"i": i} for i in range(300, 330)],
    ]
    encodings, column = _round_trip(*chunks)
    assert encodings == ["json", "json", "json"]
    values = [v for chunk in chunks for v in chunk]
    count = len(values)
    assert [column.value(row) for row in range(count)] == values
    assert column.many(range(count)) == values
    picked = [count - 1, 0, 40, 36, 37, 71, 5, 71]
    assert column.many(picked) == [values[row] for row in picked]
    assert column.many(iter(picked)) == [values[row] for row in picked]
    assert column.kinds() == {"dict", "str", "int", "float", "NoneType", "list"}
    (texts,) = column.columns()  # one column of three chunks
    assert texts.number_bounds() == (-1.5, float(2**70))
    assert column.longest() == max(
        len(json.dumps(v, separators=(",", ":"), ensure_ascii=False)) for v in values
    )


def test_table_codes_widen_as_chunks_add_to_the_table() -> None:
    """A table column keeps its codes as narrow as its table allows: one byte each while it
    holds at most 256 values, two once a later chunk's table takes it past that."""
    first = [f"a{i}" for i in range(200)] * 4
    second = [f"b{i}" for i in range(200)] * 4
    encodings, column = _round_trip(first)
    (table,) = column.columns()
    assert encodings == ["table"] and table.codes.typecode == "B"  # type: ignore[attr-defined]
    encodings, column = _round_trip(first, second, first)
    assert encodings == ["table"] * 3
    (table,) = column.columns()
    assert table.codes.typecode == "H"  # type: ignore[attr-defined]
    assert column.many(range(2400)) == first + second + first
    assert [column.value(row) for row in (0, 799, 800, 1599, 1600, 2399)] == [
        "a0", "a199", "b0", "b199", "a0", "a199",
    ]  # fmt: skip


def test_a_columns_reader_reads_as_value_does() -> None:
    """`Pieces.reader()`: the one column's own reader when every chunk was written alike,
    else the column's; both read every row as `value` does."""
    alike = [[{"k": i} for i in range(40)], [{"k": -i} for i in range(40)]]
    mixed = [["a", "b"] * 10, [{"k": i} for i in range(40)]]
    for chunks, pieces in ((alike, 1), (mixed, 2)):
        _, column = _round_trip(*chunks)
        assert len(column.columns()) == pieces
        read = column.reader()
        assert [read(row) for row in range(column.rows)] == [v for c in chunks for v in c]
