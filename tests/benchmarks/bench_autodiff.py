"""Benchmark the autodiff engine against micrograd, side by side in one process.

Run ``python tests/benchmarks/bench_autodiff.py``. The micrograd column needs
``pip install micrograd`` (not a test dependency); without it that column is
skipped. Printed: best-of-N build (forward) and backward times for graphs
both engines handle, their ratio (ours / micrograd; the target is <= 1.0), a
one-million-node chain (time and tracemalloc peak), and DOT / IR export of a
100k-node graph.
"""

from __future__ import annotations

import gc
import importlib.util
import random
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import machine  # noqa: F401  (imported first: this checkout's flow_xray, not an installed one)

from flow_xray.autodiff import (
    Value,
    graph_to_ir,
    topological_order,
    value_graph_to_dot,
)

Builder = Callable[[type], Any]


def mlp_builder(seed: int = 0) -> Builder:
    """A micrograd-``nn.py``-style MLP 3 -> 16 -> 16 -> 1 (relu) over 8 samples, sum of squares."""
    rng = random.Random(seed)
    dims = [3, 16, 16, 1]
    weights = [
        [[rng.uniform(-1, 1) for _ in range(dims[i])] for _ in range(dims[i + 1])]
        for i in range(len(dims) - 1)
    ]
    xs = [[rng.uniform(-1, 1) for _ in range(3)] for _ in range(8)]

    def build(value_cls: type) -> Any:
        params = [[[value_cls(w) for w in row] for row in layer] for layer in weights]
        loss = value_cls(0.0)
        for x in xs:
            act = [value_cls(v) for v in x]
            for depth, layer in enumerate(params):
                outs = []
                for row in layer:
                    total = sum((w * a for w, a in zip(row, act, strict=True)), value_cls(0.0))
                    outs.append(total.relu() if depth < len(params) - 1 else total)
                act = outs
            loss = loss + (act[0] - 1.0) ** 2
        return loss

    return build


def chain_builder(steps: int) -> Builder:
    """``y = relu(y * 1.0001)`` repeated: depth ``2 * steps``, 3 nodes per step."""

    def build(value_cls: type) -> Any:
        y = value_cls(0.5)
        for _ in range(steps):
            y = (y * 1.0001).relu()
        return y

    return build


def tree_builder(leaves: int) -> Builder:
    """A balanced tree of products and sums over ``leaves`` inputs (wide, shallow)."""

    def build(value_cls: type) -> Any:
        level = [value_cls(0.001 * k) for k in range(leaves)]
        flip = False
        while len(level) > 1:
            carry = level[-1:] if len(level) % 2 else []
            pairs = zip(level[0::2], level[1::2], strict=False)
            level = [a * b if flip else a + b for a, b in pairs] + carry
            flip = not flip
        return level[0]

    return build


def best_of(repeats: int, build: Builder, value_cls: type) -> tuple[float, float]:
    """Best build time and best backward time (seconds) over ``repeats`` fresh graphs."""
    best_build = best_back = float("inf")
    for _ in range(repeats):
        gc.collect()  # micrograd's closures leave cyclic garbage; start each run clean
        t0 = time.perf_counter()
        root = build(value_cls)
        t1 = time.perf_counter()
        root.backward()
        t2 = time.perf_counter()
        best_build, best_back = min(best_build, t1 - t0), min(best_back, t2 - t1)
        del root
    return best_build, best_back


def micrograd_value() -> type | None:
    """micrograd's Value class, or None when micrograd is not installed."""
    if importlib.util.find_spec("micrograd") is None:
        return None
    from micrograd.engine import Value as MicrogradValue

    return MicrogradValue  # type: ignore[no-any-return]


def compare() -> None:
    """Print ours vs micrograd for graphs both engines handle."""
    theirs = micrograd_value()
    cases = [
        ("mlp 3-16-16-1 x8", mlp_builder(), 20),
        ("chain depth 900", chain_builder(450), 50),
        ("tree 4096 leaves", tree_builder(4096), 20),
    ]
    print(
        "graph                 nodes   ours build  ours back   mg build    mg back  "
        "back ratio  total ratio"
    )
    for name, build, repeats in cases:
        nodes = len(topological_order(build(Value)))
        ours = best_of(repeats, build, Value)
        row = f"{name:<20} {nodes:>6}  {ours[0] * 1e3:>8.2f}ms {ours[1] * 1e3:>8.2f}ms"
        if theirs is None:
            print(row + "   (micrograd not installed: pip install micrograd)")
            continue
        mg = best_of(repeats, build, theirs)
        back_ratio = ours[1] / mg[1]
        total_ratio = sum(ours) / sum(mg)
        print(
            row + f" {mg[0] * 1e3:>8.2f}ms {mg[1] * 1e3:>8.2f}ms"
            f" {back_ratio:>10.2f}x {total_ratio:>11.2f}x"
        )


def million_chain() -> None:
    """Time and peak memory of a one-million-node chain."""
    n = 1_000_000

    def build() -> Value:
        y = Value(0.5)
        for _ in range(n - 1):
            y = -y
        return y

    gc.collect()
    t0 = time.perf_counter()
    root = build()
    t1 = time.perf_counter()
    order = topological_order(root)
    t2 = time.perf_counter()
    root.backward()
    t3 = time.perf_counter()
    print(
        f"\n1M-node chain: build {t1 - t0:.2f}s, topological order {t2 - t1:.2f}s, "
        f"backward (incl. its own ordering) {t3 - t2:.2f}s, nodes {len(order)}"
    )
    del root, order
    gc.collect()
    tracemalloc.start()
    root = build()
    built = tracemalloc.get_traced_memory()[0]
    tracemalloc.reset_peak()
    root.backward()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    print(
        f"1M-node chain memory: graph {built / 2**20:.0f} MiB ({built / n:.0f} B/node), "
        f"peak during backward {peak / 2**20:.0f} MiB (+{(peak - built) / 2**20:.0f} MiB)"
    )


def export_100k() -> None:
    """DOT and IR export time of a 100k-node graph."""
    root = tree_builder(50_001)(Value)
    nodes = len(topological_order(root))
    root.backward()
    t0 = time.perf_counter()
    dot = value_graph_to_dot(root, show_grad=True)
    t1 = time.perf_counter()
    graph_to_ir(root)
    t2 = time.perf_counter()
    print(
        f"\nexport of {nodes} nodes: DOT {t1 - t0:.2f}s ({len(dot) / 2**20:.1f} MiB), "
        f"IR dict {t2 - t1:.2f}s"
    )


if __name__ == "__main__":
    compare()
    million_chain()
    export_100k()
