"""A run merged with the static index: executed marks, ghosts, runtime-only edges, unused."""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path

from analysis_fixtures import SHOP

from flow_xray import TraceResult
from flow_xray.analysis import StaticIndex, unused
from flow_xray.analysis.static.merge import GHOST_CAP

RunShop = Callable[..., TraceResult]


def node_named(result: TraceResult, name: str) -> str:
    found = result.find(name)
    assert found is not None, name
    return found.id


def test_every_traced_call_is_matched_to_its_function(
    shop_index: StaticIndex, run_shop: RunShop
) -> None:
    """Each span of the run maps to the function that made it (by file and line)."""
    result = run_shop("green tea")
    context = shop_index.merge(result)
    assert {node.name: context.functions_of[node.id] for node in result} == {
        "Agent.run": "shop.agent.Agent.run",
        "Planner.plan": "shop.agent.Planner.plan",
        "Agent.act": "shop.agent.Agent.act",
        "search": "shop.tools.search",
        "price": "shop.tools.price",
        "Agent.answer": "shop.agent.Agent.answer",
        "summarize": "shop.agent.summarize",
        "primary_model": "shop.models.primary_model",
    }


def test_the_branch_that_did_not_run_is_a_ghost(shop_index: StaticIndex, run_shop: RunShop) -> None:
    """The primary model answered, so the fallback in the ``except`` branch never ran: it is
    a ghost under Agent.answer, and the traced function it would call nests under it."""
    result = run_shop("green tea")
    context = shop_index.merge(result)
    ghosts = {g.function: g for g in context.ghosts}
    assert list(ghosts) == ["shop.models.fallback_model", "shop.models.record_fallback"]
    fallback = ghosts["shop.models.fallback_model"]
    assert fallback.parent == node_named(result, "Agent.answer")
    assert ghosts["shop.models.record_fallback"].parent == fallback.id


def test_a_branch_that_ran_is_no_ghost(shop_index: StaticIndex, run_shop: RunShop) -> None:
    """When the primary model times out the fallback runs: executed, and no ghost is left."""
    context = shop_index.merge(run_shop("green tea", "--flaky"))
    assert "shop.models.fallback_model" in context.executed
    assert context.ghosts == ()


def test_dynamic_dispatch_edges_are_runtime_only(
    shop_index: StaticIndex, run_shop: RunShop
) -> None:
    """Agent.act -> search went through ``TOOLS[...]``: the source cannot confirm it."""
    result = run_shop("green tea")
    edges = {e.child: e for e in shop_index.merge(result).edges}
    edge = edges[node_named(result, "search")]
    line = shop_index.lookup("Agent.act").calls[0].line
    assert not edge.confirmed
    assert edge.note == f"runtime-only: a dynamic call, e.g. TOOLS[step['tool']] (line {line})"


def test_callback_edges_are_runtime_only_with_the_reason(
    shop_index: StaticIndex, run_shop: RunShop
) -> None:
    """Agent.run -> Agent.act happened through ``each(steps, self.act)``: a callback."""
    result = run_shop("green tea")
    edges = {e.child: e for e in shop_index.merge(result).edges}
    edge = edges[node_named(result, "Agent.act")]
    assert (edge.confirmed, edge.note.startswith("runtime-only: passed as a value")) == (
        False,
        True,
    )


def test_calls_through_untraced_helpers_are_confirmed(
    shop_index: StaticIndex, run_shop: RunShop
) -> None:
    """Agent.answer -> summarize goes through the untraced ``_prompt``: confirmed, via it."""
    result = run_shop("green tea")
    context = shop_index.merge(result)
    edges = {e.child: e for e in context.edges}
    assert edges[node_named(result, "summarize")].note.startswith("called through Agent._prompt")
    assert [e.confirmed for e in context.runtime_only] == [False, False, False, False]


