"""Odd values read without materialising them: fields, buffers, arrays, mocks. No OpenTelemetry.

The bounded walk (`flow_xray.serialize.walk`) asks here before it falls
back to ``repr``. Everything is read through the type, not through instance
attribute magic, so a proxy or a ``MagicMock`` never gains attributes; big
buffers and arrays are summarised by length and type, never copied (numpy and
pandas values of at most `SMALL_ARRAY` values are converted by the library);
numpy, pandas and friends are recognised by module name and ``shape``/``dtype``
without importing them. What depends on the class alone is worked out once per
class (`flow_xray.serialize.memo`).
"""

from __future__ import annotations

import array
import dataclasses
import sys
from collections.abc import Iterable
from typing import Any, Final

from flow_xray.interrupts import let_signals_through
from flow_xray.serialize.memo import per_class

MISSING: Final = object()
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
    return class_root(cls)


def class_root(cls: Any) -> str:
    """The top-level package a class was defined in (``""`` when unknown); never raises.

    Read through ``type``'s own ``__module__`` descriptor: a metaclass's hooks never run.
    """
    try:
        module = _TYPE_MODULE.__get__(cls) if isinstance(cls, type) else None
    except BaseException:  # recording contains everything
        let_signals_through()
        return ""
    return module.partition(".")[0] if type(module) is str else ""


_TYPE_MODULE: Final = type.__dict__["__module__"]


def is_opaque_class(cls: type) -> bool:
    """A mock's class: any attribute read would create state on its values, so nothing is read."""
    return class_root(cls) in _OPAQUE_MODULES


def static_attribute(cls: type, name: str) -> Any:
    """``name`` as found in the ``__dict__`` of ``cls`` or a class of its MRO, else `MISSING`.

    No descriptor, metaclass ``__getattr__`` or property runs: the raw object is returned.
    """
    for klass in _mro(cls):
        found = _class_dict(klass).get(name, MISSING)
        if found is not MISSING:
            return found
    return MISSING


def defining_class(cls: type, name: str) -> type | None:
    """The class of ``cls``'s MRO whose own ``__dict__`` defines ``name``, or None."""
    for klass in _mro(cls):
        if name in _class_dict(klass):
            return klass
    return None


def from_packages(cls: type, packages: frozenset[str]) -> bool:
    """Whether ``cls`` or a class of its MRO was defined in one of ``packages``."""
    return any(class_root(klass) in packages for klass in _mro(cls))


def _mro(cls: type) -> tuple[type, ...]:
    mro = _TYPE_MRO.__get__(cls)
    return mro if type(mro) is tuple else ()


def _class_dict(cls: type) -> Any:
    return _TYPE_DICT.__get__(cls)


_TYPE_MRO: Final = type.__dict__["__mro__"]
_TYPE_DICT: Final = type.__dict__["__dict__"]


def class_attribute(cls: type, name: str) -> Any:
    """``cls.name`` as found in the class dicts of its MRO (see `static_attribute`)."""
    try:
        return static_attribute(cls, name)
    except BaseException:  # recording contains everything
        let_signals_through()
        return MISSING


def instance_dict(value: Any) -> dict[str, Any] | None:
    """The instance ``__dict__`` of ``value`` read without its class's attribute hooks, or None."""
    try:
        found = object.__getattribute__(value, "__dict__")
    except BaseException:  # recording contains everything
        let_signals_through()
        return None
    return found if type(found) is dict else None


def _model_base(module: str) -> type | None:
    """pydantic's ``BaseModel`` when pydantic (v2, or its v1 API) is already imported."""
    found = getattr(sys.modules.get(module), "BaseModel", None)
    return found if isinstance(found, type) else None


def is_namedtuple_class(cls: type) -> bool:
    """A class made by ``collections.namedtuple`` / ``typing.NamedTuple`` (checked by type)."""
    names = class_attribute(cls, "_fields")
    return (
        issubclass(cls, tuple)
        and type(names) is tuple
        and all(type(n) is str for n in names)
        and class_attribute(cls, "_make") is not MISSING
        and class_attribute(cls, "_asdict") is not MISSING
    )


def fields(value: Any, max_items: int) -> tuple[Iterable[tuple[Any, Any]], int] | None:
    """``(name, value)`` pairs of a known record type and how many, or None.

    Known means checked by type, never by what the object answers: a real
    namedtuple class (zipped with its ``_fields``), a subclass of pydantic's
    ``BaseModel`` (its field values from the instance's ``__dict__``), a
    dataclass or an attrs class (their declared fields). No method of the
    value runs: an object that merely has an ``_asdict()`` or ``model_dump()``
    is not a record (it is shown by its repr). `max_items` is unused here
    (the walk stops at it), kept for callers that pass it.
    """
    del max_items
    record = _record_class(type(value))
    if record is None:
        return None
    how, names = record
    if how == "tuple":
        return zip(names, tuple.__iter__(value), strict=False), len(names)
    if how == "model":
        found = instance_dict(value) or {}
        return dict.items(found), len(found)
    return ((n, _read(value, n)) for n in names), len(names)


