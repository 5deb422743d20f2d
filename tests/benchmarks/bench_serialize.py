"""Cost of capturing values: `encode_inputs` / `encode_output` beside plain `json.dumps`.

Run: ``python tests/benchmarks/bench_serialize.py``. Prints the best of several
repeats, measured side by side in this process. Typical argument shapes are in
µs per call; huge values are in ms per call and must stay bounded (they are
capped early, so they should not cost what serializing them in full costs).
Values of data libraries (numpy, pandas, when installed) and of the standard
library are set beside ``json.dumps`` of the same values as Python data (what
the recorded JSON holds), and a frame beside its ``repr``.
"""

from __future__ import annotations

import dataclasses
import datetime
import importlib.util
import json
import timeit
from collections.abc import Callable
from typing import Any

import machine  # noqa: F401  (imported first: this checkout's flow_xray, not an installed one)

from flow_xray.serialize import encode_inputs, encode_output, get_limits

LIMITS = get_limits()
CAP = LIMITS.max_value_bytes


@dataclasses.dataclass
class Document:
    id: int
    title: str
    tags: list[str]
    score: float


def best_seconds(func: Callable[[], Any], repeat: int = 5) -> float:
    """Best per-call time over `repeat` runs, each long enough to be measurable."""
    timer = timeit.Timer(func)
    number, _ = timer.autorange()
    return min(timer.repeat(repeat=repeat, number=number)) / number


def typical_shapes() -> list[tuple[str, dict[str, Any]]]:
    message = {"role": "user", "content": "Summarise the attached report in three bullets."}
    return [
        ("3 primitives + short list", {"a": 1, "b": "text", "c": [1, 2, 3]}),
        ("8 scalar kwargs", {f"k{i}": (i if i % 2 else f"v{i}") for i in range(8)}),
        (
            "chat call (nested dicts)",
            {"messages": [message] * 4, "model": "gpt-4o", "temperature": 0.2, "tools": []},
        ),
        ("secret argument", {"query": "weather in Paris", "api_key": "sk-live-abc"}),
        ("10 KB string", {"doc": "lorem ipsum " * 850}),
    ]


def main() -> None:
    print(f"{'typical arguments':<28}{'encode_inputs µs':>18}{'json.dumps µs':>16}{'ratio':>8}")
    for name, args in typical_shapes():
        ours = best_seconds(lambda args=args: encode_inputs(args, LIMITS, CAP))
        plain = best_seconds(lambda args=args: json.dumps(args))
        print(f"{name:<28}{ours * 1e6:>18.2f}{plain * 1e6:>16.2f}{ours / plain:>8.2f}")

    docs = [Document(i, f"title {i}", ["a", "b"], i / 3) for i in range(20)]
    ours = best_seconds(lambda: encode_inputs({"docs": docs}, LIMITS, CAP))
    plain = best_seconds(lambda: json.dumps({"docs": [dataclasses.asdict(d) for d in docs]}))
    print(f"{'20 dataclasses':<28}{ours * 1e6:>18.2f}{plain * 1e6:>16.2f}{ours / plain:>8.2f}")
    ours = best_seconds(lambda: encode_output("a short answer", LIMITS, CAP))
    print(f"{'str output':<28}{ours * 1e6:>18.2f}{'':>16}{'':>8}")

    print()
    data_values()
    print()
    print(f"{'huge values':<28}{'encode_inputs ms':>18}{'json.dumps ms':>16}{'out bytes':>10}")
    big_string = "z" * 5_000_000
    big_list = list(range(1_000_000))
    huge: list[tuple[str, Any, bool]] = [
        ("5 MB string", big_string, True),
        ("1M-element list", big_list, True),
        ("100k-key dict", {f"k{i}": i for i in range(100_000)}, True),
        ("200x200 nested lists", [[j for j in range(200)] for _ in range(200)], True),
        ("1M-element set (sorted)", set(big_list), False),
    ]
    for name, value, dumpable in huge:
        ours = best_seconds(lambda value=value: encode_inputs({"v": value}, LIMITS, CAP), 3)
        size = len(encode_inputs({"v": value}, LIMITS, CAP).encode())
        plain = best_seconds(lambda value=value: json.dumps({"v": value}), 3) if dumpable else None
        shown = f"{plain * 1e3:>16.2f}" if plain is not None else f"{'n/a':>16}"
        print(f"{name:<28}{ours * 1e3:>18.3f}{shown}{size:>10}")


def data_values() -> None:
    """Values of data libraries and the standard library, beside json.dumps of the same
    values as Python data (a frame beside its repr, which is what a repr-based tracer keeps)."""
    print(f"{'data values':<28}{'encode_inputs µs':>18}{'json.dumps µs':>16}{'ratio':>8}")
    days = [datetime.datetime(2024, 1, 1, i % 24) for i in range(100)]
    rows: list[tuple[str, Any, Callable[[], Any]]] = [
        ("100 datetimes", days, lambda: json.dumps({"v": [d.isoformat() for d in days]})),
    ]
    if importlib.util.find_spec("numpy") is not None:
        import numpy as np  # (optional: only when installed)

        floats = [np.float64(i) / 3 for i in range(100)]
        step = np.int64(7)
        rows += [
            ("100 numpy floats", floats, lambda: json.dumps({"v": [float(x) for x in floats]})),
            ("numpy int64", step, lambda: json.dumps({"v": int(step)})),
        ]
        if importlib.util.find_spec("pandas") is not None:
            import pandas as pd

            frame = pd.DataFrame({"a": np.arange(100_000), "b": np.arange(100_000) / 3})
            rows.append(("DataFrame 100k rows (repr)", frame, lambda: repr(frame)))
    for name, value, plain in rows:
        ours = best_seconds(lambda value=value: encode_inputs({"v": value}, LIMITS, CAP))
        theirs = best_seconds(plain)
        print(f"{name:<28}{ours * 1e6:>18.2f}{theirs * 1e6:>16.2f}{ours / theirs:>8.2f}")


if __name__ == "__main__":
    main()
