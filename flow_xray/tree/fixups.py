"""Parent fix-ups for two instrumentations whose spans name the wrong parent. No OpenTelemetry.

Made where the tree is built (`flow_xray.tree.build`), on the parent links
before any node exists, so every reader of a trace — a capture, a file, the
viewer, the accounting — sees the same tree:

- **opentelemetry-util-genai's context after a returned stream.** The official
  OpenAI instrumentation (``opentelemetry-instrumentation-openai-v2``, through
  ``opentelemetry-util-genai``) attaches its span's context for a stream the
  call returned and restores, when the stream ends, the context of the call
  that returned it — which has ended by then. Every span started afterwards
  names that ended call as its parent. A span whose parent had a util-genai
  child still open when it ended, and which started after that parent ended,
  goes to the nearest ancestor still open when it started.
- **OpenInference's LangChain spans are parented by run id, never attached as
  the current context.** A span another instrumentation (or ``@trace``) opens
  inside a LangChain run (a traced function used as a tool, the OpenAI
  instrumentor's span inside ``ChatOpenAI``) names the run's caller as its
  parent, beside the run's own span. Such a span goes under the innermost
  LangChain span of its siblings that spans it in time, when exactly one does.

Both cost nothing on traces without those instrumentations' spans: the rows
are told apart by their attribute keys, read once per distinct key set.
"""

from __future__ import annotations

from collections.abc import MutableSequence, Sequence
from typing import Final

from flow_xray import attributes as attr
from flow_xray.tree.spans import SpanRecord, SpanStore

__all__ = ["fix_parents"]

_GENAI_SCOPES: Final = attr.GENAI_UTIL_SCOPES
_LANGCHAIN_SCOPE: Final = attr.LANGCHAIN_SCOPE


class _Spans:
    """Scope and end time of the built spans, by position (``kept[pos]`` is the span)."""

    def __init__(
        self, spans: Sequence[SpanRecord], store: SpanStore | None, kept: Sequence[int]
    ) -> None:
        self.spans, self.store, self.kept = spans, store, kept
        self.rows = len(store.shapes()) if store is not None else 0

    def _record(self, at: int) -> SpanRecord | None:
        row = self.kept[at]
        if self.store is None:
            return self.spans[row]
        return self.store.appended[row - self.rows] if row >= self.rows else None

    def end(self, at: int) -> int | None:
        record = self._record(at)
        if record is not None:
            return record.end_ns
        assert self.store is not None
        parts = self.store.parts(self.kept[at])
        return None if parts is None else parts[5]

    def scoped(self) -> list[tuple[int, str]]:
        """The positions of other instrumentations' spans, with their scope names."""
        out: list[tuple[int, str]] = []
        if self.store is None:
            for at, row in enumerate(self.kept):
                scope = self.spans[row].attributes.get(attr.OTEL_SCOPE_NAME)
                if isinstance(scope, str):
                    out.append((at, scope))
            return out
        shapes = self.store.shapes()
        flagged = {
            id(s) for s in {id(s): s for s in shapes}.values() if attr.OTEL_SCOPE_NAME in s[2]
        }
        for at, row in enumerate(self.kept):
            if row >= self.rows:
                record = self.store.appended[row - self.rows]
                scope = record.attributes.get(attr.OTEL_SCOPE_NAME)
            elif id(shapes[row]) in flagged:
                keys = shapes[row][2]
                parts = self.store.parts(row)
                scope = None if parts is None else parts[8][keys.index(attr.OTEL_SCOPE_NAME)]
            else:
                continue
            if isinstance(scope, str):
                out.append((at, scope))
        return out


def fix_parents(
    parents: MutableSequence[int],
    starts: Sequence[int],
    spans: Sequence[SpanRecord],
    store: SpanStore | None,
    kept: Sequence[int],
) -> None:
    """Correct ``parents`` (each position's parent position, -1 for a root) in place."""
    info = _Spans(spans, store, kept)
    scoped = info.scoped()
    genai = [at for at, scope in scoped if scope.startswith(_GENAI_SCOPES)]
    chains = {at for at, scope in scoped if scope.startswith(_LANGCHAIN_SCOPE)}
    if not genai and not chains:
        return
    wanted = {parents[at] for at in genai} | {parents[at] for at in chains} | chains
    children: dict[int, list[int]] = {}
    for at, parent in enumerate(parents):
        if parent in wanted:
            children.setdefault(parent, []).append(at)
    if genai:
        _leaked_context(parents, starts, info, genai, children)
    if chains:
        _into_langchain(parents, starts, info, chains, children)


def _leaked_context(
    parents: MutableSequence[int],
    starts: Sequence[int],
    info: _Spans,
    genai: Sequence[int],
    children: dict[int, list[int]],
) -> None:
    for stream in genai:
        parent = parents[stream]
        if parent < 0:
            continue
        parent_end, stream_end = info.end(parent), info.end(stream)
        if parent_end is None or (stream_end is not None and stream_end <= parent_end):
            continue  # the stream's span ended inside its parent: no context was left behind
        for child in children.get(parent, ()):
            if child == stream or starts[child] <= parent_end:
                continue
            above = parents[parent]
            while above >= 0 and (end := info.end(above)) is not None and end < starts[child]:
                above = parents[above]
            parents[child] = above


def _into_langchain(
    parents: MutableSequence[int],
    starts: Sequence[int],
    info: _Spans,
    chains: set[int],
    children: dict[int, list[int]],
) -> None:
    def spans(run: int, child: int) -> bool:
        run_end, child_end = info.end(run), info.end(child)
        return starts[run] <= starts[child] and (
            run_end is None or (child_end is not None and child_end <= run_end)
        )

    for siblings in children.values():
        runs = [at for at in siblings if at in chains]
        if not runs:
            continue
        for child in siblings:
            if child in chains:
                continue
            holders = [run for run in runs if spans(run, child)]
            if len(holders) != 1:
                continue  # none, or concurrent runs: which one is not known
            run = holders[0]
            while True:  # the innermost LangChain span holding it
                inner = [c for c in children.get(run, ()) if c in chains and spans(c, child)]
                if len(inner) != 1:
                    break
                run = inner[0]
            parents[child] = run
