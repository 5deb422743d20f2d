"""The compact trace file (``.fxr``): what ``save`` writes, ``load`` and ``flow-xray view`` read."""

from __future__ import annotations

import contextlib
import json
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from flow_xray import TraceNode, TraceResult, trace
from flow_xray.cli import cli
from flow_xray.errors import TraceFileError
from flow_xray.formats.compact import MAGIC, compact_chunks
from flow_xray.formats.json_stream import json_chunks
from flow_xray.render.payload import read_page


def _varied() -> TraceResult:
    """A capture with most of what a node can hold: errors raised and handled, metadata,
    LLM usage, tags, an unfinished generator, odd values, several roots."""

    @trace
    def leaf(i: int, text: str = "x") -> dict[str, Any]:
        return {"i": i, "pair": (i, -i), "text": text, "none": None}

    @trace(kind="llm")
    def ask(prompt: str) -> str:
        trace.annotate(model="gpt-4o-mini", prompt_tokens=12, completion_tokens=3, user="u1")
        return prompt.upper()

    @trace
    def fails(n: int) -> None:
        raise ValueError(f"bad {n}")

    @trace
    def numbers() -> Iterator[int]:
        yield from range(5)

    @trace(kind="agent")
    def run(n: int) -> float:
        for i in range(n):
            leaf(i, text="é\u2028" * (i % 3))
        ask("hello")
        with contextlib.suppress(ValueError):
            fails(n)
        for value in numbers():
            if value == 2:
                break
        return 1.5

    with trace.capture() as result:
        run(30)
        leaf(-1)
        with contextlib.suppress(ValueError):
            fails(0)
    return result


def _chunked(result: TraceResult, path: Path, rows: int) -> None:
    path.write_bytes(b"".join(compact_chunks(result, chunk_rows=rows)))


def test_a_saved_capture_loads_back_equal(tmp_path: Path) -> None:
    """``save("t.fxr")`` then ``load`` gives an equal trace: every field of every node."""
    result = _varied()
    result.save(tmp_path / "t.fxr")
    loaded = TraceResult.load(tmp_path / "t.fxr")
    assert loaded == result
    assert loaded.to_dict() == result.to_dict()


def test_the_compact_file_reads_as_the_json_file_does(tmp_path: Path) -> None:
    """Whatever the JSON file changes on the way (tuples become lists), the compact does too."""
    node = TraceNode(
        id="custom-id",
        name="odd",
        inputs={"t": (1, 2), "s": {3}, "k": {"nested": [1.5, None, True]}},
        output=("a", 1),
        latency_ms=2,
        start_ms=0,
        meta={"model": "m", "prompt_tokens": 1},
        attributes={"x": 1, "y": [1, "2"]},
        events=[{"name": "e", "time_ms": 1.0, "attributes": {}}],
        children=[TraceNode(id="c", name="child", output=float("inf"), latency_ms=None)],
    )
    result = TraceResult(roots=[node], dropped_spans=3)
    result.save(tmp_path / "t.json")
    result.save(tmp_path / "t.fxr")
    from_json = TraceResult.load(tmp_path / "t.json")
    from_compact = TraceResult.load(tmp_path / "t.fxr")
    assert from_compact == from_json
    assert from_compact.dropped_spans == 3


def test_a_file_of_many_chunks_loads_back_equal(tmp_path: Path) -> None:
    """Chunks of 7 calls (each column written in the form its chunk's values need)."""
    result = _varied()
    _chunked(result, tmp_path / "t.fxr", 7)
    assert TraceResult.load(tmp_path / "t.fxr") == result


@pytest.mark.parametrize("rows", [None, 7])
def test_nodes_filled_from_the_file_equal_the_capture(tmp_path: Path, rows: int | None) -> None:
    """Each node of a loaded file, filled by reading a detail (from its row's values, not
    built whole), has every field of the captured node: one chunk, and chunks of 7 (columns
    of several forms)."""
    result = _varied()
    if rows is None:
        result.save(tmp_path / "t.fxr")
    else:
        _chunked(result, tmp_path / "t.fxr", rows)
    loaded = TraceResult.load(tmp_path / "t.fxr")
    captured, read = list(result), list(loaded)
    assert [node.inputs for node in read] == [node.inputs for node in captured]  # fills them
    assert [n.to_dict() for n in read] == [n.to_dict() for n in captured]
    assert loaded == result


def test_the_page_of_a_loaded_file_is_the_page_of_the_capture(tmp_path: Path) -> None:
    """``to_html`` of the loaded trace shows every call exactly as the capture's page does."""
    result = _varied()
    _chunked(result, tmp_path / "t.fxr", 16)
    loaded = TraceResult.load(tmp_path / "t.fxr")
    assert read_page(loaded.to_html()) == read_page(result.to_html())


