"""Who counts what: LLM usage once per request, errors once per failure — a pure pass over a tree.

Several spans often report the same LLM request: flow-xray's ``@trace(kind="llm")``
span around ``client.chat.completions.create``, the instrumentor span inside
it (OpenInference, the official OpenAI instrumentation, OpenLLMetry), the
provider SDK's own span (``anthropic`` ≥ 2.16), an agent that returns its
child's response object. Summing them all would multiply the cost. The rule:

1. **Innermost owns the request.** A span reporting usage is *counted* unless a
   span inside it already counts the same request: the same response id
   (``gen_ai.response.id``), or — when ids are missing — the same input and
   output tokens with a compatible model (``gpt-4o-mini`` matches
   ``gpt-4o-mini-2024-07-18``); the rule recording uses too,
   `flow_xray.llm.requests.same_request`. An ancestor whose figure is the sum
   of the requests counted inside it (an agent reporting its total) is not
   counted either. Different response ids are always different requests.
2. **Siblings that are one request.** Two child spans of one call (or two
   top-level spans) that report the same request at overlapping times from
   different instrumentations (two instrumentors patching one client, the
   provider SDK's own span beside an instrumentor's) are one request: the one
   closest to the wire is counted (the provider SDK's own span, then an
   instrumentor's, then flow-xray's; the one that started first on a tie).
   When the figures of one request differ, the nodes say so (``usage_note``).
3. Everything else is a request of its own and is counted.

Every span keeps its own figure (the viewer shows it); ``usage_counted`` says
whether it is in the totals, ``usage_note`` why not.

Errors are counted as failures, not as failing spans. A span whose failing
child failed with the same exception (same type) merely *passed it through*;
the innermost one is the *origin* (``error_origin``). A failure is *handled*
(``error_handled``) when some ancestor ended without it. ``Totals.errors``
counts origins; two sibling instrumentor spans failing for one request count
once. The HTTP attempts inside one request (an HTTP client instrumentation's
spans, one per retry) are part of that request: inside a failed request they are
one failure with it, inside a request that then succeeded none, so the count
does not depend on which instrumentations are installed. ``cancelled`` and
``interrupted`` calls are not failures.
"""

from __future__ import annotations

import gc
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from flow_xray import attributes as attr
from flow_xray.llm.requests import Request, response_id, same_request, wire_rank
from flow_xray.tree.build import build_tree
from flow_xray.tree.columns import lazy_fields
from flow_xray.tree.foreign import clean_error_type, http_status, is_http_attempt
from flow_xray.tree.model import Totals, TraceNode, TraceResult, child_nodes
from flow_xray.tree.spans import SpanRecord

__all__ = ["SCOPE_KEY", "Counts", "analyze", "build_result", "count", "totals"]

# The instrumentation scope of a foreign span (set by the span readers).
SCOPE_KEY = attr.OTEL_SCOPE_NAME
_COUNTED_IN = attr.USAGE_COUNTED_IN


@dataclass(frozen=True, slots=True)
class _Request:
    """One counted LLM request: the node that owns it and what identifies it."""

    node: TraceNode
    request: Request


@dataclass(frozen=True, slots=True)
class Counts:
    """What `analyze` found: nodes, failures, stopped calls, and usage sums of counted spans.

    ``cost_usd`` is None when no counted span has a cost.
    """

    nodes: int
    errors: int
    handled_errors: int
    cancelled: int
    interrupted: int
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int
    cost_usd: float | None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _request(node: TraceNode) -> _Request | None:
    meta = node.meta
    prompt = _int(meta.get("prompt_tokens"))
    completion = _int(meta.get("completion_tokens"))
    if prompt is None and completion is None:
        total = _int(meta.get("total_tokens"))
        if total is None:
            return None
        prompt = total  # only a total is known: compare it as the input side
    model = meta.get("model")
    request = Request(
        response_id(node.attributes), model if isinstance(model, str) else None, prompt, completion
    )
    return _Request(node, request)


