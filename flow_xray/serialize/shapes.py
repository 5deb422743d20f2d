"""Odd values read without materialising them: fields, buffers, arrays, mocks. No OpenTelemetry.

The bounded walk (`flow_xray.serialize.walk`) asks here before it falls
back to ``repr``. Everything is read through the type, not through instance
attribute magic, so a proxy or a ``MagicMock`` never gains attributes; big
buffers and arrays are summarised by length and type, never copied; numpy,
pandas and friends are recognised by module name and ``shape``/``dtype``
without importing them.
"""

from __future__ import annotations

import array
import dataclasses
from collections.abc import Iterable
from typing import Any, Final

_MISSING: Final = object()
# Modules whose array-like values are summarised by shape and dtype.
_ARRAY_MODULES: Final = frozenset({"numpy", "pandas", "torch", "jax", "jaxlib", "tensorflow"})
_ARRAY_MODULES_MORE: Final = frozenset({"cupy", "polars", "pyarrow", "xarray", "dask", "scipy"})
# Objects answering any attribute: shown by their own repr, never probed.
_OPAQUE_MODULES: Final = frozenset({"unittest"})
_PREVIEW_BYTES: Final = 24
_PREVIEW_ITEMS: Final = 8


def module_root(value: Any, *, proxied: bool = False) -> str:
    """The top-level package of ``value``'s class (``numpy`` for a ``numpy.ndarray``).

    The class is ``type(value)``, so a mock or proxy cannot pretend to be
    another type. ``proxied=True`` reads ``value.__class__`` instead, for the
    objects that should be seen through a proxy: instrumentors hand out wrapt
    proxies of the OpenAI / Anthropic streams they wrap.
    """
    cls = getattr(value, "__class__", None) if proxied else type(value)
    module = getattr(cls, "__module__", None)
    return module.partition(".")[0] if isinstance(module, str) else ""


def is_opaque(value: Any) -> bool:
    """A mock: any attribute read would create state on it, so nothing is read."""
    return module_root(value) in _OPAQUE_MODULES


def class_attribute(cls: type, name: str) -> Any:
    """``cls.name`` looked up on the class only (an instance ``__getattr__`` never runs)."""
    try:
        return getattr(cls, name, _MISSING)
    except Exception:
        return _MISSING


def _read(obj: Any, name: str) -> Any:
    try:
        return getattr(obj, name)
    except Exception as exc:
        return f"<unavailable: {type(exc).__name__}>"


def fields(value: Any, max_items: int) -> tuple[Iterable[tuple[Any, Any]] | None, int] | None:
    """``(name, value)`` pairs of a record-like object and how many, or None.

    Namedtuples (zipped with ``_fields``: no dict built), pydantic models (their
    ``model_fields``, read one by one), dataclasses; then objects with an
    ``_asdict()`` / ``model_dump()`` method of their own, called once, and only
    when the object's own length (if it has one) is within `max_items`: a
    longer one gives ``(None, length)``, for the caller to summarise, since the
    method would build the whole dict first.
    """
    cls = type(value)
    if isinstance(value, type):
        return None
    names = class_attribute(cls, "_fields")
    if isinstance(value, tuple) and isinstance(names, tuple):
        return zip(names, tuple.__iter__(value), strict=False), len(names)
    model_fields = class_attribute(cls, "model_fields")
    if isinstance(model_fields, dict) and callable(class_attribute(cls, "model_dump")):
        return ((name, _read(value, name)) for name in model_fields), len(model_fields)
    if dataclasses.is_dataclass(cls):
        found = dataclasses.fields(value)
        return ((f.name, _read(value, f.name)) for f in found), len(found)
    for method in ("_asdict", "model_dump"):
        if callable(class_attribute(cls, method)):
            size = length(value)
            if size is not None and size > max_items:
                return None, size
            try:
                dumped = getattr(value, method)()
            except Exception:
                return None
            return (dict.items(dumped), len(dumped)) if isinstance(dumped, dict) else None
    return None


