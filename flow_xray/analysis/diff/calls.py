"""One call of two runs compared: `CallDiff`, and what makes a matched pair differ.

A matched pair differs when its status, error, inputs, output, kind, model,
tokens, cost or other metadata differ (`FIELDS`). Latency is compared and
reported but never makes two calls differ. No OpenTelemetry here.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeGuard

from flow_xray.analysis.diff.values import ValueDiff, diff_values

if TYPE_CHECKING:
    from flow_xray.tree.model import TraceNode

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


def compare(a: TraceNode | None, b: TraceNode | None, label: str) -> CallDiff:
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