def _overlap(a: TraceNode, b: TraceNode) -> bool:
    a_end = None if a.latency_ms is None else a.start_ms + a.latency_ms
    b_end = None if b.latency_ms is None else b.start_ms + b.latency_ms
    return (b_end is None or a.start_ms <= b_end) and (a_end is None or b.start_ms <= a_end)


def _scope(node: TraceNode) -> str:
    scope = node.attributes.get(SCOPE_KEY)
    return scope if isinstance(scope, str) else ""


def _picked(
    roots: Sequence[TraceNode],
) -> tuple[int, list[tuple[TraceNode, TraceNode | None, TraceNode | None]]]:
    """Count the nodes and pick the ones the rules concern, in pre-order (iteratively).

    Picked: nodes that report usage or metadata, did not end ``ok``, or carry
    accounting fields from an earlier pass. Each comes with its parent and its
    nearest picked ancestor (the *anchor* its requests are passed up to), so
    the many plain nodes of a big trace cost one look each.
    """
    count = 0
    picked: list[tuple[TraceNode, TraceNode | None, TraceNode | None]] = []
    for root in roots:  # a root at a time: a loop's million roots make no million entries
        stack: list[tuple[TraceNode, TraceNode | None, TraceNode | None]] = [(root, None, None)]
        while stack:
            node, parent, anchor = stack.pop()
            count += 1
            if (
                node.has_meta()
                or node.status != "ok"
                or node.usage_counted is not None
                or node.error_origin is not None
            ):
                picked.append((node, parent, anchor))
                anchor = node
            children = child_nodes(node)
            if children:
                stack.extend([(child, node, anchor) for child in reversed(children)])
    return count, picked


def build_result(records: Iterable[SpanRecord]) -> TraceResult:
    """The trace the records describe (`flow_xray.tree.build.build_tree`), counted: every
    node's accounting fields set (`analyze`). What a capture and every file reader give.

    Example::

        result = build_result(read_otlp_json("spans.jsonl"))
    """
    # One pause of the cyclic GC for both passes, as `build_tree` pauses it for its own:
    # a million nodes and no cycles, so each collection would only rescan the new tree.
    # (Resumed as the last thing done, so no collection starts before this returns.)
    paused = gc.isenabled()
    gc.disable()
    try:
        result = build_tree(records)
        count(result)
    finally:
        if paused:
            gc.enable()
    return result


def count(result: TraceResult) -> Counts:
    """Set the accounting fields of every node of ``result`` (`analyze`), as a trace is built,
    and keep what was found for `totals` (``fresh=True``)."""
    counts = result._built_counts = analyze(result.roots)
    return counts


def totals(result: TraceResult, fresh: bool = False) -> Totals:
    """``result``'s `Totals` (`TraceResult.totals`), its accounting fields recomputed first.

    ``fresh``: the tree is as it was built (a command that has just read or captured it):
    the counts made then (`count`) are used instead of a second pass over every node.
    """
    roots, built = result.roots, result._built_counts
    counts = built if fresh and isinstance(built, Counts) else analyze(roots)
    # Read without filling lazily built roots: a loop of top-level calls has one per call.
    starts, latencies = lazy_fields(roots, "start_ms", "latency_ms")
    ends = [start + (latency or 0.0) for start, latency in zip(starts, latencies, strict=True)]
    wall = max(ends) - min(starts) if roots else 0.0
    return Totals(
        counts.nodes,
        counts.errors,
        wall,
        counts.prompt_tokens,
        counts.completion_tokens,
        counts.total_tokens,
        counts.cost_usd,
        result.dropped_spans,
        counts.handled_errors,
        counts.cancelled,
        counts.interrupted,
    )


