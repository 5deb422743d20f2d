"""The viewer's overview: what failed, what was slow, what cost most -- from the flat rows.

Computed here, not in the page, so the figures are the ones the rest of
flow-xray uses: LLM usage is summed over the spans the accounting pass
(`flow_xray.tree.accounting`) marked ``usage_counted`` (so a request reported
by three spans costs once, as in the header totals), and failures are told
apart by its ``error_origin`` / ``error_handled`` fields. Rows are referred to
by their index in `flatten_trace`'s list.

- ``critical``: the calls that decide the wall time. From each call's end,
  walk back through its children: the child that ended last is on the path,
  then the last one to end before that child started, and so on, recursively
  (as Jaeger computes it). Calls running in parallel with a longer one are off it.
- ``self_time``: the calls with the most own time (latency not covered by children).
- ``llm`` / ``models``: the costliest counted LLM calls, and usage per model.
- ``errors``: one entry per failure, root causes first: where it was raised,
  how many callers it passed through, and which caller handled it (if any);
  unhandled failures before handled ones.
- ``repeated``: a function called several times under one parent (3 or more, or
  2 when one failed: a retry), with the calls' total time.
- ``first``: the row the page opens on: the first unhandled root cause, else the
  first handled one that was not retried successfully, else the first row.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from flow_xray.render.trace_graph import node_tokens

TOP = 10


def overview(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Return the overview of flat rows (each with ``parent``, ``self_ms``, ``view_status``)."""
    n = len(rows)
    kids: list[list[int]] = [[] for _ in range(n)]
    roots: list[int] = []
    for i, row in enumerate(rows):
        parent = row["parent"]
        (kids[parent] if parent >= 0 else roots).append(i)
    spans = [_span(row) for row in rows]
    errors = _errors(rows, kids)
    counted = [i for i, row in enumerate(rows) if _counted(row)]
    return {
        "critical": _critical(kids, roots, spans),
        "self_time": _self_time(rows),
        "llm": _llm_calls(rows, counted),
        "models": _models(rows, counted),
        "errors": errors,
        "repeated": _repeated(rows, kids, spans),
        "first": _first(rows, kids, roots, errors),
    }


def _num(value: Any) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return None


def _span(row: Mapping[str, Any]) -> tuple[float, float | None]:
    start = _num(row.get("start_ms")) or 0.0
    latency = _num(row.get("latency_ms"))
    return start, None if latency is None else start + latency


def _critical(
    kids: Sequence[Sequence[int]],
    roots: list[int],
    spans: Sequence[tuple[float, float | None]],
) -> list[int]:
    """Rows on the critical path, in row (pre-)order. Iterative; O(n log n)."""
    if not spans:
        return []
    last = max((e if e is not None else s) for s, e in spans)

    def end(i: int, bound: float) -> float:
        e = spans[i][1]
        return bound if e is None else min(e, bound)

    on: set[int] = set()
    stack: list[tuple[list[int], float]] = [(roots, last)]
    while stack:
        children, cursor = stack.pop()
        taken = False
        for c in sorted(children, key=lambda k: end(k, cursor), reverse=True):
            start, stop = spans[c]
            # After the last one to end, only children that ended before the path reached them.
            if taken and (start >= cursor or stop is None or stop > cursor):
                continue
            taken = True
            on.add(c)
            stack.append((list(kids[c]), end(c, cursor)))
            cursor = start
    return sorted(on)


def _self_time(rows: Sequence[Mapping[str, Any]]) -> list[int]:
    timed = [i for i, row in enumerate(rows) if _num(row.get("self_ms"))]
    timed.sort(key=lambda i: -float(rows[i]["self_ms"]))
    return timed[:TOP]