def test_the_format_is_told_by_content_not_by_name(tmp_path: Path) -> None:
    """``format="compact"`` under a ``.json`` name still loads; a ``.fxr`` name picks compact."""
    result = _varied()
    result.save(tmp_path / "t.json", format="compact")
    assert (tmp_path / "t.json").read_bytes().startswith(MAGIC)
    assert TraceResult.load(tmp_path / "t.json") == result
    result.save(tmp_path / "t.FXR")
    assert (tmp_path / "t.FXR").read_bytes().startswith(MAGIC)


def test_a_json_name_still_gets_the_json_envelope(tmp_path: Path) -> None:
    """``save("t.json")`` writes version 1 as before: ``json.load`` reads it (0.2.0/0.3.x code)."""
    result = _varied()
    result.save(tmp_path / "t.json")
    envelope = json.loads((tmp_path / "t.json").read_text("utf-8"))
    assert envelope["version"] == 1
    assert [n["name"] for n in envelope["nodes"]] == [r.name for r in result.roots]


def test_an_unknown_format_name_is_refused(tmp_path: Path) -> None:
    """``format=`` takes "json" or "compact"; anything else is a ValueError, no file made."""
    with pytest.raises(ValueError, match="compact"):
        _varied().save(tmp_path / "t.fxr", format="parquet")
    assert not (tmp_path / "t.fxr").exists()


def test_values_are_decoded_anew_for_each_node(tmp_path: Path) -> None:
    """Nodes whose values were one text in the file get their own objects: changing one
    node's attributes changes no other node."""
    result = _varied()
    result.save(tmp_path / "t.fxr")
    leaves = TraceResult.load(tmp_path / "t.fxr").find_all("leaf")
    leaves[0].attributes["changed"] = True
    assert "changed" not in leaves[1].attributes
    assert leaves[1].attributes == result.find_all("leaf")[1].attributes


def test_the_file_is_small(tmp_path: Path) -> None:
    """Two thousand small calls: a few dozen bytes each (the JSON envelope: hundreds)."""

    @trace
    def step(i: int) -> int:
        return i * 2

    with trace.capture() as result:
        for i in range(2_000):
            step(i)
    result.save(tmp_path / "t.fxr")
    result.save(tmp_path / "t.json")
    compact, whole = (tmp_path / "t.fxr").stat().st_size, (tmp_path / "t.json").stat().st_size
    assert compact / 2_000 < 60
    assert compact * 5 < whole


def test_an_empty_trace_round_trips(tmp_path: Path) -> None:
    """No calls: a file that loads as an empty trace."""
    TraceResult().save(tmp_path / "t.fxr")
    assert TraceResult.load(tmp_path / "t.fxr") == TraceResult()


# --- files that are not what they should be ------------------------------------------


def _frames(data: bytes) -> list[bytes]:
    """The inflated frames of a compact file."""
    frames, at = [], len(MAGIC)
    while at < len(data):
        size = int.from_bytes(data[at : at + 4], "little")
        frames.append(zlib.decompress(data[at + 4 : at + 4 + size]))
        at += 4 + size
    return frames


def _packed(frames: list[bytes]) -> bytes:
    out = [MAGIC]
    for frame in frames:
        body = zlib.compress(frame)
        out += [len(body).to_bytes(4, "little"), body]
    return b"".join(out)


def _with_header(frame: bytes, **changes: Any) -> bytes:
    size = int.from_bytes(frame[:4], "little")
    header = {**json.loads(frame[4 : 4 + size]), **changes}
    head = json.dumps(header).encode("ascii")
    return len(head).to_bytes(4, "little") + head + frame[4 + size :]


@pytest.fixture
def saved(tmp_path: Path) -> bytes:
    _chunked(_varied(), tmp_path / "good.fxr", 16)
    return (tmp_path / "good.fxr").read_bytes()


@pytest.mark.parametrize("keep", [3, 9, 200, -300, -1])
def test_a_file_cut_short_is_one_error(tmp_path: Path, saved: bytes, keep: int) -> None:
    """A file missing its end (a copy interrupted) says it was cut short."""
    path = tmp_path / "cut.fxr"
    path.write_bytes(saved[:keep])
    with pytest.raises(TraceFileError, match=r"cut short|damaged"):
        TraceResult.load(path)


