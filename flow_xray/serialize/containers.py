"""Standard-library containers whose own repr renders everything: read within the cap.

``repr`` of a ``functools.partial`` renders its function, every argument and
keyword; of an ``argparse.Namespace`` or ``types.SimpleNamespace`` every
attribute; a ``ChainMap``'s ``len`` and iteration build the union of all its
maps first. `known_shape` gives the bounded walk (`flow_xray.serialize.walk`)
their contents as ``(name, value)`` pairs read lazily, so the walk stops at
its item cap and output budget before anything big is built. Everything is
read through the built-in types' own descriptors and the instance
``__dict__``, never through the object's attribute hooks. No OpenTelemetry here.
"""

from __future__ import annotations

import collections
import functools
import itertools
import sys
import types
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Final

from flow_xray.serialize.shapes import instance_dict

# Keys a ChainMap walk may look at per key it shows (shadowed keys are skipped).
_CHAIN_PROBES: Final = 4
_CHAIN_MAPS: Final = 64
_PARTIAL_FUNC: Final = functools.partial.__dict__["func"]
_PARTIAL_ARGS: Final = functools.partial.__dict__["args"]
_PARTIAL_KEYWORDS: Final = functools.partial.__dict__["keywords"]

Shape = tuple[Iterable[tuple[Any, Any]], "int | None"]


def known_shape(value: Any, kind: type) -> Shape | None:
    """``(pairs, count)`` for a partial, a namespace or a ChainMap (checked by type), else None."""
    if issubclass(kind, functools.partial):
        return _partial(value)
    if issubclass(kind, types.SimpleNamespace) or _is_argparse_namespace(kind):
        found = instance_dict(value) or {}
        return dict.items(found), len(found)
    if issubclass(kind, collections.ChainMap):
        maps = (instance_dict(value) or {}).get("maps")
        if type(maps) is not list:
            return None
        return _chained(maps), None
    return None


def is_shape_class(kind: type) -> bool:
    """Whether `known_shape` reads values of ``kind`` (it may still find one unreadable)."""
    return issubclass(
        kind, (functools.partial, types.SimpleNamespace, collections.ChainMap)
    ) or _is_argparse_namespace(kind)


def _partial(value: Any) -> Shape:
    """``func``, ``args`` and ``keywords`` of a partial, from its C slots."""
    pairs = (
        ("func", _PARTIAL_FUNC.__get__(value)),
        ("args", _PARTIAL_ARGS.__get__(value)),
        ("keywords", _PARTIAL_KEYWORDS.__get__(value)),
    )
    return pairs, 3


def _is_argparse_namespace(kind: type) -> bool:
    module = sys.modules.get("argparse")
    namespace = getattr(module, "Namespace", None) if module is not None else None
    return isinstance(namespace, type) and issubclass(kind, namespace)


def _chained(maps: list[Any]) -> Iterator[tuple[Any, Any]]:
    """A ChainMap's ``(key, value)`` pairs, first map first, a key shadowed by an earlier
    map skipped; stops once it has looked at `_CHAIN_PROBES` keys per key it gave."""
    seen: set[Any] = set()
    looked = 0
    for mapping in itertools.islice(maps, _CHAIN_MAPS):
        pairs = dict.items(mapping) if issubclass(type(mapping), dict) else _items(mapping)
        for key, item in pairs:
            looked += 1
            if looked > _CHAIN_PROBES * (len(seen) + 1) + 256:
                return
            if key in seen:
                continue
            seen.add(key)
            yield key, item


def _items(mapping: Any) -> Iterable[tuple[Any, Any]]:
    return mapping.items() if issubclass(type(mapping), Mapping) else ()


__all__ = ["is_shape_class", "known_shape"]
