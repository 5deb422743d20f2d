"""`TraceDiff`, the comparison of two runs, in words and as plain data.

The summary line, one line per change, and the JSON form the diff viewer and
``flow-xray diff --json`` use. How calls are matched is in
`flow_xray.analysis.diff.compare`. No OpenTelemetry here.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from flow_xray.analysis.diff.calls import CallDiff
from flow_xray.files import write_text_atomic
from flow_xray.tree.figures import cost
from flow_xray.tree.model import totals_dict

# An exception's type at the start of an error text: ``KeyError``, ``openai.RateLimitError``.
_TYPE = re.compile(r"[A-Za-z_][\w.]*")

if TYPE_CHECKING:
    from flow_xray.tree.model import TraceNode, TraceResult

DIFF_VERSION = 1


@dataclass(eq=False)
class TraceDiff:
    """The comparison of two runs (``before`` -> ``after``), as a tree of `CallDiff`.

    Example::

        diff = TraceResult.load("good.json").diff(TraceResult.load("bad.json"))
        print(diff.summary())   # +1 call, 1 output changed, wall time +340 ms (+18%), ...
        if not diff.equal:
            diff.to_html("diff.html")
    """

    before: TraceResult
    after: TraceResult
    roots: list[CallDiff]
    before_label: str = "before"
    after_label: str = "after"

    def __iter__(self) -> Iterator[CallDiff]:
        for root in self.roots:
            yield from root

    @property
    def added(self) -> list[CallDiff]:
        """Calls only in the second run (every call of an added subtree)."""
        return [c for c in self if c.change == "added"]

    @property
    def removed(self) -> list[CallDiff]:
        """Calls only in the first run (every call of a removed subtree)."""
        return [c for c in self if c.change == "removed"]

    @property
    def changed(self) -> list[CallDiff]:
        """Matched calls that differ in anything but timing."""
        return [c for c in self if c.change == "changed"]

    @property
    def equal(self) -> bool:
        """True when both runs made the same calls with the same data (timing aside)."""
        return all(c.change == "same" for c in self)

    def summary(self) -> str:
        """One line: ``+2 calls, -1 call, 3 outputs changed, wall time +340 ms (+18%), cost
        +$0.0031``."""
        return summary_line(self)

    def report(self, limit: int = 50) -> list[str]:
        """One line per added, removed or changed call (at most ``limit``, then a count)."""
        return change_lines(self, limit)

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON and the diff viewer: both traces and the aligned calls."""
        return diff_dict(self)

    def to_html(
        self, path: str | os.PathLike[str] | None = None, title: str = "flow-xray diff"
    ) -> str:
        """Return the offline diff viewer page (`flow_xray.render.diff_page`); also write it
        to ``path`` if given. The page is imported when called: the one place analyses
        reach the pages above them (0.3's ``diff.to_html``; the ``noqa`` as in
        `flow_xray.tree.model`)."""
        from flow_xray.render.diff_page import result_diff_to_html  # noqa: PLC0415, RUF100

        html = result_diff_to_html(self, title=title)
        if path is not None:
            write_text_atomic(path, html)
        return html


def summary_line(diff: TraceDiff) -> str:
    """``+2 calls, -1 call, 1 new error, 3 outputs changed, wall time +340 ms (+18%), ...``

    Counts are of calls: an added subtree of three calls is ``+3 calls``.
    """
    added = diff.added
    removed = diff.removed
    changed = diff.changed
    new_errors = [c for c in changed if _became(c.before, c.after)] + [
        c for c in added if _is_error(c.after)
    ]
    fixed = [c for c in changed if _became(c.after, c.before)] + [
        c for c in removed if _is_error(c.before)
    ]
    status = [c for c in changed if "status" in c.fields and c not in new_errors + fixed]
    errors = [c for c in changed if "error" in c.fields and "status" not in c.fields]
    types = [c for c in errors if _error_type(c.before) != _error_type(c.after)]
    errors = [c for c in errors if c not in types]
    inputs = [c for c in changed if "inputs" in c.fields]
    outputs = [c for c in changed if "output" in c.fields]
    groups = (new_errors, fixed, status, types, errors, inputs, outputs)
    told = {id(c) for group in groups for c in group}
    other = [c for c in changed if id(c) not in told]
    parts = []
    if added:
        parts.append(f"+{_count(len(added), 'call')}")
    if removed:
        parts.append(f"-{_count(len(removed), 'call')}")
    if not parts and not changed:
        parts.append(f"no differences in {_count(len(list(diff)), 'call')}")
    for group, one, many in (
        (new_errors, "new error", "new errors"),
        (fixed, "error gone", "errors gone"),
        (status, "status changed", "statuses changed"),
        (types, "error type changed", "error types changed"),
        (errors, "error message changed", "error messages changed"),
        (inputs, "input changed", "inputs changed"),
        (outputs, "output changed", "outputs changed"),
        (other, "other call changed", "other calls changed"),
    ):
        if group:
            parts.append(f"{len(group)} {one if len(group) == 1 else many}")
    a, b = diff.before.totals, diff.after.totals
    if a.total_tokens != b.total_tokens:
        parts.append(f"tokens {_signed_int(b.total_tokens - a.total_tokens)}")
    parts.append(f"wall time {_delta_ms(a.wall_time_ms, b.wall_time_ms)}")
    if a.cost_usd is not None and b.cost_usd is not None:
        if abs(b.cost_usd - a.cost_usd) > 1e-12:
            parts.append(f"cost {_signed_cost(b.cost_usd - a.cost_usd)}")
    elif a.cost_usd is not None or b.cost_usd is not None:
        parts.append(f"cost {_cost(a.cost_usd)} -> {_cost(b.cost_usd)}")
    return ", ".join(parts)


