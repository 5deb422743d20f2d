"""Hostile values: objects whose hooks raise control-flow exceptions, or must not be touched.

Shared by ``test_hostile.py`` (and the shapes of ``test_container_shapes.py``).
Each `hostile` object has one hook (``__repr__``, ``__eq__``, ``__hash__``,
``__len__``, ``__iter__``, a comparison, ``__getattr__``, ``__class__``...)
raising one of the `STOPS`: the exceptions a user's program uses for its own
control flow (``SystemExit``, ``KeyboardInterrupt``, ``asyncio.CancelledError``,
``GeneratorExit``, a framework's own ``BaseException`` subclass). Recording
must contain every one of them. The `Tripwire` objects count the hooks
recording must never run (a lazy object's evaluation, ``_asdict()``,
``model_dump()``, a duck-typed ``shape``, user comparisons).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from typing import Any, ClassVar


class FrameworkStop(BaseException):
    """A framework's own BaseException subclass (trio's Cancelled, gevent's GreenletExit...)."""


STOPS: dict[str, type[BaseException]] = {
    "SystemExit": SystemExit,
    "KeyboardInterrupt": KeyboardInterrupt,
    "CancelledError": asyncio.CancelledError,
    "GeneratorExit": GeneratorExit,
    "FrameworkStop": FrameworkStop,
}

HOOKS = (
    "__repr__",
    "__str__",
    "__eq__",
    "__hash__",
    "__len__",
    "__iter__",
    "__lt__",
    "__bool__",
    "__getattr__",
    "__getattribute__",
    "__class__",
    "__index__",
    "__fspath__",
)


def hostile(hook: str, stop: type[BaseException]) -> Any:
    """An object whose ``hook`` raises ``stop`` (``__class__`` as a property, like a proxy's)."""

    def raiser(self: Any, *args: Any) -> Any:
        raise stop(f"{hook} stopped")

    namespace: dict[str, Any] = {"__module__": __name__}
    if hook == "__class__":
        namespace[hook] = property(raiser)
    elif hook == "__getattribute__":
        namespace[hook] = lambda self, name: raiser(self)
    else:
        namespace[hook] = raiser
    if hook == "__eq__":
        namespace["__hash__"] = object.__hash__
    if hook in ("__len__", "__iter__"):  # a container to whoever looks at its hooks
        namespace.setdefault("__getitem__", lambda self, i: raiser(self))
    cls = type(f"Hostile_{hook.strip('_')}_{stop.__name__}", (), namespace)
    return cls()


class Tripwire:
    """Counts, per name, the hooks of the objects below that ran (each must stay at 0)."""

    ran: ClassVar[dict[str, int]] = {}

    @classmethod
    def hit(cls, name: str) -> None:
        cls.ran[name] = cls.ran.get(name, 0) + 1

    @classmethod
    def reset(cls) -> None:
        cls.ran = {}


class LazyObject:
    """Django's ``SimpleLazyObject`` in miniature: reading ``__class__`` or any attribute
    evaluates it (a database query); ``isinstance`` reads ``__class__``."""

    def __init__(self, factory: Callable[[], Any]) -> None:
        object.__setattr__(self, "_factory", factory)

    @property  # type: ignore[misc]
    def __class__(self) -> type:
        Tripwire.hit("lazy evaluated")
        return dict

    def __getattr__(self, name: str) -> Any:
        Tripwire.hit("lazy evaluated")
        return getattr(object.__getattribute__(self, "_factory")(), name)

    # Django's proxies define the container hooks on the class (``len()`` and ``iter()``
    # look there, not through ``__getattr__``): each evaluates the object.
    def __len__(self) -> int:
        Tripwire.hit("lazy evaluated")
        return len(object.__getattribute__(self, "_factory")())

    def __iter__(self) -> Iterator[Any]:
        Tripwire.hit("lazy evaluated")
        return iter(object.__getattribute__(self, "_factory")())

    def __bool__(self) -> bool:
        Tripwire.hit("lazy evaluated")
        return bool(object.__getattribute__(self, "_factory")())

    def __repr__(self) -> str:  # (Django's: the factory's, until evaluated)
        return "<LazyObject: not evaluated>"


class BlockingAsDict:
    """An object with an ``_asdict()`` of its own that would block (it is not a namedtuple)."""

    def _asdict(self) -> dict[str, Any]:
        Tripwire.hit("_asdict")
        raise KeyboardInterrupt("_asdict() blocked until interrupted")


class RunsModelDump:
    """Pydantic-looking (``model_fields``, ``model_dump``) without being a pydantic model."""

    model_fields: ClassVar[dict[str, Any]] = {"a": None}

    def model_dump(self) -> dict[str, Any]:
        Tripwire.hit("model_dump")
        return {"a": 1}

    def __getattr__(self, name: str) -> Any:
        Tripwire.hit("attribute probe")
        raise AttributeError(name)


class DuckShape:
    """An object with a ``shape`` and ``dtype`` of its own (not an array package's)."""

    @property
    def shape(self) -> tuple[int, ...]:
        Tripwire.hit("shape")
        return (1,)

    @property
    def dtype(self) -> str:
        Tripwire.hit("dtype")
        return "f8"


class Ordered:
    """A user object with counted comparisons (a set of 4,000 of them must not be sorted)."""

    def __init__(self, key: int) -> None:
        self.key = key

    def __lt__(self, other: Ordered) -> bool:
        Tripwire.hit("__lt__")
        return self.key < other.key

    def __repr__(self) -> str:
        return f"Ordered({self.key})"


def tripwires() -> dict[str, Callable[[], Any]]:
    """Values whose untouchable hooks count in `Tripwire` (built fresh for each use)."""
    return {
        "lazy object": lambda: LazyObject(lambda: {"evaluated": True}),
        "blocking _asdict()": BlockingAsDict,
        "model_dump() that runs code": RunsModelDump,
        "duck-typed shape": DuckShape,
        "set of 4,000 user-ordered objects": lambda: {Ordered(i) for i in range(4000)},
        "list of lazy objects": lambda: [LazyObject(dict) for _ in range(3)],
        "dict of lazy values": lambda: {"a": LazyObject(dict), "b": [LazyObject(dict)]},
    }


def counted(gen: Iterator[Any]) -> list[Any]:
    """Consume a generator (a helper for the yielded-value placement)."""
    return list(gen)
