"""The viewer's overview: what failed, what was slow, what cost most -- from the flat rows.

Computed here, not in the page, so the figures are the ones the rest of
flow-xray uses: LLM usage is summed over the spans the accounting pass
(`flow_xray.analysis.accounting`) marked ``usage_counted`` (so a request reported
by three spans costs once, as in the header totals), and failures are told
apart by its ``error_origin`` / ``error_handled`` fields. Calls are referred to
by their row: their index in the pre-order columns (`flow_xray.tree.columns`).

- ``critical``: the chain of calls, root first, that decides the wall time
  (`flow_xray.analysis.timing.critical_path`).
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
from typing import Any, Final, TypeGuard

from flow_xray.analysis.timing import TOP, TreeShape, critical_path, self_time, tree_shape
from flow_xray.tree.columns import Columns


def overview(
    trace: Columns | Sequence[Mapping[str, Any]], shape: TreeShape | None = None
) -> dict[str, Any]:
    """Return the overview of a trace's flat form: its columns (with ``parent``, ``self_ms``,
    ``view_status``; see `flow_xray.analysis.timing.finish_columns`, which also gives
    its ``shape``) or its rows."""
    table = _Table(trace)
    if shape is None:
        shape = tree_shape(table.columns)  # type: ignore[arg-type]
    kids, roots = shape.kids, shape.roots
    errors = _errors(table, kids)
    metas = table.column("meta")
    counted_flags = table.column("usage_counted")
    counted = [
        i
        for i, (meta, flag) in enumerate(zip(metas, counted_flags, strict=True))
        if _counted(meta, flag)
    ]
    return {
        "critical": critical_path(shape),
        "self_time": self_time(table.column("self_ms")),
        "llm": _llm_calls(metas, counted),
        "models": _models(metas, counted),
        "errors": errors,
        "repeated": _repeated(table, kids),
        "first": _first(table, kids, roots, errors),
    }


class _Table:
    """Column access to a trace given as columns or as rows."""

    __slots__ = ("columns", "count", "parents")

    def __init__(self, trace: Columns | Sequence[Mapping[str, Any]]) -> None:
        if isinstance(trace, Mapping):
            self.columns: Mapping[str, Sequence[Any]] = trace
        else:
            keys: dict[str, None] = {}
            for row in trace:
                keys.update(dict.fromkeys(row))
            self.columns = {k: [row.get(k) for row in trace] for k in keys}
        self.parents: Sequence[int] = self.columns.get("parent") or []
        self.count = len(self.parents)

    def column(self, key: str) -> Sequence[Any]:
        found = self.columns.get(key)
        return found if found is not None else [None] * self.count


_FLOAT: Final = frozenset({float})


def _num(value: Any) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return None


def _meta(meta: Any) -> Mapping[str, Any]:
    return meta if isinstance(meta, Mapping) else {}


def _tokens(meta: Any) -> int:
    return node_tokens({"meta": meta})


def node_tokens(row: Mapping[str, Any]) -> int:
    """Total tokens a node reports itself (``total_tokens``, else prompt + completion)."""
    meta = row.get("meta")
    if not isinstance(meta, Mapping):
        return 0
    total = meta.get("total_tokens")
    if _is_int(total):
        return int(total)
    parts = (meta.get("prompt_tokens"), meta.get("completion_tokens"))
    return sum(int(v) for v in parts if _is_int(v))


def _is_int(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _counted(meta: Any, flag: Any) -> bool:
    """Whether a call's usage is in the totals (a file without the accounting fields: all are)."""
    if not meta or not isinstance(meta, Mapping):
        return False
    reports = _tokens(meta) > 0 or _num(meta.get("estimated_cost_usd")) is not None
    return reports and flag is not False


def _llm_calls(metas: Sequence[Any], counted: Sequence[int]) -> list[int]:
    calls = list(counted)
    calls.sort(
        key=lambda i: (
            -(_num(_meta(metas[i]).get("estimated_cost_usd")) or 0.0),
            -_tokens(metas[i]),
        )
    )
    return calls[:TOP]


