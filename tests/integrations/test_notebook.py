"""The inline viewer's HTML and the cell magic's parsing, in this process (no kernel)."""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser

import pytest

from flow_xray import TraceResult, Value, trace
from flow_xray.integrations import notebook
from flow_xray.integrations.notebook import (
    CellTrace,
    inline_page,
    trace_html,
    trace_text,
    value_html,
)
from flow_xray.render.payload import read_page


@trace
def double(x: int) -> int:
    return 2 * x


@trace
def fail(api_key: str) -> None:
    raise ValueError("no")


@pytest.fixture
def result() -> TraceResult:
    with trace.capture() as captured:
        double(2)
        with pytest.raises(ValueError):
            fail("sk-proj-abcdefghijklmnopqrstuvwxyz0123456789")
    return captured


class Elements(HTMLParser):
    """Every start tag with its attributes, in document order."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def elements(fragment: str) -> list[tuple[str, dict[str, str | None]]]:
    parser = Elements()
    parser.feed(fragment)
    return parser.tags


def test_the_page_goes_into_one_sandboxed_frame_unchanged(result: TraceResult) -> None:
    """One ``<iframe sandbox srcdoc>`` holding exactly the page ``to_html`` writes."""
    fragment = trace_html(result, title="run")
    frames = [attrs for tag, attrs in elements(fragment) if tag == "iframe"]
    assert len(frames) == 1
    (frame,) = frames
    assert frame["sandbox"] == "allow-scripts allow-downloads"
    assert frame["srcdoc"] == result.to_html(title="run")
    assert f"height:{notebook.HEIGHT}px" in str(frame["style"])


def test_the_output_holds_one_copy_of_the_data(result: TraceResult) -> None:
    """The data is embedded once (in the frame), and the output is barely bigger than the page."""
    fragment = trace_html(result)
    page = result.to_html()
    unescaped = html.unescape(fragment)
    assert unescaped.count('id="fx-data"') == 1
    assert len(fragment) < 1.12 * len(page)  # &#10; for each newline, and the link
    assert read_page(page)["nodes"][0]["name"] == "double"


def test_the_output_has_no_ids_and_the_same_text_every_time(result: TraceResult) -> None:
    """Nothing random or counted: showing a result twice gives the same notebook text."""
    first, second = trace_html(result), trace_html(result)
    assert first == second
    outer = first.split("srcdoc=", 1)[0] + first.rsplit("</iframe>", 1)[1]
    assert " id=" not in outer


def test_the_full_size_link_waits_for_the_script() -> None:
    """The link is hidden until the output's script points it at a blob: URL (no data: copy)."""
    fragment = inline_page("<!DOCTYPE html><p>page</p>", "t", note="saved to t.html")
    (link,) = [attrs for tag, attrs in elements(fragment) if tag == "a"]
    assert "href" not in link and link["target"] == "_blank"
    assert "display:none" in str(link["style"])
    assert "URL.createObjectURL" in fragment and "data:text/html" not in fragment
    assert "saved to t.html" in fragment


def test_a_title_cannot_break_out_of_the_output() -> None:
    """Title and note are escaped: they show as text, never as markup."""
    fragment = inline_page("<p>x</p>", '"><script>alert(1)</script>', note="<b>n</b>")
    assert "<script>alert(1)" not in fragment and "<b>n</b>" not in fragment


def test_trace_result_shows_inline_through_the_bridge(result: TraceResult) -> None:
    """``_repr_html_`` is the inline viewer; IPython's text form is one summary line."""
    from IPython.lib.pretty import pretty

    assert result._repr_html_() == trace_html(result)
    assert pretty(result) == trace_text(result) == f"TraceResult: {result.totals.summary()}"


def test_secrets_are_scrubbed_in_the_inline_page(result: TraceResult) -> None:
    """The inline page holds what the trace holds: credentials already redacted."""
    frame = next(attrs for tag, attrs in elements(trace_html(result)) if tag == "iframe")
    data = read_page(str(frame["srcdoc"]))
    inputs = next(n for n in data["nodes"] if n["name"] == "fail")["inputs"]
    assert "sk-proj" not in str(inputs) and "[REDACTED]" in str(inputs)


def test_a_value_shows_its_graph_and_keeps_its_gradients() -> None:
    """``Value._repr_html_`` draws the graph with the backward stepper; no grad changes."""
    a = Value(2.0, label="a")
    b = Value(-3.0, label="b")
    out = (a * b).tanh()
    out.label = "out"
    a.grad, b.grad = 0.25, 7.0
    fragment = out._repr_html_()
    assert fragment is not None and fragment == value_html(out)
    assert (a.grad, b.grad, out.grad) == (0.25, 7.0, 0.0)
    frame = next(attrs for tag, attrs in elements(fragment) if tag == "iframe")
    assert frame["title"] == "out"
    assert read_page(str(frame["srcdoc"]))["mode"] == "graph"


def test_a_huge_value_is_not_drawn_inline(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past `MAX_VALUE_NODES` the notebook falls back to the text repr (None here)."""
    monkeypatch.setattr(notebook, "MAX_VALUE_NODES", 3)
    x = Value(1.0)
    assert value_html(x * 2 + 1) is None
    assert value_html(x * 2) is not None


# -- %%flow_xray: which cells it takes ------------------------------------------------


@pytest.mark.parametrize(
    ("line", "options"),
    [
        ("%%flow_xray", (None, None)),
        ("%%flow_xray  ", (None, None)),
        ('%%flow_xray --title "agent run" --save out.json', ("agent run", "out.json")),
        ("%%flow_xray --save=a.html", (None, "a.html")),
    ],
)
def test_the_magic_line_is_stripped_so_the_cell_runs_as_written(
    line: str, options: tuple[str | None, str | None]
) -> None:
    """A valid ``%%flow_xray`` line goes; the rest of the cell is left to IPython as is."""
    cells = CellTrace(ipython=None)
    assert cells.strip([line + "\n", "await agent()\n"]) == ["await agent()\n"]
    parsed = notebook._magic_options(line)
    assert parsed is not None and (parsed.title, parsed.save) == options


@pytest.mark.parametrize(
    "line",
    ["%%flow_xray --bogus", '%%flow_xray --title "unclosed', "%%flow_xrayx", "%%time", "x = 1"],
)
def test_other_lines_and_bad_options_are_left_alone(line: str) -> None:
    """A bad option line stays for IPython to hand to the magic (which reports it)."""
    cells = CellTrace(ipython=None)
    assert cells.strip([line + "\n", "1\n"]) == [line + "\n", "1\n"]


def test_the_magic_documents_itself() -> None:
    """``%%flow_xray?`` prints the options and an example."""
    doc = str(CellTrace.__doc__)
    assert re.search(r"--title TEXT.*--save PATH", doc)
    assert "Example::" in doc
