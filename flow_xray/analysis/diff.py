"""A span-level comparison of two runs: which calls were added, removed or changed, and how.

Calls are matched structurally, never by span id: the roots, then the
children of every matched pair, are aligned by name in order, maximising the
number of matched calls. Among alignments with as many matches, the one that
pairs calls most alike (same status, then output, then inputs) wins, so an
inserted retry shows as one added call, the failed attempt, while the attempt
that succeeded in both runs stays matched. Unmatched calls are added or
removed with their whole subtree.

A matched pair differs when its status, error, inputs, output, kind, model,
tokens, cost or other metadata differ. Latency is compared and reported
(``wall time +340 ms (+18%)``) but never makes two runs differ: timings
always move a little, and a diff that can gate CI must not flap on them.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields
from difflib import SequenceMatcher
from typing import TYPE_CHECKING, Any, TypeGuard

from flow_xray.analysis.values import ValueDiff, diff_values, same

if TYPE_CHECKING:
    from flow_xray.tree.model import Totals, TraceNode, TraceResult

ALIGN_CELLS = 40_000  # sibling pairs scored exactly; past that, names are aligned first
SLACK = 16  # same-name calls next to a difference that the scoring may re-pair
MAX_EDITS = 2_000  # insertions + deletions the name alignment searches for before giving up
# What makes a matched call "changed", in the order changes are listed.
FIELDS = ("status", "error", "kind", "inputs", "output", "model", "tokens", "cost", "meta")
_USAGE_META = frozenset(
    ("model", "prompt_tokens", "completion_tokens", "total_tokens", "estimated_cost_usd")
)


@dataclass(eq=False)
class CallDiff:
    """One call of either run: matched (``same`` / ``changed``), ``added`` or ``removed``.

    ``label`` is the call's name, with ``#2`` for the second of several
    same-name siblings, and ``path`` the labels from the root; ``fields``
    lists what differs (see `FIELDS`), ``inputs`` / ``output`` say how: key
    by key, or as a text diff.
    """

    change: str
    label: str
    before: TraceNode | None
    after: TraceNode | None
    fields: tuple[str, ...] = ()
    inputs: ValueDiff | None = None
    output: ValueDiff | None = None
    children: list[CallDiff] = field(default_factory=list)
    parent: CallDiff | None = field(default=None, repr=False)

    @property
    def path(self) -> tuple[str, ...]:
        """The labels from the root call down to this one."""
        labels = []
        call: CallDiff | None = self
        while call is not None:
            labels.append(call.label)
            call = call.parent
        return tuple(reversed(labels))

    @property
    def name(self) -> str:
        """The call's name (both runs agree when matched)."""
        node = self.after if self.after is not None else self.before
        return node.name if node is not None else "?"

    @property
    def latency_ms(self) -> tuple[float | None, float | None]:
        """Latency in each run (None when absent or never ended)."""
        return (_latency(self.before), _latency(self.after))

    @property
    def latency_delta_ms(self) -> float | None:
        """How much slower the second run's call was (negative: faster); None if unknown."""
        a, b = self.latency_ms
        return None if a is None or b is None else b - a

    @property
    def tokens(self) -> tuple[int | None, int | None]:
        """Total tokens reported by the call in each run."""
        return (_tokens(self.before), _tokens(self.after))

    @property
    def cost_usd(self) -> tuple[float | None, float | None]:
        """Estimated cost of the call in each run (None when unknown)."""
        return (_cost(self.before), _cost(self.after))

    def __iter__(self) -> Iterator[CallDiff]:
        """This call and everything under it, in pre-order (iteratively)."""
        stack = [self]
        while stack:
            call = stack.pop()
            yield call
            stack.extend(reversed(call.children))


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
        from flow_xray.analysis.report import summary_line

        return summary_line(self)

    def report(self, limit: int = 50) -> list[str]:
        """One line per added, removed or changed call (at most ``limit``, then a count)."""
        from flow_xray.analysis.report import change_lines

        return change_lines(self, limit)

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON and the diff viewer: both traces and the aligned calls."""
        from flow_xray.analysis.report import diff_dict

        return diff_dict(self)

    def to_html(
        self, path: str | os.PathLike[str] | None = None, title: str = "flow-xray diff"
    ) -> str:
        """Return the offline diff viewer page; also write it to ``path`` if given."""
        from flow_xray.files import write_text_atomic
        from flow_xray.render.diff_html import diff_to_html

        html: str = diff_to_html(self.to_dict(), title=title)
        if path is not None:
            write_text_atomic(path, html)
        return html


def diff_traces(
    before: TraceResult,
    after: TraceResult,
    before_label: str = "before",
    after_label: str = "after",
) -> TraceDiff:
    """Compare two runs call by call (see the module docstring for how calls are matched)."""
    roots: list[CallDiff] = []
    work: list[tuple[Sequence[TraceNode], Sequence[TraceNode], CallDiff | None]]
    work = [(before.roots, after.roots, None)]
    while work:
        a_list, b_list, parent = work.pop()
        labels = _Labels(a_list, b_list)
        out = roots if parent is None else parent.children
        for i, j in align(a_list, b_list):
            a = a_list[i] if i is not None else None
            b = b_list[j] if j is not None else None
            call = _compare(a, b, labels[(i, j)])
            call.parent = parent
            out.append(call)
            work.append((a.children if a else (), b.children if b else (), call))
    return TraceDiff(before, after, roots, before_label, after_label)


def align(a: Sequence[TraceNode], b: Sequence[TraceNode]) -> list[tuple[int | None, int | None]]:
    """Pair two sibling lists in order: ``(i, j)`` matched, ``(i, None)`` removed,
    ``(None, j)`` added. Only calls with the same name are matched."""
    names_a = [n.name for n in a]
    names_b = [n.name for n in b]
    if names_a == names_b:
        return [(i, i) for i in range(len(a))]
    # Common ends match as they are, except the last few of a same-name run touching the
    # changed middle: which of those calls is the extra one is for the scoring to decide.
    head = 0
    while head < min(len(a), len(b)) and names_a[head] == names_b[head]:
        head += 1
    slack = 0
    while (
        head
        and slack < SLACK
        and (_at(names_a, head) == names_a[head - 1] or _at(names_b, head) == names_a[head - 1])
    ):
        head -= 1
        slack += 1
    tail = 0
    while tail < min(len(a), len(b)) - head and names_a[-1 - tail] == names_b[-1 - tail]:
        tail += 1
    slack = 0
    while (
        tail
        and slack < SLACK
        and (
            _at(names_a, len(a) - tail - 1, head) == names_a[len(a) - tail]
            or _at(names_b, len(b) - tail - 1, head) == names_b[len(b) - tail]
        )
    ):
        tail -= 1
        slack += 1
    mid_a = range(head, len(a) - tail)
    mid_b = range(head, len(b) - tail)
    if len(mid_a) * len(mid_b) <= ALIGN_CELLS:
        middle = _best_alignment(a, b, mid_a, mid_b)
    else:
        middle = _refined(a, b, _name_alignment(names_a, names_b, mid_a, mid_b))
    return [
        *((k, k) for k in range(head)),
        *middle,
        *((len(a) - tail + k, len(b) - tail + k) for k in range(tail)),
    ]


def _at(names: Sequence[str], index: int, low: int = 0) -> str | None:
    return names[index] if low <= index < len(names) else None


def _best_alignment(
    a: Sequence[TraceNode], b: Sequence[TraceNode], rows: range, cols: range
) -> list[tuple[int | None, int | None]]:
    """Most matched calls, then most alike pairs (dynamic programming, ints only)."""
    n, m = len(rows), len(cols)
    weight = 8 * (min(n, m) + 1)  # one more match outweighs any likeness
    score = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(1, n + 1):
        x = a[rows[i - 1]]
        row, up = score[i], score[i - 1]
        for j in range(1, m + 1):
            best = max(up[j], row[j - 1])
            y = b[cols[j - 1]]
            if x.name == y.name:
                best = max(best, up[j - 1] + weight + _likeness(x, y))
            row[j] = best
    pairs: list[tuple[int | None, int | None]] = []
    i, j = n, m
    while i or j:
        if j and score[i][j] == score[i][j - 1]:
            j -= 1
            pairs.append((None, cols[j]))
        elif i and score[i][j] == score[i - 1][j]:
            i -= 1
            pairs.append((rows[i], None))
        else:
            i, j = i - 1, j - 1
            pairs.append((rows[i], cols[j]))
    pairs.reverse()
    return pairs


def _name_alignment(
    names_a: Sequence[str], names_b: Sequence[str], rows: range, cols: range
) -> list[tuple[int | None, int | None]]:
    """For long sibling lists: a shortest edit script over the names (Myers' O((N+M)D)
    algorithm, fast when the lists differ in few places); past `MAX_EDITS` differences,
    difflib's matching blocks."""
    a = [names_a[i] for i in rows]
    b = [names_b[j] for j in cols]
    matches = _myers(a, b, MAX_EDITS)
    if matches is None:
        matcher = SequenceMatcher(None, a, b)  # autojunk: fast on any input, if rougher
        matches = [
            (i + k, j + k) for i, j, size in matcher.get_matching_blocks() for k in range(size)
        ]
    pairs: list[tuple[int | None, int | None]] = []
    i = j = 0
    for mi, mj in [*matches, (len(a), len(b))]:
        pairs.extend((rows[x], None) for x in range(i, mi))
        pairs.extend((None, cols[y]) for y in range(j, mj))
        if mi < len(a):
            pairs.append((rows[mi], cols[mj]))
        i, j = mi + 1, mj + 1
    return pairs