def _models(metas: Sequence[Any], counted: Sequence[int]) -> list[dict[str, Any]]:
    models: dict[str, dict[str, Any]] = {}
    for i in counted:
        meta = _meta(metas[i])
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
        entry["total_tokens"] += _tokens(meta)
        cost = _num(meta.get("estimated_cost_usd"))
        if cost is not None:
            entry["cost_usd"] = (entry["cost_usd"] or 0.0) + cost
    return sorted(models.values(), key=lambda m: (-(m["cost_usd"] or 0.0), -m["total_tokens"]))


def _errors(table: _Table, kids: Sequence[Sequence[int]]) -> list[dict[str, Any]]:
    """One entry per failure: its origin, the callers it passed through, who handled it."""
    statuses = table.column("status")
    origins = table.column("error_origin")
    handled_flags = table.column("error_handled")
    parents = table.parents

    def is_origin(i: int) -> bool:
        origin = origins[i]
        if isinstance(origin, bool):
            return origin
        return not any(statuses[c] == "error" for c in kids[i])  # a file without the field

    out: list[dict[str, Any]] = []
    for i, status in enumerate(statuses):
        if status != "error" or not is_origin(i):
            continue
        passed: list[int] = []
        p = parents[i]
        while p >= 0 and statuses[p] == "error" and not is_origin(p):
            passed.append(p)
            p = parents[p]
        handled_by = p if p >= 0 and statuses[p] != "error" else -1
        handled = handled_flags[i]
        if not isinstance(handled, bool):
            handled = handled_by >= 0
        out.append({"row": i, "passed": passed, "handled": handled, "handled_by": handled_by})
    out.sort(key=lambda e: (e["handled"], e["row"]))
    return out


def _repeated(table: _Table, kids: Sequence[Sequence[int]]) -> list[dict[str, Any]]:
    names = table.column("name")
    statuses = table.column("status")
    latencies = table.column("latency_ms")
    # (parent, name, count, failed, total) of each group; the rows only for the `TOP` kept
    # (a million calls in repeated groups would otherwise be listed once more)
    found: list[tuple[int, str, int, int, float]] = []
    for parent, children in enumerate(kids):
        if len(children) < 2:
            continue
        labels = list(map(str, map(names.__getitem__, children)))
        groups: dict[str, list[int]] = {}
        if len(set(labels)) == 1:  # one function's calls (the common case): no loop per call
            groups[labels[0]] = list(children)
        else:
            for c, label in zip(children, labels, strict=True):
                groups.setdefault(label, []).append(c)
        for name, group in groups.items():
            failed = list(map(statuses.__getitem__, group)).count("error")
            if len(group) >= 3 or (len(group) == 2 and failed):
                times = list(map(latencies.__getitem__, group))
                if _FLOAT.issuperset(map(type, times)):  # the same sum, without a call per time
                    total = sum(times)
                else:
                    total = sum(_num(t) or 0.0 for t in times)
                found.append((parent, name, len(group), failed, total))
    found.sort(key=lambda g: -g[4])
    return [
        {
            "parent": parent,
            "rows": [c for c in kids[parent] if str(names[c]) == name],
            "count": count,
            "failed": failed,
            "total_ms": total,
        }
        for parent, name, count, failed, total in found[:TOP]
    ]


def _first(
    table: _Table,
    kids: Sequence[Sequence[int]],
    roots: Sequence[int],
    errors: Sequence[Mapping[str, Any]],
) -> int:
    if not table.count:
        return -1
    for entry in errors:
        if not entry["handled"]:
            return int(entry["row"])
    for entry in errors:
        if not _retried(table, kids, roots, int(entry["row"])):
            return int(entry["row"])
    return 0


def _retried(table: _Table, kids: Sequence[Sequence[int]], roots: Sequence[int], i: int) -> bool:
    """Whether a later sibling of the same name (or of an ancestor) succeeded: a retry."""
    names = table.column("name")
    statuses = table.column("status")
    while i >= 0:
        parent = table.parents[i]
        siblings = kids[parent] if parent >= 0 else roots
        name = names[i]
        if any(k > i and names[k] == name and statuses[k] == "ok" for k in siblings):
            return True
        i = parent
    return False