def is_record_class(cls: type) -> bool:
    """Whether `fields` reads values of ``cls`` as records."""
    return _record_class(cls) is not None


@per_class
def _record_class(cls: type) -> tuple[str, tuple[str, ...]] | None:
    """How `fields` reads a record class: ``("tuple", names)`` a namedtuple, ``("model", ())``
    a pydantic model, ``("declared", names)`` a dataclass or an attrs class; None: no record."""
    try:
        if is_namedtuple_class(cls):
            return "tuple", class_attribute(cls, "_fields")
        for module in ("pydantic.main", "pydantic.v1.main"):
            base = _model_base(module)
            if base is not None and issubclass(cls, base):
                return "model", ()
        declared = class_attribute(cls, "__dataclass_fields__")
        if type(declared) is dict:
            return "declared", tuple(n for n, f in declared.items() if _is_field(f))
        attrs = class_attribute(cls, "__attrs_attrs__")
        if issubclass(type(attrs), tuple) and class_root(type(attrs)) == "attr":
            return "declared", tuple(a.name for a in attrs if type(getattr(a, "name", None)) is str)
    except BaseException:  # recording contains everything
        let_signals_through()
        return None
    return None


def _is_field(field: Any) -> bool:
    """A dataclass field holding a value (not a ``ClassVar`` / ``InitVar`` pseudo-field)."""
    return getattr(field, "_field_type", None) is getattr(dataclasses, "_FIELD", None)


def _read(obj: Any, name: str) -> Any:
    """A declared field of a known record: from the instance dict, else the slot/attribute."""
    found = instance_dict(obj)
    if found is not None and name in found:
        return found[name]
    try:
        return getattr(obj, name)
    except BaseException as exc:  # recording contains everything
        let_signals_through()
        return f"<unavailable: {type(exc).__name__}>"


def buffer_summary(value: Any) -> str | None:
    """``<bytes len=N b'…'…>`` for bytes-like values (a short prefix, nothing copied), or None.

    Read through the buffer protocol and the built-in types' own methods, so a
    subclass's ``__len__`` or ``__getitem__`` never runs.
    """
    cls = type(value)
    name = cls.__name__
    if issubclass(cls, array.array):
        size = array.array.__len__(value)
        items = array.array.tolist(array.array.__getitem__(value, slice(0, _PREVIEW_ITEMS)))
        more = ", …" if size > len(items) else ""
        code = _TYPECODE.__get__(value)
        return f"<array('{code}') len={size} [{', '.join(map(repr, items))}{more}]>"
    try:
        view = value if cls is memoryview else memoryview(value)
    except BaseException:  # recording contains everything
        let_signals_through()
        return None
    size = view.nbytes
    try:
        head = view.cast("B")[:_PREVIEW_BYTES].tobytes() if view.c_contiguous else b""
    except BaseException:
        let_signals_through()
        head = b""
    if not issubclass(cls, (bytes, bytearray, memoryview)):
        return f"<{name} nbytes={size}>"
    tail = "…" if size > len(head) else ""
    return f"<{name} len={size} {head!r}{tail}>"


_TYPECODE: Final = array.array.__dict__["typecode"]


def array_summary(value: Any) -> str | None:
    """``<ndarray shape=(3, 4) dtype=float64>`` for numpy/pandas/torch-like values, or None.

    Only attributes the array library itself defines are read: ``shape`` (and
    ``dtype``) must come from a class of one of those packages, so a user's
    subclass overriding them is shown by its repr instead.
    """
    cls = type(value)
    found = _array_class(cls)
    if found is None:
        return None
    root, has_dtype, has_dtypes, _ = found
    try:
        shape = value.shape
        dtype = value.dtype if has_dtype else None
        if dtype is None and has_dtypes:
            dtype = "mixed"
        shown = tuple(int(n) for n in shape) if type(shape) is tuple else shape
        text = f"<{root}.{cls.__name__} shape={shown} dtype={_dtype_text(dtype)}>"
    except BaseException:  # recording contains everything
        let_signals_through()
        return None
    return text.replace("<numpy.", "<", 1)


def _dtype_text(dtype: Any) -> str:
    """``str(dtype)``, kept per dtype object: numpy's ``__str__`` is Python code (about 2 µs)
    and arrays share a few dtype objects (numpy's built-in ones are singletons)."""
    if dtype is None or type(dtype) is str:
        return str(dtype)
    known = _DTYPE_TEXTS.get(id(dtype))
    if known is not None and known[0] is dtype:
        return known[1]
    text = str(dtype)
    if len(_DTYPE_TEXTS) >= 256:
        _DTYPE_TEXTS.clear()
    _DTYPE_TEXTS[id(dtype)] = (dtype, text)  # (the dtype kept: its id stays its own)
    return text


