"""0.3.x's tracing API, called as a 0.3.6 user would from its changelog and README.

0.3.0: task-local async context, ``TraceResult.error``, ``trace.run(...,
raise_exceptions=True)``, ``@trace(redact={...})``, ``capture_output=False``;
0.3.3: ``@trace(kind=...)``, ``trace.tag``, ``TraceResult.diff(other)`` as an HTML
page, ``start_ms`` in node data; 0.3.5: ``await trace.arun(fn, ...)``. Where we
differ on purpose (the ``[REDACTED]`` marker, no placeholder for an output not
captured) the test says so; each difference is a line of CHANGELOG.md's
"Coming from 0.3.x" table.
"""

from __future__ import annotations

import asyncio
import json
import logging
import pickle
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from flow_xray import TraceNode, TraceResult, trace
from flow_xray.analysis.diff import CallDiff, TraceDiff
from flow_xray.render.payload import read_page
from flow_xray.sdk import provider as flow_provider


@trace
def crash() -> None:
    raise RuntimeError("oops")


@trace
def double(x: int) -> int:
    return x * 2


@trace
async def child(x: int) -> int:
    await asyncio.sleep(0)
    return x + 1


@trace
async def parent(x: int) -> int:
    return await child(x)


@trace
async def acrash() -> None:
    await asyncio.sleep(0)
    raise RuntimeError("oops")


# --- trace.run, result.error, raise_exceptions (0.3.0) -----------------------------------


def test_run_records_the_exception_object_as_error() -> None:
    """``trace.run`` does not raise: ``result.error`` is the exception object itself."""
    result = trace.run(crash)
    assert isinstance(result.error, RuntimeError)
    assert str(result.error) == "oops"
    assert result.error is result.exception
    assert result.return_value is None
    assert result.roots[0].error == "RuntimeError: oops"


def test_error_is_none_when_the_function_returns() -> None:
    """A call that returns leaves ``result.error`` None."""
    result = trace.run(double, 4)
    assert (result.error, result.return_value) == (None, 8)


def test_raise_exceptions_reraises_the_same_exception_after_capture() -> None:
    """``trace.run(fn, raise_exceptions=True)`` raises fn's own exception, and the capture
    is closed by then: the next run collects only its own call."""
    with pytest.raises(RuntimeError, match="oops") as raised:
        trace.run(crash, raise_exceptions=True)
    assert raised.value.__traceback__ is not None
    assert [n.name for n in trace.run(double, 1)] == ["double"]


def test_raise_exceptions_is_not_passed_to_the_function() -> None:
    """``raise_exceptions`` belongs to ``run``; the function's own arguments still pass."""
    result = trace.run(double, x=3, raise_exceptions=True)
    assert result.return_value == 6
    assert result.roots[0].inputs == {"x": 3}


# --- async: task-local context (0.3.0) and trace.arun (0.3.5) ---------------------------


def test_async_gather_keeps_sibling_structure() -> None:
    """Concurrent branches under one parent stay siblings, each with its own output."""

    @trace
    async def branch(label: str, delay: float) -> str:
        await asyncio.sleep(delay)
        return label

    @trace
    async def fan_out() -> list[str]:
        return list(await asyncio.gather(branch("a", 0.01), branch("b", 0.0)))

    root = trace.run(lambda: asyncio.run(fan_out())).roots[0]
    assert [c.output for c in root.children] == ["a", "b"]
    assert all(c.name.endswith("<locals>.branch") and not c.children for c in root.children)


def test_arun_traces_nested_async_calls() -> None:
    """``asyncio.run(trace.arun(parent, 4))``: the DAG and the return value."""
    result = asyncio.run(trace.arun(parent, 4))
    assert result.return_value == 5
    assert [n.name for n in result] == ["parent", "child"]
    assert result.roots[0].children[0].output == 5