def test_a_damaged_byte_is_one_error(tmp_path: Path, saved: bytes) -> None:
    """A flipped byte inside a frame fails its checksum: an error naming the damage."""
    damaged = bytearray(saved)
    damaged[len(saved) // 2] ^= 0x55
    path = tmp_path / "bad.fxr"
    path.write_bytes(bytes(damaged))
    with pytest.raises(TraceFileError, match="damaged"):
        TraceResult.load(path)


def test_a_file_of_another_format_version_says_so(tmp_path: Path, saved: bytes) -> None:
    """A newer writer's file names its version and writer, and the version this one reads."""
    frames = _frames(saved)
    frames[0] = _with_header(frames[0], version=2, writer="flow-xray 9.0.0")
    path = tmp_path / "new.fxr"
    path.write_bytes(_packed(frames))
    with pytest.raises(TraceFileError, match=r"version 2 \(written by flow-xray 9\.0\.0\).*1"):
        TraceResult.load(path)


def test_a_column_of_the_wrong_type_is_refused_when_loaded(tmp_path: Path) -> None:
    """A file claiming ``inputs`` that are not objects is refused at load, not when read."""
    result = TraceResult(roots=[TraceNode(id="a", name="a", inputs={"x": 1})])
    frames = _frames(b"".join(compact_chunks(result)))
    frames[1] = frames[1].replace(b'{"x": 1}', b"[1, 2.0]")
    path = tmp_path / "odd.fxr"
    path.write_bytes(_packed(frames))
    with pytest.raises(TraceFileError, match="'inputs' holds list values"):
        TraceResult.load(path)


def test_a_parent_after_its_child_is_refused(tmp_path: Path) -> None:
    """Parents come before their children (pre-order): a file where not is damaged."""
    result = TraceResult(
        roots=[TraceNode(id="a", name="a", children=[TraceNode(id="b", name="b")])]
    )
    frames = _frames(b"".join(compact_chunks(result)))
    size = int.from_bytes(frames[1][:4], "little")
    parents = (1).to_bytes(8, "little", signed=True) + (1).to_bytes(8, "little", signed=True)
    start = 4 + size
    frames[1] = frames[1][:start] + parents + frames[1][start + 16 :]
    path = tmp_path / "loop.fxr"
    path.write_bytes(_packed(frames))
    with pytest.raises(TraceFileError, match="parent"):
        TraceResult.load(path)


def test_view_of_a_damaged_file_is_one_error_line(tmp_path: Path, saved: bytes) -> None:
    """``flow-xray view`` of a cut file: exit 2, one ``error:`` line, no traceback."""
    path = tmp_path / "cut.fxr"
    path.write_bytes(saved[: len(saved) // 2])
    outcome = CliRunner().invoke(cli, ["view", str(path), "--html", str(tmp_path / "v.html")])
    assert outcome.exit_code == 2
    lines = outcome.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and "cut short" in lines[0]


def test_view_renders_a_compact_file(tmp_path: Path) -> None:
    """``flow-xray view t.fxr`` writes the page of the saved trace."""
    result = _varied()
    result.save(tmp_path / "t.fxr")
    html = str(tmp_path / "t.html")
    outcome = CliRunner().invoke(cli, ["view", str(tmp_path / "t.fxr"), "--html", html])
    assert outcome.exit_code == 0, outcome.output
    page = read_page((tmp_path / "t.html").read_text("utf-8"))
    assert [n["name"] for n in page["nodes"]][:2] == [n.name for n in list(result)[:2]]


# --- the JSON envelope, streamed ------------------------------------------------------


@pytest.mark.parametrize("rows", [1, 5, 1 << 16])
def test_the_streamed_json_file_holds_what_to_json_gives(rows: int) -> None:
    """The JSON ``save`` writes a chunk of calls at a time; parsed, it is ``to_json()``'s text."""
    result = _varied()
    streamed = "".join(json_chunks(result, chunk_rows=rows))
    assert json.loads(streamed) == json.loads(result.to_json())


def test_the_streamed_json_shows_lone_surrogates_as_to_json_does(tmp_path: Path) -> None:
    """A value with a lone surrogate: written as its visible escape, as ``to_json`` does."""

    @trace
    def named(path: str) -> str:
        return path

    with trace.capture() as result:
        named("report-\udc80.csv")
    result.save(tmp_path / "t.json")
    text = (tmp_path / "t.json").read_text("utf-8")
    assert json.loads(text) == json.loads(result.to_json())
    assert "report-\\\\udc80.csv" in text


def test_an_empty_trace_saves_as_json_with_no_nodes(tmp_path: Path) -> None:
    """No calls: ``{"version": 1, ..., "nodes": []}``."""
    TraceResult().save(tmp_path / "t.json")
    assert json.loads((tmp_path / "t.json").read_text("utf-8"))["nodes"] == []


def test_calls_of_two_captures_in_one_trace_round_trip(tmp_path: Path) -> None:
    """A trace whose roots come from two captures (their spans in two stores) saves whole."""
    first, second = _varied(), _varied()
    both = TraceResult(roots=[*first.roots, *second.roots])
    both.save(tmp_path / "t.fxr")
    assert TraceResult.load(tmp_path / "t.fxr") == both


def test_a_loaded_file_saves_again_to_the_same_bytes(tmp_path: Path) -> None:
    """Loading and saving again writes the same file: nothing is lost or changed on the way."""
    _varied().save(tmp_path / "a.fxr")
    TraceResult.load(tmp_path / "a.fxr").save(tmp_path / "b.fxr")
    assert (tmp_path / "a.fxr").read_bytes() == (tmp_path / "b.fxr").read_bytes()


@pytest.mark.parametrize("name", ["t.json", "t.fxr"])
def test_a_second_run_of_a_chat_call_keeps_its_messages(tmp_path: Path, name: str) -> None:
    """Two captures of one chat call with the same arguments: each saved file shows the
    messages (promoting them once must not take them from the other run's calls)."""

    @trace(kind="llm")
    def answer(question: str) -> str:
        return "Paris"

    runs = []
    for _ in range(2):
        with trace.capture() as result:
            answer("where to go")
        runs.append(result)
    for run in runs:
        run.save(tmp_path / name)
        (node,) = TraceResult.load(tmp_path / name).roots
        assert node.inputs["messages"] == [{"role": "user", "content": "where to go"}]


def test_diff_compares_a_compact_file_with_a_json_one(tmp_path: Path) -> None:
    """``flow-xray diff a.fxr a.json`` of one run: the two files hold the same trace (exit 0)."""
    result = _varied()
    result.save(tmp_path / "a.fxr")
    result.save(tmp_path / "a.json")
    outcome = CliRunner().invoke(cli, ["diff", str(tmp_path / "a.fxr"), str(tmp_path / "a.json")])
    assert outcome.exit_code == 0, outcome.output


@pytest.mark.parametrize("latency", [float("nan"), 1e300, float("-inf")])
def test_a_time_no_span_can_have_is_refused_as_the_json_file_refuses_it(
    tmp_path: Path, latency: float
) -> None:
    """NaN or an out-of-range ``latency_ms``: `TraceFileError`, from either file."""
    result = TraceResult(roots=[TraceNode(id="a", name="a", latency_ms=latency)])
    for name in ("t.fxr", "t.json"):
        result.save(tmp_path / name)
        with pytest.raises(TraceFileError, match="time"):
            TraceResult.load(tmp_path / name)


def test_any_flipped_byte_or_cut_gives_an_error_or_a_trace(tmp_path: Path) -> None:
    """A fixed file damaged at each of many places: loading raises `TraceFileError` (or,
    where the damage still reads, gives a trace), never any other exception."""
    leaves = [
        TraceNode(id=f"n{i:016x}", name="leaf", span_id=f"{i:016x}", inputs={"i": i}, output=i)
        for i in range(1, 40)
    ]
    root = TraceNode(id="root", name="root", latency_ms=1.5, children=leaves)
    data = b"".join(compact_chunks(TraceResult(roots=[root]), chunk_rows=16))
    path = tmp_path / "bad.fxr"
    for at in [*range(0, 80), *range(80, len(data), 7)]:
        for damaged in (data[:at] + bytes([data[at] ^ 0xFF]) + data[at + 1 :], data[:at]):
            path.write_bytes(damaged)
            with contextlib.suppress(TraceFileError):
                TraceResult.load(path)


def test_node_ids_are_stored_once_with_their_span_ids(tmp_path: Path, saved: bytes) -> None:
    """flow-xray's node ids (``n`` and the span id) are written as a copy of the span ids;
    a file claiming to copy any other column is refused."""
    frames = _frames(saved)
    size = int.from_bytes(frames[1][:4], "little")
    columns = json.loads(frames[1][4 : 4 + size])["columns"]
    assert ["id", "copy", {"of": "span_id", "prefix": "n"}, 0] in columns
    for column in columns:
        column[2] = {"of": "name", "prefix": "n"} if column[0] == "id" else column[2]
    frames[1] = _with_header(frames[1], columns=columns)
    path = tmp_path / "odd.fxr"
    path.write_bytes(_packed(frames))
    with pytest.raises(TraceFileError, match="copies another"):
        TraceResult.load(path)


def test_totals_of_a_loaded_file_of_many_roots_decode_no_node(tmp_path: Path) -> None:
    """A file of top-level calls (a root each): its totals read the roots' times from the
    file's columns, so no node is decoded, and they are the saved trace's."""

    @trace
    def step(i: int) -> int:
        return i * 2

    with trace.capture() as result:
        for i in range(50):
            step(i)
    _chunked(result, tmp_path / "t.fxr", 16)
    loaded = TraceResult.load(tmp_path / "t.fxr")
    totals = loaded.totals
    assert all(root._source is not None for root in loaded.roots)  # type: ignore[attr-defined]
    assert totals == result.totals