def _myers(a: Sequence[str], b: Sequence[str], max_d: int) -> list[tuple[int, int]] | None:
    """The matched positions of a shortest edit script from ``a`` to ``b``, in order;
    None when more than ``max_d`` insertions and deletions are needed."""
    n, m = len(a), len(b)
    offset = max_d + 1
    v = [0] * (2 * offset + 1)
    history: list[list[int]] = []
    for d in range(max_d + 1):
        history.append(v[offset - d - 1 : offset + d + 2])
        for k in range(-d, d + 1, 2):
            if k == -d or (k != d and v[offset + k - 1] < v[offset + k + 1]):
                x = v[offset + k + 1]  # down: an insertion
            else:
                x = v[offset + k - 1] + 1  # right: a deletion
            y = x - k
            while x < n and y < m and a[x] == b[y]:
                x += 1
                y += 1
            v[offset + k] = x
            if x >= n and y >= m:
                return _myers_path(history, n, m, d)
    return None


def _myers_path(
    history: Sequence[Sequence[int]], n: int, m: int, depth: int
) -> list[tuple[int, int]]:
    matches: list[tuple[int, int]] = []
    x, y = n, m
    for d in range(depth, 0, -1):
        v = history[d]  # the furthest x per diagonal after d - 1 edits, from diagonal -d - 1
        k = x - y
        down = k == -d or (k != d and v[k - 1 + d + 1] < v[k + 1 + d + 1])
        prev_k = k + 1 if down else k - 1
        prev_x = v[prev_k + d + 1]
        start_x = prev_x if down else prev_x + 1
        while x > start_x:
            x, y = x - 1, y - 1
            matches.append((x, y))
        x, y = prev_x, prev_x - prev_k
    while x > 0 and y > 0:
        x, y = x - 1, y - 1
        matches.append((x, y))
    matches.reverse()
    return matches