def test_arun_works_inside_a_running_event_loop() -> None:
    """The reason ``arun`` exists: ``await`` it from code already in a loop; two at once
    get disjoint results."""

    async def main() -> tuple[TraceResult, TraceResult]:
        first, second = await asyncio.gather(trace.arun(parent, 1), trace.arun(parent, 10))
        return first, second

    first, second = asyncio.run(main())
    assert (first.return_value, second.return_value) == (2, 11)
    assert [len(list(r)) for r in (first, second)] == [2, 2]
    assert first.roots[0].inputs == {"x": 1} and second.roots[0].inputs == {"x": 10}


def test_arun_records_or_reraises_the_exception() -> None:
    """Like ``run``: the error is recorded, or raised again with ``raise_exceptions=True``."""
    result = asyncio.run(trace.arun(acrash))
    assert isinstance(result.error, RuntimeError) and result.roots[0].error == "RuntimeError: oops"
    with pytest.raises(RuntimeError, match="oops"):
        asyncio.run(trace.arun(acrash, raise_exceptions=True))


def test_arun_takes_a_plain_function_too() -> None:
    """A function that returns a value (not an awaitable) is just called."""
    result = asyncio.run(trace.arun(double, 21))
    assert result.return_value == 42


def test_arun_is_reachable_from_the_0_2_0_module_path() -> None:
    """``from flow_xray.trace import trace`` then ``trace.arun`` / ``trace.tag`` work too."""
    import flow_xray.trace as legacy

    result = asyncio.run(legacy.trace.arun(parent, 2))
    assert result.return_value == 3
    assert callable(legacy.trace.tag)


# --- @trace(redact={...}) and capture_output=False (0.3.0) --------------------------------


def test_redact_masks_named_arguments_and_nested_keys() -> None:
    """0.3.0's example: named arguments and nested dict fields are masked, the rest kept.

    The marker is flow-xray's ``[REDACTED]`` (0.3.x wrote ``[redacted]``).
    """

    @trace(redact={"secret", "token"})
    def fn(secret: str, payload: dict[str, object]) -> str:
        return "ok"

    root = trace.run(fn, "top-secret", {"token": "abc", "safe": 1}).roots[0]
    assert root.inputs["secret"] == "[REDACTED]"
    assert root.inputs["payload"] == {"token": "[REDACTED]", "safe": 1}


def test_redact_names_what_default_redaction_would_keep_at_any_depth() -> None:
    """Names no default rule knows (``ssn``, ``customer_email``) are masked in lists of
    dicts, in the output too, whatever their case and separators."""

    @trace(redact=["ssn", "customer_email"])
    def lookup(ssn: str, rows: list[dict[str, object]]) -> dict[str, object]:
        return {"SSN": ssn, "customerEmail": "a@b.c", "matches": rows}

    rows = [{"Customer-Email": "x@y.z", "name": "Ann"}, {"nested": {"ssn": "1"}}]
    root = trace.run(lookup, "123-45-6789", rows).roots[0]
    assert root.inputs == {
        "ssn": "[REDACTED]",
        "rows": [
            {"Customer-Email": "[REDACTED]", "name": "Ann"},
            {"nested": {"ssn": "[REDACTED]"}},
        ],
    }
    assert root.output["SSN"] == root.output["customerEmail"] == "[REDACTED]"
    assert root.output["matches"][0]["name"] == "Ann"
    assert "123-45-6789" not in trace.run(lookup, "123-45-6789", rows).to_json()


def test_redact_names_are_scrubbed_inside_text_too() -> None:
    """A named key written ``ssn=...`` inside a string argument loses its value."""

    @trace(redact={"ssn"})
    def note(text: str) -> None:
        return None

    assert trace.run(note, "caller ssn=123-45-6789 asked").roots[0].inputs == {
        "text": "caller ssn=[REDACTED] asked"
    }


def test_redact_is_for_that_function_only() -> None:
    """Another function's ``ssn`` argument is recorded: the names belong to one function."""

    @trace(redact={"ssn"})
    def masked(ssn: str) -> str:
        return plain(ssn)

    @trace
    def plain(ssn: str) -> str:
        return ssn

    root = trace.run(masked, "123").roots[0]
    assert root.inputs == {"ssn": "[REDACTED]"}
    assert root.children[0].inputs == {"ssn": "123"}