def buffer_summary(value: Any) -> str | None:
    """``<bytes len=N b'…'…>`` for bytes-like values (a short prefix, nothing copied), or None."""
    name = type(value).__name__
    if isinstance(value, (bytes, bytearray)):
        size = len(value)
        head = bytes(value[:_PREVIEW_BYTES])
    elif isinstance(value, array.array):
        size = len(value)
        items = value[:_PREVIEW_ITEMS].tolist()
        more = ", …" if size > len(items) else ""
        return f"<array('{value.typecode}') len={size} [{', '.join(map(repr, items))}{more}]>"
    else:
        try:
            view = value if isinstance(value, memoryview) else memoryview(value)
        except Exception:
            return None
        size = view.nbytes
        try:
            head = view.cast("B")[:_PREVIEW_BYTES].tobytes() if view.c_contiguous else b""
        except Exception:
            head = b""
        if not isinstance(value, memoryview):
            return f"<{name} nbytes={size}>"
    tail = "…" if size > len(head) else ""
    return f"<{name} len={size} {head!r}{tail}>"


def array_summary(value: Any) -> str | None:
    """``<ndarray shape=(3, 4) dtype=float64>`` for numpy/pandas/torch-like values, or None."""
    root = module_root(value)
    if root not in _ARRAY_MODULES and root not in _ARRAY_MODULES_MORE:
        return None
    cls = type(value)
    if class_attribute(cls, "shape") is _MISSING:
        return None
    try:
        shape = value.shape
        dtype = getattr(value, "dtype", None)
        if dtype is None and class_attribute(cls, "dtypes") is not _MISSING:
            dtype = "mixed"
        shown = tuple(int(n) for n in shape) if isinstance(shape, tuple) else shape
    except Exception:
        return None
    kind = f"{root}.{cls.__name__}" if root != "numpy" else cls.__name__
    return f"<{kind} shape={shown} dtype={dtype}>"


# What a value may add up to (chars, roughly) for its repr to count as cheap.
_CHEAP_BUDGET: Final = 16_384
_CHEAP_DEPTH: Final = 4
_SCALARS: Final = (float, bool, type(None))


def cheap_repr(value: Any) -> bool:
    """Whether ``repr(value)`` is cheap (about 16 K chars at most), found by a bounded look.

    Text, bytes and ints by their size, built-in containers item by item (4
    deep at most), other objects by their length if they have one. Used before
    calling a ``__str__`` or ``repr`` that would render big contents in full.
    """
    return _left(value, _CHEAP_BUDGET, 0) >= 0


def _left(value: Any, budget: int, depth: int) -> int:
    kind = type(value)
    if kind is str or kind is bytes or kind is bytearray:
        return budget - len(value)
    if kind is int:
        return budget - int.bit_length(value) // 3 - 1
    if kind in _SCALARS:
        return budget - 8
    if kind is list or kind is tuple or kind is set or kind is frozenset or kind is dict:
        if depth >= _CHEAP_DEPTH:
            return -1
        for item in dict.items(value) if kind is dict else value:
            budget = _left(item, budget - 2, depth + 1)
            if budget < 0:
                break
        return budget
    size = length(value)  # other objects: their repr is taken to grow with their length
    return budget - 64 - (size or 0)


def exception_args(exc: BaseException) -> tuple[Any, ...]:
    """``exc.args`` when it is a tuple (a class may override it), else ``()``; never raises."""
    try:
        args = exc.args
    except Exception:
        return ()
    return args if isinstance(args, tuple) else ()


def length(value: Any) -> int | None:
    """``len(value)`` when the type defines ``__len__``, else None; never raises."""
    if class_attribute(type(value), "__len__") is _MISSING:
        return None
    try:
        size = len(value)
    except Exception:
        return None
    return size if isinstance(size, int) else None


__all__ = [
    "array_summary",
    "buffer_summary",
    "cheap_repr",
    "class_attribute",
    "exception_args",
    "fields",
    "is_opaque",
    "length",
    "module_root",
]