def _refined(
    a: Sequence[TraceNode], b: Sequence[TraceNode], pairs: list[tuple[int | None, int | None]]
) -> list[tuple[int | None, int | None]]:
    """Re-align, by likeness, a small window around every gap of a name alignment: so an
    inserted retry in a long list is the failed attempt there too."""
    out: list[tuple[int | None, int | None]] = []
    k = 0
    while k < len(pairs):
        if pairs[k][0] is not None and pairs[k][1] is not None:
            out.append(pairs[k])
            k += 1
            continue
        start = k
        while k < len(pairs) and (pairs[k][0] is None or pairs[k][1] is None):
            k += 1
        # The window: the gap, SLACK matched pairs before it (already in `out`) and after.
        back = 0
        while back < SLACK and out and out[-1][0] is not None and out[-1][1] is not None:
            out.pop()
            back += 1
        end = k
        while (
            end < len(pairs)
            and end - k < SLACK
            and pairs[end][0] is not None
            and pairs[end][1] is not None
        ):
            end += 1
        window = pairs[start - back : end]
        rows = sorted(i for i, _ in window if i is not None)
        cols = sorted(j for _, j in window if j is not None)
        if rows and cols and len(rows) * len(cols) <= ALIGN_CELLS:
            out.extend(
                _best_alignment(a, b, range(rows[0], rows[-1] + 1), range(cols[0], cols[-1] + 1))
            )
        else:
            out.extend(window)
        k = end
    return out