def analyze(roots: Sequence[TraceNode]) -> Counts:
    """Set ``usage_counted``/``usage_note`` and ``error_origin``/``error_handled`` on every node.

    Returns the counts the totals are made of. Deterministic and idempotent;
    see the module docstring for the rules.
    """
    nodes, picked = _picked(roots)
    cancelled = interrupted = 0
    # id(anchor) -> (node, requests counted in it) for the picked nodes below it, latest first.
    pending: dict[int, list[tuple[TraceNode, list[_Request]]]] = {}
    chains: dict[int, TraceNode] = {}  # id(error node) -> origin of its failure
    parents: dict[int, TraceNode | None] = {}
    errors: list[TraceNode] = []
    tops: list[tuple[TraceNode, list[_Request]]] = []  # what reaches no picked ancestor
    for node, parent, anchor in reversed(picked):  # every node after its descendants
        inside = _usage(node, pending.pop(id(node), None))
        if inside:
            if anchor is None:
                tops.append((node, inside))
            else:
                pending.setdefault(id(anchor), []).append((node, inside))
        status = node.status
        if status == "error":
            parents[id(node)] = parent
            errors.append(node)
            _error_origin(node, chains)
            if parent is not None and parent.status != "error" and _attempt(node):
                # A failed attempt of a request that then succeeded (retried): shown, not
                # a failure of the run (without an HTTP instrumentation it is not seen at all).
                node.error_origin = False
                _read_attempt(node, None)
        else:
            node.error_origin = node.error_handled = None
            cancelled += status == "cancelled"
            interrupted += status == "interrupted"
    counted = _usage_from_children(tops) if tops else []  # root-level siblings too
    _mark_handled(errors, parents, chains)
    origins = [node for node in errors if node.error_origin]
    return Counts(
        nodes,
        len(origins),
        sum(1 for node in origins if node.error_handled),
        cancelled,
        interrupted,
        *_sum_counted(counted),
    )


def _usage(node: TraceNode, below: list[tuple[TraceNode, list[_Request]]] | None) -> list[_Request]:
    """Set ``node``'s usage fields; return the requests counted in it (its own last)."""
    inside = _usage_from_children(below) if below else []
    own = _request(node) if node.meta else None
    if own is None:
        node.usage_counted = node.usage_note = None
        return inside
    node.usage_counted, node.usage_note = _decide(node, own, inside)
    return [*inside, own] if node.usage_counted else inside


def _mark_handled(
    errors: Sequence[TraceNode],
    parents: dict[int, TraceNode | None],
    chains: dict[int, TraceNode],
) -> None:
    """Set ``error_handled``: top-down along each failure chain (``errors`` are in
    post-order, so reversed)."""
    for node in reversed(errors):
        parent = parents[id(node)]
        if parent is None:
            node.error_handled = False
        elif parent.status == "error" and chains.get(id(parent)) is chains.get(id(node)):
            node.error_handled = parent.error_handled
        else:
            node.error_handled = True


@dataclass(slots=True)
class _Child:
    """A child of a node while its siblings are merged: the requests counted in it."""

    node: TraceNode
    requests: list[_Request]


def _usage_from_children(below: list[tuple[TraceNode, list[_Request]]]) -> list[_Request]:
    """The requests counted inside a node, after merging siblings that are one request.

    Of two siblings reporting one request, the one closest to the wire is
    counted (`flow_xray.llm.requests.wire_rank`: the provider SDK's own span,
    then an instrumentor's, then flow-xray's), the earlier one on a tie; when
    their figures differ both nodes say so in ``usage_note``.
    """
    entries = [_Child(child, requests) for child, requests in reversed(below)]  # start order
    kept: list[_Child] = []  # entries whose own request (their last) is counted
    for entry in entries:
        if not entry.node.usage_counted:
            continue
        own = entry.requests[-1]  # a counted child's own request is appended last
        twin = next((k for k in kept if _siblings_same(k.requests[-1], own)), None)
        if twin is None:
            kept.append(entry)
            continue
        if wire_rank(_scope(entry.node)) < wire_rank(_scope(twin.node)):
            kept[kept.index(twin)] = entry
            _merge_siblings(entry, twin)
        else:
            _merge_siblings(twin, entry)
    return [request for entry in entries for request in entry.requests]


