"""`flow-xray view`: saved traces, in either format, become the HTML viewer."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cli_support import invoke

from flow_xray.render.payload import read_page
from flow_xray.tree.model import TraceNode, TraceResult


def otlp_span(
    trace_id: str, span_id: str, name: str, parent: str | None, start: int, error: bool
) -> dict[str, Any]:
    span: dict[str, Any] = {
        "traceId": trace_id,
        "spanId": span_id,
        "name": name,
        "kind": 1,
        "startTimeUnixNano": str(1_700_000_000_000_000_000 + start),
        "endTimeUnixNano": str(1_700_000_000_000_000_000 + start + 5_000_000),
        "status": {"code": 2, "message": "RuntimeError: down"} if error else {},
    }
    if parent:
        span["parentSpanId"] = parent
    return span


def otlp_document(n: int = 0) -> dict[str, Any]:
    """One Collector-style OTLP JSON object: a parent span and a failing child (trace ``n``)."""
    trace_id = f"5b8efff798038103d269b633813fc6{n:02x}"
    parent, child = f"eee19b7ec3c1b1{n:02x}", f"fee19b7ec3c1b1{n:02x}"
    spans = [
        otlp_span(trace_id, parent, "checkout", None, 0, False),
        otlp_span(trace_id, child, "charge_card", parent, 1_000_000, True),
    ]
    return {
        "resourceSpans": [
            {
                "resource": {
                    "attributes": [{"key": "service.name", "value": {"stringValue": "shop"}}]
                },
                "scopeSpans": [{"scope": {"name": "shop"}, "spans": spans}],
            }
        ]
    }


def saved_trace(path: Path) -> None:
    child = TraceNode(id="n2", name="fetch", status="error", error="OSError: gone", latency_ms=2.0)
    root = TraceNode(id="n1", name="job", latency_ms=5.0, children=[child])
    TraceResult(roots=[root]).save(path)


def test_flow_xray_json_renders_to_stem_html(in_tmp: Path) -> None:
    """A flow-xray JSON trace renders to <stem>.html in the working directory."""
    saved_trace(in_tmp / "run1.json")
    result = invoke("view", "run1.json")
    assert result.exit_code == 0, result.output
    assert (
        (in_tmp / "run1.html").read_text(encoding="utf-8").lstrip().lower().startswith("<!doctype")
    )


def test_summary_counts_nodes_and_errors(in_tmp: Path) -> None:
    """The summary line names the output and the trace's call and error counts."""
    saved_trace(in_tmp / "run1.json")
    result = invoke("view", "run1.json", "--html", "page.html")
    assert result.stderr.startswith("flow-xray: wrote page.html — 2 calls, 1 error (handled), ")


def test_otlp_json_lines_render(in_tmp: Path) -> None:
    """OTLP JSON lines (one resourceSpans object per line) are detected and rendered as a tree."""
    lines = [json.dumps(otlp_document(n)) for n in range(2)]
    (in_tmp / "spans.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = invoke("view", "spans.jsonl")
    assert result.exit_code == 0, result.output
    assert (in_tmp / "spans.html").exists()
    assert "— 4 calls, 2 errors (handled), " in result.stderr


def test_pretty_printed_otlp_object_renders(in_tmp: Path) -> None:
    """A single OTLP JSON object spread over several lines is read as one document."""
    (in_tmp / "spans.json").write_text(json.dumps(otlp_document(), indent=2), encoding="utf-8")
    result = invoke("view", "spans.json")
    assert result.exit_code == 0, result.output
    assert "— 2 calls, 1 error (handled), " in result.stderr


def test_view_output_is_the_saved_trace(in_tmp: Path) -> None:
    """The viewer embeds the saved trace's nodes (names appear in the page data)."""
    saved_trace(in_tmp / "run1.json")
    invoke("view", "run1.json")
    html = (in_tmp / "run1.html").read_text(encoding="utf-8")
    names = {node["name"] for node in read_page(html)["nodes"]}
    assert "fetch" in names and "job" in names


def test_trace_result_load_reads_what_view_reads(in_tmp: Path) -> None:
    """TraceResult.load and `flow-xray view` share one loader: OTLP JSON lines load too."""
    lines = [json.dumps(otlp_document(n)) for n in range(2)]
    (in_tmp / "spans.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = TraceResult.load(in_tmp / "spans.jsonl")
    assert [n.name for n in result] == ["checkout", "charge_card", "checkout", "charge_card"]
    assert result.totals.errors == 2


def test_view_counts_the_trace_once_for_the_page_and_the_summary(
    in_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The calls are counted once, as the file is read (errors, tokens, cost: a pass over
    every call, which a million-call file makes worth doing once); the page and the
    summary line both use that count and say the same."""
    from flow_xray.analysis import accounting

    saved_trace(in_tmp / "run1.json")
    counted: list[int] = []
    analyze = accounting.analyze

    def counting(roots: Any) -> Any:
        counted.append(len(roots))
        return analyze(roots)

    monkeypatch.setattr(accounting, "analyze", counting)
    result = invoke("view", "run1.json", "--html", "page.html")
    assert result.exit_code == 0, result.output
    assert len(counted) == 1
    totals = read_page((in_tmp / "page.html").read_text(encoding="utf-8"))["totals"]
    assert (totals["nodes"], totals["errors"]) == (2, 1)
    assert "— 2 calls, 1 error (handled), " in result.stderr


def test_totals_count_anew_unless_the_tree_is_as_built(in_tmp: Path) -> None:
    """`TraceResult.totals` counts the tree as it is now; the count made as it was read is
    only for a caller that knows nothing changed since (``fresh=True``, the commands)."""
    from flow_xray.analysis import accounting

    saved_trace(in_tmp / "run1.json")
    result = TraceResult.load(in_tmp / "run1.json")
    assert accounting.totals(result, fresh=True) == result.totals
    result.roots[0].status = "error"
    result.roots[0].error = "RuntimeError: late"
    assert result.totals.errors == 2
    assert accounting.totals(result, fresh=True).errors == 1  # as read
    fresh = accounting.totals(TraceResult(roots=result.roots), fresh=True)  # never counted
    assert fresh.errors == 2


def test_view_loads_no_opentelemetry(in_tmp: Path) -> None:
    """Rendering a saved trace imports neither the OpenTelemetry SDK nor protobuf."""
    (in_tmp / "spans.jsonl").write_text(json.dumps(otlp_document()) + "\n", encoding="utf-8")
    code = (
        "import json, sys\n"
        "from flow_xray.cli import cli\n"
        "code = cli.main(['view', 'spans.jsonl', '--html', 'out.html'], standalone_mode=False)\n"
        "assert code == 0, code\n"
        "print(json.dumps(sorted(m for m in sys.modules"
        " if m.split('.')[0] in ('opentelemetry', 'google', 'grpc'))))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=in_tmp, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []
    assert (in_tmp / "out.html").exists()