def test_default_redaction_still_applies_beside_redact() -> None:
    """``redact=`` adds to the default rules: ``api_key`` is masked without being named."""

    @trace(redact={"ssn"})
    def call(api_key: str, ssn: str, max_tokens: int) -> None:
        return None

    inputs = trace.run(call, "sk-live", "1", 5).roots[0].inputs
    assert inputs == {"api_key": "[REDACTED]", "ssn": "[REDACTED]", "max_tokens": 5}


def test_redact_applies_to_generators_output() -> None:
    """A generator's yielded items are its output: named keys are masked there too."""

    @trace(redact={"ssn"})
    def people() -> Iterator[dict[str, str]]:
        yield {"name": "Ann", "ssn": "1"}

    result = trace.run(lambda: list(people()))
    assert result.return_value == [{"name": "Ann", "ssn": "1"}]
    assert result.roots[0].output["yielded"] == [{"name": "Ann", "ssn": "[REDACTED]"}]


def test_a_bad_redact_value_is_logged_and_the_function_still_works(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """``redact=5`` is a mistake the decorator logs; the function is traced and runs."""
    with caplog.at_level(logging.WARNING, logger="flow_xray"):

        @trace(redact=5)  # type: ignore[arg-type]
        def fn(x: int) -> int:
            return x

    assert "redact=" in caplog.text
    assert trace.run(fn, 1).roots[0].inputs == {"x": 1}


def test_capture_output_false_keeps_the_value_and_records_no_output() -> None:
    """The caller gets the real value; the trace holds no output (0.3.x: ``"[redacted]"``)."""

    @trace(capture_output=False)
    def fn() -> dict[str, str]:
        return {"plan": "pro-7731"}

    result = trace.run(fn)
    assert result.return_value == {"plan": "pro-7731"}
    assert result.roots[0].output is None
    assert "pro-7731" not in result.to_json()


# --- @trace(kind=...), trace.tag, start_ms (0.3.3) ----------------------------------------


def test_kind_is_recorded() -> None:
    """``@trace(kind="tool")`` gives the node that kind."""

    @trace(kind="tool")
    def search(q: str) -> list[str]:
        return [q]

    assert trace.run(search, "x").roots[0].kind == "tool"


@trace
def tagged_step() -> str:
    trace.tag("cache-miss", "retry", region="eu", attempt=2)
    trace.tag(attempt=3)
    return "done"


def test_tag_attaches_labels_and_key_values_to_the_current_node() -> None:
    """Labels become True, key-value tags their value; a later tag replaces an earlier one."""
    node = trace.run(tagged_step).roots[0]
    assert node.tags == {"cache-miss": True, "retry": True, "region": "eu", "attempt": 3}


def test_tags_are_kept_in_the_json_and_read_back() -> None:
    """``to_dict()`` keeps them (as the node's ``flow_xray.tag.*`` attributes); a saved and
    loaded trace has the same ``tags``."""
    result = trace.run(tagged_step)
    attributes = result.to_dict()["nodes"][0]["attributes"]
    assert attributes["flow_xray.tag.region"] == "eu"
    assert attributes["flow_xray.tag.cache-miss"] is True
    loaded = TraceResult.from_dict(json.loads(result.to_json()))
    assert loaded.roots[0].tags == result.roots[0].tags


def test_tag_outside_a_traced_call_does_nothing() -> None:
    """No current node: nothing happens, nothing raises."""
    trace.tag("orphan", key="value")


def test_tag_values_take_the_value_path() -> None:
    """A tag named like a secret is redacted; a long value is capped like any attribute."""

    @trace
    def fn() -> None:
        trace.tag(token="abc123", note="x" * 100_000)

    tags = trace.run(fn).roots[0].tags
    assert tags["token"] == "[REDACTED]"
    assert len(tags["note"]) < 10_000


def test_a_0_3_file_with_tags_loads_them() -> None:
    """A 0.3.x trace file's node ``tags`` object is read back as ``node.tags``."""
    data = {
        "nodes": [
            {
                "id": "t1",
                "name": "step",
                "inputs": {},
                "output": '"ok"',
                "error": None,
                "start_ms": 0.0,
                "latency_ms": 1.5,
                "children": [],
                "kind": "tool",
                "tags": {"cache-miss": True, "region": "eu"},
            }
        ]
    }
    node = TraceResult.from_dict(data).roots[0]
    assert (node.kind, node.tags) == ("tool", {"cache-miss": True, "region": "eu"})


def test_start_ms_is_in_every_serialized_node() -> None:
    """``start_ms``: each node's start from the start of the trace, children after parents."""

    @trace
    def pipeline() -> int:
        return double(1) + double(2)

    data = trace.run(pipeline).to_dict()
    root = data["nodes"][0]
    first, second = root["children"]
    assert all(isinstance(n["start_ms"], float) for n in (root, first, second))
    assert 0.0 <= root["start_ms"] <= first["start_ms"] <= second["start_ms"]
    assert second["start_ms"] >= first["start_ms"] + first["latency_ms"]


# --- TraceResult.diff(other) as an HTML page (0.3.3) --------------------------------------


@trace
def answer(city: str) -> str:
    return forecast(city)


@trace
def forecast(city: str) -> str:
    return "sunny" if city == "Paris" else "rainy"


@pytest.fixture
def runs() -> tuple[TraceResult, TraceResult]:
    return trace.run(answer, "Paris"), trace.run(answer, "Lyon")


def test_diff_writes_as_a_page_with_write_text(
    runs: tuple[TraceResult, TraceResult], tmp_path: Path
) -> None:
    """``Path("d.html").write_text(a.diff(b))``: a standalone page of the changed calls."""
    a, b = runs
    path = tmp_path / "d.html"
    path.write_text(a.diff(b), encoding="utf-8")
    page = path.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>")
    data = read_page(page)
    assert data["mode"] == "diff"
    assert [c["change"] for c in data["calls"]] == ["changed", "changed"]


def test_diff_writes_with_open_write_and_reads_as_str(
    runs: tuple[TraceResult, TraceResult], tmp_path: Path
) -> None:
    """``open(p, "w").write(a.diff(b))`` and ``str(a.diff(b))`` give the same page."""
    a, b = runs
    path = tmp_path / "d.html"
    with open(path, "w", encoding="utf-8") as fh:
        written = fh.write(a.diff(b))
    text = str(a.diff(b))
    assert type(text) is str and written == len(text)
    assert read_page(text)["summary"] == read_page(path.read_text(encoding="utf-8"))["summary"]
    assert f"{a.diff(b)}" == text and json.loads(json.dumps(a.diff(b))) == text


def test_diff_is_still_the_richer_trace_diff(runs: tuple[TraceResult, TraceResult]) -> None:
    """The same object is our `TraceDiff`: summary, equal, the changed calls, its calls."""
    a, b = runs
    diff = a.diff(b)
    assert isinstance(diff, TraceDiff) and isinstance(diff, str)
    assert not diff.equal
    assert [c.path for c in diff.changed] == [("answer",), ("answer", "forecast")]
    assert all(isinstance(c, CallDiff) for c in diff)  # iterating gives calls, not characters
    assert diff.summary().startswith("2 inputs changed, 2 outputs changed")
    assert a.diff(trace.run(answer, "Paris")).equal


def test_diff_to_html_writes_its_own_page(
    runs: tuple[TraceResult, TraceResult], tmp_path: Path
) -> None:
    """``to_html(path)`` writes the very text; another title renders the page again."""
    a, b = runs
    diff = a.diff(b)
    assert diff.to_html(tmp_path / "d.html") == str(diff)
    assert (tmp_path / "d.html").read_text(encoding="utf-8") == str(diff)
    assert read_page(diff.to_html(title="nightly"))["title"] == "nightly"


def test_export_html_diff_to_html(runs: tuple[TraceResult, TraceResult]) -> None:
    """0.3.x's ``flow_xray.export_html.diff_to_html(old, new, title=...)``: the same page."""
    from flow_xray.export_html import diff_to_html

    a, b = runs
    page = diff_to_html(a, b, title="nightly")
    assert read_page(page)["title"] == "nightly"
    assert read_page(page)["calls"] == read_page(a.diff(b))["calls"]


def test_diff_repr_is_one_line_and_it_pickles(runs: tuple[TraceResult, TraceResult]) -> None:
    """A REPL shows a summary, not two whole traces; the page survives a pickle round trip."""
    a, b = runs
    diff = a.diff(b)
    assert repr(diff).startswith("<TraceDiffPage '2 inputs changed") and "\n" not in repr(diff)
    again = pickle.loads(pickle.dumps(diff))
    assert str(again) == str(diff) and again.summary() == diff.summary()


# --- 0.3.x's data classes ----------------------------------------------------------------


def test_version_is_above_the_last_0_3_release() -> None:
    """``pip install -U flow-xray`` moves a 0.3.6 user onto this release, not away from it."""
    import flow_xray

    assert tuple(int(part) for part in flow_xray.__version__.split(".")) > (0, 3, 6)


def test_trace_node_0_3_positional_and_keyword_forms() -> None:
    """0.3.x's ``TraceNode(name, node_id, inputs, output, error, start_ms, latency_ms,
    children, meta, kind, tags)``; ``kind=None`` (0.3.x's default) is the default kind."""
    node = TraceNode("step", "t1", {"q": 1}, "ok", None, 0.5, 2.0, [], {}, "tool", {"hot": True})
    assert (node.name, node.node_id, node.kind, node.tags) == ("step", "t1", "tool", {"hot": True})
    bare = TraceNode(name="step", node_id="t2", inputs={}, kind=None, tags={"region": "eu"})
    assert (bare.kind, bare.tags) == ("chain", {"region": "eu"})


def test_trace_result_0_3_forms() -> None:
    """``TraceResult(roots, return_value, error)`` by position or keyword; ``.error`` sets."""
    exc = ValueError("bad")
    assert TraceResult([], 1, exc).error is exc
    result = TraceResult([], return_value=2, error=exc)
    assert (result.return_value, result.error, result.ok) == (2, exc, False)
    result.error = None
    assert result.ok
    with pytest.raises(TypeError, match="both"):
        TraceResult([], error=exc, exception=exc)


def test_to_json_with_0_3_indent() -> None:
    """0.3.x's ``to_json(indent=2)`` (its default) gives indented JSON of the same data."""
    result = trace.run(double, 2)
    text = result.to_json(indent=2)
    assert text.startswith('{\n  "version": 1') and json.loads(text) == json.loads(result.to_json())


# --- kept on the wire --------------------------------------------------------------------


def test_tags_and_redaction_reach_the_otlp_export(
    tmp_path: Path, otel_globals: Callable[[], None]
) -> None:
    """Exported OTLP (the SDK's exporter pipeline, OTLP JSON lines) carries the tags as
    ``flow_xray.tag.*`` attributes and the redacted inputs; reading it back keeps both."""
    from flow_xray import configure, load_trace

    @trace(redact={"ssn"})
    def export_me(ssn: str) -> str:
        trace.tag("exported", region="eu")
        return "ok"

    path = tmp_path / "spans.jsonl"
    configure(json_path=path)
    try:
        export_me("123-45-6789")
    finally:
        flow_provider.shutdown(timeout_s=5.0)
    line = path.read_text(encoding="utf-8")
    assert "123-45-6789" not in line
    span = json.loads(line)["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    keys = {a["key"] for a in span["attributes"]}
    assert {"flow_xray.tag.exported", "flow_xray.tag.region"} <= keys
    node = load_trace(path).roots[0]
    assert node.tags == {"exported": True, "region": "eu"}
    assert node.inputs == {"ssn": "[REDACTED]"}
