"""Ids kept as their bytes (`flow_xray.hexids.HexIds`): the same texts as a list of them, and
the ones a capture's or a compact file's columns hand to the page and the files."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import pytest

from flow_xray import TraceResult, trace
from flow_xray.hexids import HexIds, id_bytes
from flow_xray.render.payload import read_page
from flow_xray.tree import rows
from flow_xray.tree.columns import trace_columns
from flow_xray.tree.model import TraceNode

SPAN_IDS = [1, 0xABC, (1 << 64) - 1, 0x00FF00FF00FF00FF]


def test_texts_are_the_ids_in_hex() -> None:
    """Read one at a time, sliced, iterated or compared, a column is its list of texts."""
    texts = [format(i, "016x") for i in SPAN_IDS]
    ids = HexIds.of_ints(SPAN_IDS)
    assert list(ids) == ids.texts() == texts and len(ids) == 4
    assert [ids[i] for i in range(-4, 4)] == texts + texts
    assert ids[1:3] == texts[1:3] and ids[::-1] == texts[::-1] and ids[3:1] == []
    assert ids == texts and texts == ids and ids != texts[:3] and ids != "x"
    named = ids.with_prefix("n")
    assert named == ["n" + t for t in texts] and named != ids
    assert named.index("n" + texts[2]) == 2 and "n" + texts[3] in named
    assert id_bytes(ids) == (ids.data, 8) and id_bytes(named) is None and id_bytes(texts) is None
    with pytest.raises(IndexError):
        ids[4]
    with pytest.raises(ValueError, match="not ids of 8 bytes"):
        HexIds(b"\x00" * 7, 8)
    with pytest.raises(OverflowError):
        HexIds.of_ints([1 << 64])


@trace
def leaf(i: int) -> int:
    if i % 7 == 3:
        raise KeyError(i)  # failed calls are read row by row
    return i


@trace
def loop(n: int) -> None:
    for i in range(n):
        with contextlib.suppress(KeyError):
            leaf(i)


def _eager(result: TraceResult) -> TraceResult:
    """The same trace with every node built (its columns made from the nodes: texts)."""
    return TraceResult.from_dict(result.to_dict())


@pytest.mark.parametrize("chunk", [64, 1 << 14])
def test_a_capture_hands_its_span_ids_over_as_bytes(
    chunk: int, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A capture's columns keep span and node ids as bytes (read a chunk of rows at a time or
    at once); its page and its files say what the same trace's built nodes say."""
    monkeypatch.setattr(rows, "_CHUNK", chunk)
    with trace.capture() as result:
        loop(300)
        for i in range(50):
            with contextlib.suppress(KeyError):
                leaf(i)  # top-level calls too
    columns = trace_columns(result.roots)
    assert type(columns["span_id"]) is HexIds and type(columns["id"]) is HexIds
    assert columns["id"] == ["n" + s for s in columns["span_id"]]
    eager = _eager(result)
    eager_columns = trace_columns(eager.roots)
    assert type(eager_columns["span_id"]) is list
    assert columns["span_id"] == eager_columns["span_id"]
    assert read_page(result.to_html()) == read_page(eager.to_html())
    for name in ("t.json", "t.fxr"):
        result.save(tmp_path / name)
        assert TraceResult.load(tmp_path / name).to_dict() == eager.to_dict()


def test_a_compact_file_hands_its_span_ids_over_as_bytes(tmp_path: Path) -> None:
    """Read back, a compact file's columns keep the ids as bytes too (past 256 of them; fewer
    are written as a table); its page is the page of the same trace read from JSON."""
    with trace.capture() as result:
        loop(400)
    result.save(tmp_path / "t.fxr")
    result.save(tmp_path / "t.json")
    compact, plain = TraceResult.load(tmp_path / "t.fxr"), TraceResult.load(tmp_path / "t.json")
    columns = trace_columns(compact.roots)
    assert type(columns["span_id"]) is HexIds and type(columns["id"]) is HexIds
    assert columns["span_id"] == trace_columns(plain.roots)["span_id"]
    assert read_page(compact.to_html()) == read_page(plain.to_html())
    compact.save(tmp_path / "again.fxr")  # written from bytes: the same file
    assert TraceResult.load(tmp_path / "again.fxr").to_dict() == plain.to_dict()


def test_a_filled_node_among_kept_ids_is_merged_in_as_text() -> None:
    """A node read before the columns (filled) is merged into a column of ids kept as bytes:
    the column becomes texts, in order."""
    with trace.capture() as result:
        loop(30)
    (root,) = result.roots
    children: Any = root.children
    assert children[5].inputs == {"i": 5}  # fills that node
    columns = trace_columns(result.roots)
    assert columns["span_id"] == trace_columns(_eager(result).roots)["span_id"]


@pytest.mark.parametrize("span_id", ["ABCDEF0123456789", "not an id", None, "00ff00ff00ff00ff"])
def test_a_node_of_another_kind_among_kept_ids(span_id: str | None) -> None:
    """A node built elsewhere among a capture's: its ids are merged in as bytes when they are
    ids of the same kind (lowercase hex, 8 bytes), else the column becomes its texts."""
    with trace.capture() as result:
        loop(30)
    other = TraceNode(id="custom", name="elsewhere", span_id=span_id)
    roots = [*result.roots, other]
    columns = trace_columns(roots)
    expected = [*trace_columns(result.roots)["span_id"], span_id]
    assert columns["span_id"] == expected
    kept = span_id == "00ff00ff00ff00ff"
    assert (type(columns["span_id"]) is HexIds) is kept
    assert type(columns["id"]) is list  # ("custom" is no "n" and a span id)
    assert columns["id"][-1] == "custom"


def test_a_trace_per_top_level_call_hands_its_trace_ids_over_as_bytes(tmp_path: Path) -> None:
    """A script's loop makes a trace per call: the trace ids stay bytes too (16 each), the
    page and files are the built nodes', and a loaded file saves again to the same bytes."""
    with trace.capture() as result:
        for i in range(300):
            with contextlib.suppress(KeyError):
                leaf(i)
    columns = trace_columns(result.roots)
    trace_ids = columns["trace_id"]
    assert type(trace_ids) is HexIds and trace_ids.width == 16
    eager = _eager(result)
    assert trace_ids == trace_columns(eager.roots)["trace_id"]
    assert len(set(trace_ids)) == 300
    assert read_page(result.to_html()) == read_page(eager.to_html())
    result.save(tmp_path / "a.fxr")
    loaded = TraceResult.load(tmp_path / "a.fxr")
    assert loaded.to_dict() == eager.to_dict()
    loaded.save(tmp_path / "b.fxr")
    assert (tmp_path / "a.fxr").read_bytes() == (tmp_path / "b.fxr").read_bytes()