def _meta(row: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = row.get("meta")
    return meta if isinstance(meta, Mapping) else {}


def _counted(row: Mapping[str, Any]) -> bool:
    """Whether a row's usage is in the totals (a file without the accounting fields: all are)."""
    meta = row.get("meta")
    if not meta or not isinstance(meta, Mapping):
        return False
    reports = node_tokens(row) > 0 or _num(meta.get("estimated_cost_usd")) is not None
    return reports and row.get("usage_counted", True) is not False


def _llm_calls(rows: Sequence[Mapping[str, Any]], counted: Sequence[int]) -> list[int]:
    calls = list(counted)
    calls.sort(
        key=lambda i: (
            -(_num(_meta(rows[i]).get("estimated_cost_usd")) or 0.0),
            -node_tokens(rows[i]),
        )
    )
    return calls[:TOP]


def _models(rows: Sequence[Mapping[str, Any]], counted: Sequence[int]) -> list[dict[str, Any]]:
    models: dict[str, dict[str, Any]] = {}
    for i in counted:
        row = rows[i]
        meta = _meta(row)
        model = meta.get("model")
        name = str(model) if model is not None else "unknown model"
        entry = models.setdefault(
            name,
            {
                "model": name,
                "calls": 0,
                "prompt_tokens": 0,
                "completion_tokens": 0,
                "total_tokens": 0,
                "cost_usd": None,
            },
        )
        entry["calls"] += 1
        for key in ("prompt_tokens", "completion_tokens"):
            entry[key] += int(_num(meta.get(key)) or 0)
        entry["total_tokens"] += node_tokens(row)
        cost = _num(meta.get("estimated_cost_usd"))
        if cost is not None:
            entry["cost_usd"] = (entry["cost_usd"] or 0.0) + cost
    return sorted(models.values(), key=lambda m: (-(m["cost_usd"] or 0.0), -m["total_tokens"]))


def _is_origin(
    row: Mapping[str, Any], kids: Sequence[int], rows: Sequence[Mapping[str, Any]]
) -> bool:
    origin = row.get("error_origin")
    if isinstance(origin, bool):
        return origin
    return not any(rows[c].get("status") == "error" for c in kids)  # a file without the field


def _errors(
    rows: Sequence[Mapping[str, Any]], kids: Sequence[Sequence[int]]
) -> list[dict[str, Any]]:
    """One entry per failure: its origin, the callers it passed through, who handled it."""
    out: list[dict[str, Any]] = []
    for i, row in enumerate(rows):
        if row.get("status") != "error" or not _is_origin(row, kids[i], rows):
            continue
        passed: list[int] = []
        p = row["parent"]
        while (
            p >= 0 and rows[p].get("status") == "error" and not _is_origin(rows[p], kids[p], rows)
        ):
            passed.append(p)
            p = rows[p]["parent"]
        handled_by = p if p >= 0 and rows[p].get("status") != "error" else -1
        handled = row.get("error_handled")
        if not isinstance(handled, bool):
            handled = handled_by >= 0
        out.append({"row": i, "passed": passed, "handled": handled, "handled_by": handled_by})
    out.sort(key=lambda e: (e["handled"], e["row"]))
    return out


def _repeated(
    rows: Sequence[Mapping[str, Any]],
    kids: Sequence[Sequence[int]],
    spans: Sequence[tuple[float, float | None]],
) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for parent, children in enumerate(kids):
        groups: dict[str, list[int]] = {}
        for c in children:
            groups.setdefault(str(rows[c].get("name")), []).append(c)
        for group in groups.values():
            failed = sum(1 for c in group if rows[c].get("status") == "error")
            if len(group) >= 3 or (len(group) == 2 and failed):
                total = sum(_num(rows[c].get("latency_ms")) or 0.0 for c in group)
                out.append(
                    {
                        "parent": parent,
                        "rows": group,
                        "count": len(group),
                        "failed": failed,
                        "total_ms": total,
                    }
                )
    out.sort(key=lambda g: -g["total_ms"])
    return out[:TOP]


def _first(
    rows: Sequence[Mapping[str, Any]],
    kids: Sequence[Sequence[int]],
    roots: Sequence[int],
    errors: Sequence[Mapping[str, Any]],
) -> int:
    if not rows:
        return -1
    for entry in errors:
        if not entry["handled"]:
            return int(entry["row"])
    for entry in errors:
        if not _retried(rows, kids, int(entry["row"])):
            return int(entry["row"])
    return 0


def _retried(rows: Sequence[Mapping[str, Any]], kids: Sequence[Sequence[int]], i: int) -> bool:
    """Whether a later sibling of the same name (or of an ancestor) succeeded: a retry."""
    while i >= 0:
        parent = rows[i]["parent"]
        siblings = (
            kids[parent] if parent >= 0 else [k for k, r in enumerate(rows) if r["parent"] < 0]
        )
        name = rows[i].get("name")
        if any(
            k > i and rows[k].get("name") == name and rows[k].get("status") == "ok"
            for k in siblings
        ):
            return True
        i = parent
    return False