def test_unused_is_what_could_have_run_but_did_not(
    shop_index: StaticIndex, run_shop: RunShop
) -> None:
    """unused(): traced functions reachable from executed ones that never ran; ``translate``
    (registered, never called) is not reachable, so it is not listed."""
    result = run_shop("green tea")
    assert shop_index.unused(result) == [
        "shop.models.fallback_model",
        "shop.models.record_fallback",
    ]
    assert unused([SHOP], result) == shop_index.unused(result)
    assert shop_index.unused(result, paths=[SHOP / "agent.py"]) == []


def test_saved_traces_match_too(shop_index: StaticIndex, run_shop: RunShop, tmp_path: Path) -> None:
    """A trace saved to JSON and loaded back matches the same functions."""
    result = run_shop("green tea")
    result.save(tmp_path / "run.json")
    loaded = TraceResult.load(tmp_path / "run.json")
    assert shop_index.merge(loaded).functions_of == shop_index.merge(result).functions_of


def test_paths_recorded_in_another_checkout_still_match(shop_index: StaticIndex) -> None:
    """A span recorded as ``/elsewhere/shop/agent.py`` matches the indexed shop/agent.py."""
    line = shop_index.lookup("Agent.answer").first_line
    trace = TraceResult.from_dict(
        {
            "nodes": [
                {
                    "name": "renamed span",
                    "attributes": {
                        "code.file.path": "/elsewhere/checkout/shop/agent.py",
                        "code.line.number": line,
                    },
                }
            ]
        }
    )
    assert list(shop_index.merge(trace).functions_of.values()) == ["shop.agent.Agent.answer"]


def test_spans_from_other_instrumentations_stay_unmatched(shop_index: StaticIndex) -> None:
    """A span with no code attributes and an unknown name is left alone, with no edge."""
    trace = TraceResult.from_dict(
        {"nodes": [{"name": "POST /v1/chat/completions", "children": [{"name": "search"}]}]}
    )
    context = shop_index.merge(trace)
    assert list(context.functions_of.values()) == ["shop.tools.search"]
    assert context.edges == ()


def test_annotate_adds_ghost_children_and_static_fields(
    shop_index: StaticIndex, run_shop: RunShop
) -> None:
    """annotate(): matched nodes carry ``static``; ghosts come after the real children, with
    ``ghost: true``; the input stays as it was."""
    result = run_shop("green tea")
    data = result.to_dict()
    before = copy.deepcopy(data)
    out = shop_index.merge(result).annotate(data)
    assert data == before
    [root] = out["nodes"]
    answer = root["children"][-1]
    assert [c["name"] for c in answer["children"]] == ["summarize", "primary_model", "fallback"]
    ghost = answer["children"][-1]
    assert (ghost["ghost"], ghost["status"], ghost["kind"]) == (True, "ghost", "llm")
    assert ghost["static"]["note"].startswith("not run: Agent.answer calls it at line")
    assert [c["name"] for c in ghost["children"]] == ["record_fallback"]
    assert answer["static"]["callers"] == ["shop.agent.Agent.run"]
    assert answer["static"]["edge"] == "confirmed"
    assert out["static"]["unused"] == ["shop.models.fallback_model", "shop.models.record_fallback"]


def test_ghosts_are_capped(tmp_path: Path) -> None:
    """A call that reaches more traced functions than GHOST_CAP draws GHOST_CAP and counts
    the rest."""
    count = GHOST_CAP + 7
    lines = ["from flow_xray import trace", "@trace", "def main():"]
    lines += [f"    f{i}()" for i in range(count)]
    for i in range(count):
        lines += ["@trace", f"def f{i}(): ..."]
    (tmp_path / "many.py").write_text("\n".join(lines) + "\n", encoding="utf-8")
    index = StaticIndex.build([tmp_path])
    trace = TraceResult.from_dict(
        {
            "nodes": [
                {
                    "name": "main",
                    "attributes": {
                        "code.file.path": str(tmp_path / "many.py"),
                        "code.line.number": 2,
                    },
                }
            ]
        }
    )
    context = index.merge(trace)
    assert (len(context.ghosts), context.ghosts_dropped, len(context.unused)) == (
        GHOST_CAP,
        7,
        count,
    )
