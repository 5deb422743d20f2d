"""Pairing two runs' sibling calls: most calls matched by name, then the most alike pairs.

Used by `flow_xray.analysis.diff.compare` for the roots and the children of
every matched pair. Short lists are scored exactly (dynamic programming);
long ones get a shortest edit script over their names first (Myers), then
each gap is re-scored in a small window, so an inserted retry in a long list
still shows as the failed attempt. No OpenTelemetry here.
"""

from __future__ import annotations

from collections.abc import Sequence
from difflib import SequenceMatcher
from typing import TYPE_CHECKING

from flow_xray.analysis.diff.values import same

if TYPE_CHECKING:
    from flow_xray.tree.model import TraceNode

ALIGN_CELLS = 40_000  # sibling pairs scored exactly; past that, names are aligned first
SLACK = 16  # same-name calls next to a difference that the scoring may re-pair
MAX_EDITS = 2_000  # insertions + deletions the name alignment searches for before giving up


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
