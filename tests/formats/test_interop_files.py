"""Trace files real tools wrote (``interop/``, see its README) open with the same tree and totals.

Tempo's two trace APIs, Jaeger's UI JSON and its ``/api/v3``, Phoenix's two
span exports, Zipkin v2 and viztracer's Chrome trace events: each is read by
``load_trace`` and by ``flow-xray view`` as a user hands it over.
"""

from __future__ import annotations

import gzip
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from flow_xray.cli import cli
from flow_xray.formats.registry import load_trace
from flow_xray.tree.model import TraceNode, TraceResult

HERE = Path(__file__).parent / "interop"


@pytest.fixture(scope="module")
def interop(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Path]:
    """The path of an interop file as its tool wrote it: unpacked from ``interop/<name>.gz``
    (kept compressed: the tools write their JSON on one line) into a temporary folder."""
    folder = tmp_path_factory.mktemp("interop")

    def unpacked(name: str) -> Path:
        path = folder / name
        if not path.exists():
            path.write_bytes(gzip.decompress((HERE / f"{name}.gz").read_bytes()))
        return path

    return unpacked


# One run of the agent, as each backend returned it.
SAME_RUN = (
    "jaeger-api-trace.json",
    "jaeger-api-v3.json",
    "phoenix-otlpv1.json",
    "phoenix-rest-spans.json",
    "tempo-api-traces.json",
    "tempo-api-v2.json",
)


def shape(result: TraceResult) -> list[tuple[Any, ...]]:
    """Depth, name, kind, status, tokens and whether they were counted, in pre-order."""
    out: list[tuple[Any, ...]] = []
    stack: list[tuple[int, TraceNode]] = [(0, n) for n in reversed(result.roots)]
    while stack:
        depth, node = stack.pop()
        out.append(
            (
                depth,
                node.name,
                node.kind,
                node.status,
                node.meta.get("total_tokens"),
                node.usage_counted,
            )
        )
        stack.extend((depth + 1, c) for c in reversed(node.children))
    return out


@pytest.mark.parametrize("name", SAME_RUN)
def test_every_backend_file_of_one_run_gives_the_same_tree_and_totals(
    name: str, interop: Callable[[str], Path]
) -> None:
    """22 calls under one agent; 150 tokens and $0.000045, two handled failures, kinds kept."""
    result = load_trace(interop(name))
    assert shape(result) == shape(load_trace(interop("jaeger-api-trace.json")))
    totals = result.totals
    assert (totals.nodes, totals.errors, totals.handled_errors) == (22, 2, 2)
    assert (totals.prompt_tokens, totals.completion_tokens, totals.total_tokens) == (100, 50, 150)
    assert totals.cost_usd == pytest.approx(0.000045)
    kinds = {node.name: node.kind for node in result}
    assert (kinds["agent"], kinds["next_step"], kinds["ask"]) == ("agent", "tool", "llm")


def test_phoenix_span_kinds_are_kept_for_every_span(interop: Callable[[str], Path]) -> None:
    """Phoenix's ``span_kind`` is the node's kind when the attributes carry none."""
    kinds = [node.kind for node in load_trace(interop("phoenix-rest-spans.json"))]
    assert "span" not in kinds
    assert kinds.count("llm") == 20


@pytest.mark.parametrize("name", ["viztracer-chrome.json", "chrome-array.json"])
def test_viztracer_trace_events_become_a_call_tree(
    name: str, interop: Callable[[str], Path]
) -> None:
    """Complete events nest by time: exec > <module> > stage > sum > 6 genexpr, 5 leaf calls."""
    result = load_trace(interop(name))
    (root,) = result.roots
    assert root.name == "builtins.exec"
    (module,) = root.children
    (stage,) = module.children
    assert (module.name, stage.name) == ("<module>", "stage")
    assert stage.attributes["code.file.path"] == "/srv/agent1/srv/vizdemo.py"
    assert stage.attributes["code.line.number"] == 2
    (summed,) = stage.children
    assert summed.name == "builtins.sum"
    genexprs = summed.children
    assert [g.name for g in genexprs] == ["stage.<locals>.<genexpr>"] * 6
    assert [len(g.children) for g in genexprs] == [1, 1, 1, 1, 1, 0]
    assert all(g.children[0].name == "leaf" for g in genexprs[:5])
    assert root.latency_ms == pytest.approx(0.016925)
    assert root.attributes["thread.name"] == "MainThread"
    assert result.totals.nodes == 15


def test_both_chrome_forms_give_one_tree(interop: Callable[[str], Path]) -> None:
    """The bare array and the object form of one run read the same."""
    assert shape(load_trace(interop("chrome-array.json"))) == shape(
        load_trace(interop("viztracer-chrome.json"))
    )


def test_zipkin_v2_is_read_with_its_tags(interop: Callable[[str], Path]) -> None:
    """Zipkin's text tags give tokens and cost; the kind tag and the parent are kept."""
    result = load_trace(interop("zipkin-v2.json"))
    (agent,) = result.roots
    (chat,) = agent.children
    assert agent.kind == "agent" and chat.name == "chat gpt-4o-mini"
    assert (chat.meta["prompt_tokens"], chat.meta["completion_tokens"]) == (13, 7)
    assert agent.latency_ms == 150.0 and chat.start_ms == 10.0
    assert result.totals.total_tokens == 20


@pytest.mark.parametrize(
    "name", [*SAME_RUN, "zipkin-v2.json", "viztracer-chrome.json", "chrome-array.json"]
)
def test_flow_xray_view_opens_each_file(
    name: str, tmp_path: Path, interop: Callable[[str], Path]
) -> None:
    """``flow-xray view FILE`` writes the page for each of them, exit 0."""
    out = tmp_path / "page.html"
    done = CliRunner().invoke(cli, ["view", str(interop(name)), "--html", str(out)])
    assert done.exit_code == 0, done.output
    assert out.stat().st_size > 1000