def _likeness(x: TraceNode, y: TraceNode) -> int:
    return 4 * (x.status == y.status) + 2 * same(x.output, y.output) + same(x.inputs, y.inputs)


class _Labels:
    """``name``, or ``name #k`` when a name repeats among siblings (k counts in the run
    the call is from: the second run for matched and added calls)."""

    def __init__(self, a: Sequence[TraceNode], b: Sequence[TraceNode]) -> None:
        self.a, self.b = _ordinals(a), _ordinals(b)

    def __getitem__(self, pair: tuple[int | None, int | None]) -> str:
        i, j = pair
        name, k, many = self.b[j] if j is not None else self.a[i if i is not None else 0]
        return f"{name} #{k}" if many else name


def _ordinals(nodes: Sequence[TraceNode]) -> list[tuple[str, int, bool]]:
    counts: dict[str, int] = {}
    seen: list[tuple[str, int]] = []
    for node in nodes:
        counts[node.name] = counts.get(node.name, 0) + 1
        seen.append((node.name, counts[node.name]))
    return [(name, k, counts[name] > 1) for name, k in seen]


def _compare(a: TraceNode | None, b: TraceNode | None, label: str) -> CallDiff:
    if a is None or b is None:
        return CallDiff("added" if a is None else "removed", label, a, b)
    inputs = diff_values(a.inputs, b.inputs)
    output = diff_values(a.output, b.output)
    meta_a, meta_b = _meta(a), _meta(b)
    differs = {
        "status": a.status != b.status,
        "error": a.error != b.error,
        "kind": a.kind != b.kind,
        "inputs": inputs is not None,
        "output": output is not None,
        "model": meta_a.get("model") != meta_b.get("model"),
        "tokens": _tokens(a) != _tokens(b),
        "cost": not _same_cost(_cost(a), _cost(b)),
        "meta": _user_meta(meta_a) != _user_meta(meta_b),
    }
    changed = tuple(name for name in FIELDS if differs[name])
    return CallDiff("changed" if changed else "same", label, a, b, changed, inputs, output)


def _meta(node: TraceNode) -> Mapping[str, Any]:
    return node.meta if isinstance(node.meta, Mapping) else {}


def _user_meta(meta: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in meta.items() if k not in _USAGE_META}


def _latency(node: TraceNode | None) -> float | None:
    value = None if node is None else node.latency_ms
    return float(value) if _is_number(value) else None


def _tokens(node: TraceNode | None) -> int | None:
    if node is None:
        return None
    meta = _meta(node)
    total = meta.get("total_tokens")
    if _is_int(total):
        return int(total)
    parts = [meta.get("prompt_tokens"), meta.get("completion_tokens")]
    counts = [int(v) for v in parts if _is_int(v)]
    return sum(counts) if counts else None


def _cost(node: TraceNode | None) -> float | None:
    value = None if node is None else _meta(node).get("estimated_cost_usd")
    return float(value) if _is_number(value) else None


def _same_cost(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is b
    return abs(a - b) <= 1e-12 * max(1.0, abs(a), abs(b))


def _is_number(value: Any) -> TypeGuard[int | float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_int(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def totals_dict(totals: Totals) -> dict[str, Any]:
    """A `Totals` as plain data (every field it has)."""
    return {f.name: getattr(totals, f.name) for f in fields(totals)}
