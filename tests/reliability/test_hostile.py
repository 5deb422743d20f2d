"""Hostile values: no hook of a value a program passes can change what the caller gets.

Every hostile object of ``hostile_values.py`` (a hook raising ``SystemExit``,
``KeyboardInterrupt``, ``CancelledError``, ``GeneratorExit`` or a framework's
own ``BaseException``) goes through every placement a value can take (an
argument, inside a list, a dict, a set, a namedtuple, a dict key, an
exception's argument, a yielded item, an awaited result, an annotation, an
LLM call's messages); the traced call must give the caller exactly what the
same call gives untraced. The `tripwires` must never run at all. The
function's own control flow (its ``SystemExit``, ``KeyboardInterrupt``,
cancellation) still reaches the caller unchanged.
"""

from __future__ import annotations

import asyncio
import collections
import itertools
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hostile_values import HOOKS, STOPS, Tripwire, hostile, tripwires

from flow_xray import trace


def ident(value: Any) -> Any:
    return value


def raiser(value: Any) -> None:
    raise ValueError(value)


def yielder(value: Any) -> Iterator[Any]:
    yield value


async def awaited(value: Any) -> Any:
    await asyncio.sleep(0)
    return value


def annotated(value: Any) -> Any:
    trace.annotate(value=value, nested={"v": [value]})
    return value


def chat(messages: list[dict[str, Any]]) -> Any:
    return messages[0]["content"]


Pair = collections.namedtuple("Pair", "first second")

# placement name -> (how the argument is built from the hostile value, the function, how
# its result is read); each function is traced for the traced run, bare for the baseline.
PLACEMENTS: dict[str, tuple[Callable[[Any], Any], Callable[..., Any], str]] = {
    "argument": (lambda v: v, ident, "call"),
    "in a list": (lambda v: [v, v], ident, "call"),
    "dict value": (lambda v: {"k": v, "n": [v]}, ident, "call"),
    "dict key": (lambda v: {v: 1}, ident, "call"),
    "in a set": (lambda v: {v}, ident, "call"),
    "in a namedtuple": (lambda v: Pair(v, 1), ident, "call"),
    "exception argument": (lambda v: v, raiser, "call"),
    "yielded": (lambda v: v, yielder, "iterate"),
    "awaited result": (lambda v: v, awaited, "await"),
    "annotation": (lambda v: v, annotated, "call"),
    "LLM messages": (lambda v: [{"role": "user", "content": v}], chat, "call"),
}
_TRACED = {
    fn: trace(kind="llm")(fn) if fn is chat else trace(fn) for _, fn, _ in PLACEMENTS.values()
}
_HASHED = {"dict key", "in a set"}


def _outcome(fn: Callable[..., Any], arg: Any, how: str) -> tuple[str, Any]:
    """What the caller gets: ``("returned", value)`` or ``("raised", exception)``."""
    try:
        if how == "iterate":
            return "returned", list(fn(arg))
        if how == "await":
            return "returned", _drive(fn(arg))
        return "returned", fn(arg)
    except BaseException as exc:
        return "raised", exc


def _drive(coroutine: Any) -> Any:
    """Run a coroutine to its end by hand (an event loop would repr the values itself)."""
    try:
        while True:
            coroutine.send(None)
    except StopIteration as stop:
        return stop.value


def _same(left: tuple[str, Any], right: tuple[str, Any]) -> bool:
    """The same outcome: the very object returned (or the same items), or the same raise."""
    if left[0] != right[0]:
        return False
    a, b = left[1], right[1]
    if left[0] == "raised":
        return (
            type(a) is type(b)
            and len(a.args) == len(b.args)
            and all(
                x is y or (type(x) is str and x == y) for x, y in zip(a.args, b.args, strict=True)
            )
        )
    if type(a) is list and type(b) is list:
        return len(a) == len(b) and all(x is y for x, y in zip(a, b, strict=True))
    return a is b


CASES = [
    pytest.param(hook, stop, place, id=f"{hook}-{stop}-{place}")
    for hook, stop, place in itertools.product(HOOKS, STOPS, PLACEMENTS)
    if not (hook == "__hash__" and place in _HASHED)  # the program itself cannot build these
]


@pytest.mark.parametrize(("hook", "stop", "place"), CASES)
def test_a_hook_raising_a_base_exception_never_reaches_the_caller(
    hook: str, stop: str, place: str
) -> None:
    """The traced call gives the caller exactly what the untraced one does, and is recorded."""
    build, fn, how = PLACEMENTS[place]
    arg = build(hostile(hook, STOPS[stop]))
    untraced = _outcome(fn, arg, how)
    with trace.capture() as result:
        traced = _outcome(_TRACED[fn], arg, how)
    assert _same(traced, untraced), (traced, untraced)
    assert [node.name for node in result][:1] == [fn.__qualname__]


def test_the_corpus_size() -> None:
    """The README's figure: hooks x stops x placements, less the ones a program cannot build."""
    assert len(CASES) == 13 * 5 * 11 - 5 * 2


@pytest.mark.parametrize("stop", list(STOPS))
def test_the_functions_own_stop_still_propagates(stop: str) -> None:
    """A traced function raising SystemExit, KeyboardInterrupt, cancellation... itself: the
    caller gets that very exception, with hostile arguments recorded beside it."""
    mine = STOPS[stop]("the function's own")

    @trace
    def stops(value: Any) -> None:
        raise mine

    with trace.capture(), pytest.raises(STOPS[stop]) as raised:
        stops([hostile("__repr__", KeyboardInterrupt), hostile("__len__", SystemExit)])
    assert raised.value is mine


@pytest.mark.parametrize("name", list(tripwires()))
@pytest.mark.parametrize("place", ["argument", "dict value", "exception argument", "yielded"])
def test_hooks_recording_does_not_need_never_run(name: str, place: str) -> None:
    """A lazy object is not evaluated, a stray _asdict()/model_dump()/shape never runs, a set
    of user objects is never sorted with their comparisons."""
    build, fn, how = PLACEMENTS[place]
    arg = build(tripwires()[name]())
    Tripwire.reset()
    with trace.capture() as result:
        _outcome(_TRACED[fn], arg, how)
    assert Tripwire.ran == {}
    assert len(list(result)) == 1


def test_an_object_that_only_looks_like_a_record_is_shown_by_its_repr() -> None:
    """Not a namedtuple / pydantic model / dataclass by type: its repr, nothing probed."""
    value = tripwires()["model_dump() that runs code"]()
    Tripwire.reset()
    with trace.capture() as result:
        _TRACED[ident](value)
    assert result.roots[0].inputs["value"].startswith("<hostile_values.RunsModelDump object")
    assert Tripwire.ran == {}