def _merge_siblings(winner: _Child, loser: _Child) -> None:
    """``loser``'s own request is ``winner``'s: not counted, and any disagreement shown."""
    kept_node, dropped = winner.node, loser.node
    kept_request, dropped_request = winner.requests[-1].request, loser.requests[-1].request
    closer = wire_rank(_scope(kept_node)) < wire_rank(_scope(dropped))
    why = ", closer to the provider" if closer else ""
    where = f"sibling span {kept_node.name!r} (counted there{why})"
    dropped.usage_counted = False
    dropped.usage_note = f"same request as {where}{_differs(dropped_request, kept_request)}"
    loser.requests = loser.requests[:-1]
    if _figures(kept_request) != _figures(dropped_request):
        kept_node.usage_note = (
            f"span {dropped.name!r} reported {_shown(dropped_request)} tokens for this request; "
            f"this span's {_shown(kept_request)} is counted"
        )


def _figures(request: Request) -> tuple[int | None, int | None]:
    return request.input_tokens, request.output_tokens


def _shown(request: Request) -> str:
    return f"{request.input_tokens}/{request.output_tokens}"


def _differs(here: Request, there: Request) -> str:
    """``", which reported a/b; this span c/d"`` when two figures of one request differ."""
    if _figures(here) == _figures(there):
        return ""
    return f", which reported {_shown(there)} tokens; this span {_shown(here)}"


def _siblings_same(a: _Request, b: _Request) -> bool:
    return (
        _scope(a.node) != _scope(b.node)
        and _overlap(a.node, b.node)
        and same_request(a.request, b.request)
        and a.node.status == b.node.status
    )


def _decide(node: TraceNode, own: _Request, inside: Sequence[_Request]) -> tuple[bool, str | None]:
    counted_in = node.attributes.get(_COUNTED_IN)
    for request in reversed(inside):  # the innermost, latest report first
        if same_request(own.request, request.request):
            direct = any(child is request.node for child in node.children)
            where = "child span" if direct else "span"
            differs = _differs(own.request, request.request)
            return False, f"same request as {where} {request.node.name!r} (counted there){differs}"
    if len(inside) > 1 and own.request.output_tokens is not None:
        prompt = sum(r.request.input_tokens or 0 for r in inside)
        completion = sum(r.request.output_tokens or 0 for r in inside)
        if own.request.input_tokens == prompt and own.request.output_tokens == completion:
            return False, f"sum of the {len(inside)} requests counted inside this call"
    if isinstance(counted_in, str):  # written as another span's figure when it was recorded
        return False, f"same request as span {counted_in!r} (counted there)"
    return True, None


def _error_key(node: TraceNode) -> str:
    """The failed node's exception type, normalised (``RateLimitError`` and
    ``rate_limit_error`` are one key), or '' when it cannot be told."""
    kind = None
    for event in reversed(node.events):
        if event.get("name") == attr.EXCEPTION_EVENT:
            kind = clean_error_type((event.get("attributes") or {}).get(attr.EXCEPTION_TYPE))
            break
    kind = kind or clean_error_type(node.attributes.get(attr.ERROR_TYPE))
    if kind is None:
        head = (node.error or "").partition(":")[0].strip()
        kind = head if head and " " not in head and head != "error" else None
    return "".join(ch for ch in (kind or "").rpartition(".")[2].lower() if ch.isalnum())


def _http_status(node: TraceNode) -> str | None:
    code = http_status(node.attributes)
    return str(code) if code is not None and code >= 400 else None


def _attempt(node: TraceNode) -> bool:
    return is_http_attempt(node.attributes)


# The provider's error kind in an SDK's exception text: ``{'type': 'rate_limit_error'}``.
_ERROR_KIND = re.compile(r"""['"]type['"]\s*:\s*['"]([A-Za-z_][\w.-]*)['"]""")