def change_lines(diff: TraceDiff, limit: int = 50) -> list[str]:
    """``+``/``-``/``~`` and the call's path, then what changed; an added or removed
    subtree is one line. At most ``limit`` lines, then ``... and N more``."""
    lines: list[str] = []
    hidden = 0
    stack = list(reversed(diff.roots))
    while stack:
        call = stack.pop()
        if call.change in ("added", "removed"):
            line = _side_line(call)
        else:
            stack.extend(reversed(call.children))
            if call.change == "same":
                continue
            line = f"~ {_path(call)}: {_changed_text(call)}"
        if len(lines) < limit:
            lines.append(line)
        else:
            hidden += 1
    if hidden:
        lines.append(f"... and {hidden} more")
    return lines


def diff_dict(diff: TraceDiff) -> dict[str, Any]:
    """Both traces (their JSON form) and every call aligned (`call_rows`), in pre-order."""
    rows, counts = call_rows(diff)
    return {
        "version": DIFF_VERSION,
        "summary": summary_line(diff),
        "equal": diff.equal,
        "counts": counts,
        "before": _side(diff.before_label, diff.before),
        "after": _side(diff.after_label, diff.after),
        "calls": rows,
    }


def call_rows(diff: TraceDiff) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """Every call aligned, in pre-order, and how many of each change there are.

    Each row has ``change``, ``path``, ``name``, ``parent`` (row index, -1 for
    roots), ``a`` / ``b`` (the call's pre-order index in each trace, -1 when
    absent), ``fields``, and per run ``latency_ms``, ``tokens``, ``cost_usd``,
    ``status``; ``inputs`` / ``output`` hold the key-level changes of a changed
    call.
    """
    index_a = {id(node): k for k, node in enumerate(diff.before)}
    index_b = {id(node): k for k, node in enumerate(diff.after)}
    rows: list[dict[str, Any]] = []
    counts = {"same": 0, "changed": 0, "added": 0, "removed": 0}
    stack: list[tuple[CallDiff, int]] = [(root, -1) for root in reversed(diff.roots)]
    while stack:
        call, parent = stack.pop()
        counts[call.change] += 1
        rows.append(
            {
                "change": call.change,
                "path": list(call.path),
                "name": call.name,
                "parent": parent,
                "a": index_a.get(id(call.before), -1),
                "b": index_b.get(id(call.after), -1),
                "fields": list(call.fields),
                "latency_ms": list(call.latency_ms),
                "tokens": list(call.tokens),
                "cost_usd": list(call.cost_usd),
                "status": [_status(call.before), _status(call.after)],
                "inputs": call.inputs.to_dict() if call.inputs else None,
                "output": call.output.to_dict() if call.output else None,
            }
        )
        here = len(rows) - 1
        stack.extend((child, here) for child in reversed(call.children))
    return rows, counts


def _side(label: str, result: Any) -> dict[str, Any]:
    return {
        "label": label,
        "totals": totals_dict(result.totals),
        "nodes": [root.to_dict() for root in result.roots],
    }


def _side_line(call: CallDiff) -> str:
    size = sum(1 for _ in call)
    node = call.after if call.change == "added" else call.before
    sign = "+" if call.change == "added" else "-"
    extra = f" ({_count(size, 'call')})" if size > 1 else ""
    error = f", {node.error}" if node is not None and node.error else ""
    return f"{sign} {_path(call)}: {call.change}{extra}{error}"