_DTYPE_TEXTS: dict[int, tuple[Any, str]] = {}
# Arrays and frames of at most this many values are recorded as their values.
SMALL_ARRAY: Final = 64


def array_values(value: Any) -> Any:
    """The values of a numpy value or a pandas Series / DataFrame of at most `SMALL_ARRAY`
    values, as the library itself converts them (numpy's ``tolist()``: a scalar's number,
    nested lists; pandas' labels and values: a Series by index, a DataFrame row by row,
    when no label repeats); else `MISSING` (a bigger one, another library: its summary,
    `array_summary`)."""
    found = _array_class(type(value))
    if found is None or found[3] is None:
        return MISSING
    try:
        shape = value.shape
        if type(shape) is not tuple:
            return MISSING
        cells = 1
        for size in shape:
            cells *= int(size)
        if cells > SMALL_ARRAY:
            return MISSING
        how = found[3]
        if how == "tolist":
            return value.tolist()
        labels = value.index.tolist()  # (pandas' own to_dict takes 5-100 times as long)
        if how == "rows":
            columns = value.columns.tolist()
            if len(set(columns)) < len(columns):
                return MISSING
            rows = [dict(zip(columns, row, strict=True)) for row in value.values.tolist()]
            out = dict(zip(labels, rows, strict=True))
        else:
            out = dict(zip(labels, value.tolist(), strict=True))
    except BaseException:  # recording contains everything
        let_signals_through()
        return MISSING
    return out if len(out) == len(labels) else MISSING  # a label twice: the summary


def is_array_class(cls: type) -> bool:
    """Whether ``cls`` is an array package's class with the package's own ``shape``."""
    return _array_class(cls) is not None


@per_class
def _array_class(cls: type) -> tuple[str, bool, bool, str | None] | None:
    """For a class of a known array package whose ``shape`` that package defines: the
    package, whether it defines ``dtype`` and ``dtypes``, and how `array_values` converts
    its values (``"tolist"`` numpy's, ``"dict"`` a pandas Series', ``"rows"`` a pandas
    DataFrame's: classes defining ``to_dict``), None: not at all); else None."""
    root = class_root(cls)
    if root not in _ARRAY_MODULES and root not in _ARRAY_MODULES_MORE:
        return None
    try:
        if not _library_attribute(cls, "shape"):
            return None
        dtype, dtypes = _library_attribute(cls, "dtype"), _library_attribute(cls, "dtypes")
        how = None
        if root == "numpy" and _library_attribute(cls, "tolist"):
            how = "tolist"
        elif root == "pandas" and _library_attribute(cls, "to_dict"):
            how = "rows" if _library_attribute(cls, "columns") else "dict"
        return root, dtype, dtypes, how
    except BaseException:  # recording contains everything
        let_signals_through()
        return None


def _library_attribute(cls: type, name: str) -> bool:
    """Whether ``name`` is defined by a class of a known array package in ``cls``'s MRO."""
    owner = defining_class(cls, name)
    if owner is None:
        return False
    root = class_root(owner)
    return root in _ARRAY_MODULES or root in _ARRAY_MODULES_MORE


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
    except BaseException:  # recording contains everything
        let_signals_through()
        return ()
    return args if type(args) is tuple else ()


def length(value: Any) -> int | None:
    """``len(value)`` when the type defines ``__len__``, else None; never raises.

    Not for a proxy (a type with a ``__getattr__`` of its own): the ``__len__`` of
    Django's ``SimpleLazyObject`` and its kin evaluates the object (a query).
    """
    if not _sized(type(value)):
        return None
    try:
        size = len(value)
    except BaseException:  # recording contains everything
        let_signals_through()
        return None
    return size if type(size) is int else None


@per_class
def _sized(kind: type) -> bool:
    """Whether `length` may ask values of ``kind`` their ``len`` (defined, and no proxy)."""
    return (
        class_attribute(kind, "__len__") is not MISSING
        and class_attribute(kind, "__getattr__") is MISSING
    )


@per_class
def own_repr(kind: type) -> bool:
    """Whether ``kind`` or a class of its MRO other than ``object`` defines ``__repr__``."""
    return class_attribute(kind, "__repr__") is not object.__repr__


__all__ = [
    "MISSING",
    "array_summary",
    "buffer_summary",
    "cheap_repr",
    "class_attribute",
    "class_root",
    "defining_class",
    "exception_args",
    "fields",
    "from_packages",
    "instance_dict",
    "is_array_class",
    "is_namedtuple_class",
    "is_opaque_class",
    "is_record_class",
    "length",
    "module_root",
    "own_repr",
    "static_attribute",
]