def _read_attempt(node: TraceNode, request: TraceNode | None) -> None:
    """A failed HTTP attempt reads with its status and, from the request that failed with
    it, the provider's error kind: ``HTTP 429 rate_limit_error`` rather than ``error``."""
    code = _http_status(node)
    if code is None or node.error not in ("error", f"HTTP {code}", None):
        return
    kind = _request_error_kind(request) if request is not None else None
    node.error = f"HTTP {code} {kind}" if kind else f"HTTP {code}"


def _request_error_kind(request: TraceNode) -> str | None:
    """What the provider called a failed request's error: the ``type`` in its body as the
    SDK's message quotes it, else its ``error.type``, else the exception's type name."""
    found = _ERROR_KIND.search(request.error or "")
    if found and found.group(1) != "error":  # Anthropic wraps the body: {'type': 'error', ...}
        return found.group(1)
    bodies = _ERROR_KIND.findall(request.error or "")
    if len(bodies) > 1:
        return str(bodies[1])
    kind = clean_error_type(request.attributes.get(attr.ERROR_TYPE))
    if kind:
        return kind.rpartition(".")[2]
    head = (request.error or "").partition(":")[0].strip()
    return head if head and " " not in head and head != "error" else None


_GROUPS = frozenset({"exceptiongroup", "baseexceptiongroup"})


def _same_failure(parent: TraceNode, parent_key: str, child: TraceNode) -> bool:
    """Whether ``child``'s failure is the one ``parent`` failed with (passed up, not new)."""
    if _attempt(child):  # an HTTP attempt inside a failed request is part of its failure
        return True
    child_key = _error_key(child)
    if not parent_key or not child_key or child_key == parent_key:
        return True
    if parent_key in _GROUPS:  # a TaskGroup / gather raising its children's failures together
        return True
    # An HTTP client span (``error.type`` from the body) inside the SDK call that raised for it.
    code = _http_status(child)
    return code is not None and code in (parent.error or "")


def _error_origin(node: TraceNode, chains: dict[int, TraceNode]) -> None:
    key = _error_key(node)
    failing = [c for c in node.children if c.status == "error" and id(c) in chains]
    matched = [c for c in failing if _same_failure(node, key, c)]
    if not matched:
        node.error_origin = True
        chains[id(node)] = node
        return
    node.error_origin = False
    first = matched[0]
    chains[id(node)] = chains[id(first)]
    for attempt in (c for c in matched if _attempt(c)):
        _read_attempt(attempt, node)
    for other in matched[1:]:
        # Two instrumentations reporting one failed request side by side, or the HTTP
        # attempts (retries) of one request: one failure.
        if (_scope(other) != _scope(first) and _overlap(other, first)) or (
            _attempt(other) and _attempt(first)
        ):
            old = chains[id(other)]
            old.error_origin = False
            _rechain(other, chains, old, chains[id(first)])


def _rechain(
    node: TraceNode, chains: dict[int, TraceNode], old: TraceNode, origin: TraceNode
) -> None:
    """Move ``node`` and the failing nodes below it on chain ``old`` to the chain of ``origin``."""
    stack = [node]
    while stack:
        current = stack.pop()
        chains[id(current)] = origin
        stack.extend(c for c in current.children if chains.get(id(c)) is old)


def _sum_counted(requests: Iterable[_Request]) -> tuple[int, int, int, float | None]:
    """Tokens and cost summed over the counted requests (those left at the roots)."""
    prompt = completion = total = 0
    cost: float | None = None
    for request in requests:
        meta = request.node.meta
        p, c, t = (
            _int(meta.get("prompt_tokens")),
            _int(meta.get("completion_tokens")),
            _int(meta.get("total_tokens")),
        )
        prompt += p or 0
        completion += c or 0
        total += t if t is not None else (p or 0) + (c or 0)
        node_cost = meta.get("estimated_cost_usd")
        if isinstance(node_cost, (int, float)) and not isinstance(node_cost, bool):
            cost = (cost or 0.0) + float(node_cost)
    return prompt, completion, total, cost