def _changed_text(call: CallDiff) -> str:
    a, b = call.before, call.after
    assert a is not None and b is not None  # a changed call is a matched pair
    parts = []
    for name in call.fields:
        if name == "status":
            parts.append(_status_text(a, b))
        elif name == "error" and "status" not in call.fields:
            ea, eb = _error_type(a), _error_type(b)
            parts.append(
                f"error type changed: {ea} -> {eb}" if ea != eb else "error message changed"
            )
        elif name == "kind":
            parts.append(f"kind {a.kind} -> {b.kind}")
        elif name in ("inputs", "output"):
            value = call.inputs if name == "inputs" else call.output
            keys = [c.path for c in value.changes if c.path] if value else []
            shown = f" ({', '.join(keys[:3])}{', ...' if len(keys) > 3 else ''})" if keys else ""
            parts.append(f"{name} changed{shown}")
        elif name == "model":
            parts.append(f"model {a.meta.get('model')} -> {b.meta.get('model')}")
        elif name == "tokens":
            ta, tb = call.tokens
            parts.append(f"tokens {_maybe(ta)} -> {_maybe(tb)}")
        elif name == "cost":
            ca, cb = call.cost_usd
            parts.append(f"cost {_cost(ca)} -> {_cost(cb)}")
        elif name == "meta":
            parts.append("metadata changed")
    la, lb = call.latency_ms
    if la is not None and lb is not None:
        parts.append(f"latency {_delta_ms(la, lb)}")
    return ", ".join(parts)


def _status_text(a: TraceNode, b: TraceNode) -> str:
    """``status ok -> error (KeyError)``, ``error gone (was ValueError)``, or plain statuses."""
    if a.status == "error" and b.status != "error":
        was = _error_type(a)
        return f"error gone{f' (was {was})' if was else ''}, status now {b.status}"
    if b.status == "error":
        now = _error_type(b)
        return f"status {a.status} -> error{f' ({now})' if now else ''}"
    return f"status {a.status} -> {b.status}"


def _error_type(node: TraceNode | None) -> str:
    """The exception's type from an error text ``"KeyError: 'x'"`` ("" when it names none)."""
    text = node.error if node is not None and node.error else ""
    head = text.split(":", 1)[0].strip() if ":" in text else text.strip()
    return head if _TYPE.fullmatch(head) else ""


def _path(call: CallDiff) -> str:
    return " > ".join(call.path)


def _is_error(node: TraceNode | None) -> bool:
    """A failure to count: status error, and raised here when the trace says where."""
    if node is None or node.status != "error":
        return False
    return getattr(node, "error_origin", None) is not False


def _became(a: TraceNode | None, b: TraceNode | None) -> bool:
    return _is_error(b) and not (a is not None and a.status == "error")


def _status(node: TraceNode | None) -> str | None:
    return None if node is None else node.status


def _count(n: int, word: str) -> str:
    return f"{n:,} {word}" if n == 1 else f"{n:,} {word}s"


def _maybe(n: int | None) -> str:
    return "none" if n is None else f"{n:,}"


def _signed_int(n: int) -> str:
    return f"+{n:,}" if n >= 0 else f"-{-n:,}"


def _delta_ms(a: float, b: float) -> str:
    """``+340 ms (+18%)``: the change from ``a`` to ``b``, and its share of ``a``."""
    d = b - a
    size = abs(d)
    if size >= 1000:
        text = f"{size / 1000:.2f} s"
    elif size >= 10:
        text = f"{size:.0f} ms"
    else:
        text = f"{size:.1f} ms"
    sign = "-" if d < 0 else "+"
    if a <= 0:
        return f"{sign}{text}"
    share = abs(d) / a * 100
    if share >= 1000:  # ten times or more: a multiple reads better than a huge percentage
        return f"{sign}{text} ({b / a:,.0f} times as long)"
    shown = f"{share:.0f}" if share >= 1 or share == 0 else f"{share:.1f}"
    return f"{sign}{text} ({sign}{shown}%)"


def _signed_cost(d: float) -> str:
    return ("-" if d < 0 else "+") + _cost(abs(d))


def _cost(usd: float | None) -> str:
    """Dollars as every summary says them (`flow_xray.tree.figures.cost`) with a third
    significant digit, so two small costs that differ never read the same; or ``unknown``."""
    return "unknown" if usd is None else cost(usd, digits=3)
