"""The notebook integration in a real Jupyter kernel: the sample notebook's outputs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from notebook_sample import INDEX, SECRET, outputs

from flow_xray import TraceResult

pytestmark = pytest.mark.slow

Executed = tuple[Path, Any]


def shown(notebook: Any, cell: str) -> list[dict[str, Any]]:
    """The rich outputs of a cell (displays and results), as mime bundles."""
    return [dict(o.data) for o in outputs(notebook, cell) if "data" in o]


def test_the_magic_runs_the_cell_then_shows_its_trace(executed: Executed) -> None:
    """``%%flow_xray``: the cell's own value first, then the trace (one iframe, one line)."""
    _, notebook = executed
    value, trace_output = shown(notebook, "magic")
    assert value["text/plain"].startswith('"answer: What is flow-xray?')
    assert trace_output["text/plain"].startswith("TraceResult: 3 calls, 0 errors")
    assert trace_output["text/html"].count("<iframe sandbox=") == 1
    assert "saved to agent.json" in trace_output["text/html"]


def test_the_saved_trace_is_the_cell_and_its_secrets_are_scrubbed(executed: Executed) -> None:
    """``--save agent.json``: the calls the cell made, with the API key redacted."""
    folder, _ = executed
    text = (folder / "agent.json").read_text(encoding="utf-8")
    assert SECRET not in text
    result = TraceResult.load(folder / "agent.json")
    assert [n.name for n in result] == ["agent", "search", "ask"]
    assert result.roots[0].inputs["api_key"] == "[REDACTED]"
    assert result.totals.total_tokens == 150


def test_a_magic_cell_may_await(executed: Executed) -> None:
    """Top-level ``await`` works under the magic, and the awaited calls are in the trace."""
    _, notebook = executed
    value, trace_output = shown(notebook, "await")
    assert value["text/plain"] == "\"answer: async ['ASYNC']\""
    assert trace_output["text/plain"].startswith("TraceResult: 4 calls")


def test_a_failing_cell_still_shows_its_trace(executed: Executed) -> None:
    """The error shows as usual, and the trace after it records the failure."""
    _, notebook = executed
    (error,) = outputs(notebook, "raises", "error")
    assert (error.ename, error.evalue) == ("ValueError", "no results for 'boom'")
    (trace_output,) = shown(notebook, "raises")
    assert trace_output["text/plain"].startswith("TraceResult: 2 calls, 1 error")


def test_a_result_at_the_end_of_a_cell_shows_inline(executed: Executed) -> None:
    """``result`` as a cell's value: the inline viewer, and a one-line text form."""
    _, notebook = executed
    (bundle,) = shown(notebook, "result")
    assert bundle["text/plain"].startswith("TraceResult: 3 calls")
    assert bundle["text/html"].count("<iframe sandbox=") == 1


def test_a_value_shows_inline(executed: Executed) -> None:
    """A `Value` at the end of a cell shows its graph viewer, its repr as the text form."""
    _, notebook = executed
    (bundle,) = shown(notebook, "value")
    assert bundle["text/plain"].startswith("Value(data=")
    assert bundle["text/html"].count("<iframe sandbox=") == 1


def test_bad_options_are_a_usage_error_and_run_nothing(executed: Executed) -> None:
    """``%%flow_xray --bogus``: IPython's UsageError, the cell not run, no trace shown."""
    _, notebook = executed
    (stream,) = outputs(notebook, "bad")
    assert stream.text == "UsageError: %%flow_xray: unrecognized arguments: --bogus\n"


def test_a_saved_notebook_holds_each_page_once(executed: Executed) -> None:
    """No output repeats a page's data, and the text forms are one line each: a saved
    notebook weighs its pages and little more."""
    folder, notebook = executed
    pages = [
        bundle["text/html"]
        for cell in ("magic", "await", "raises", "result", "value")
        for bundle in shown(notebook, cell)
        if "text/html" in bundle
    ]
    saved = (folder / "sample.ipynb").read_text(encoding="utf-8")
    assert len(pages) == 5 and saved.count('id=\\"fx-data\\"') == 5
    plain = [b["text/plain"] for c in INDEX for b in shown(notebook, c) if "text/html" in b]
    assert all("\n" not in text and len(text) < 120 for text in plain)
    assert len(saved) < 1.05 * sum(map(len, pages))
