"""Generators: a traced one keeps no yielded item alive; a capture opened in one is its own.

A traced generator records what it yielded, converted within the output
cap as each item passes: the items themselves are released as soon as the
consumer drops them. A capture opened in a generator's body collects the
calls that body makes, not the caller's while the generator waits at a
``yield``; generators driven as scopes (``@contextmanager``) still collect
their ``with`` block.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import weakref
from collections.abc import AsyncIterator, Iterator

from flow_xray import trace
from flow_xray.tracing.api import propagate


class Chunk:
    """A yielded item that can be watched for release (a stand-in for a 10 MB buffer)."""

    def __init__(self, size: int) -> None:
        self.data = bytearray(size)

    def __repr__(self) -> str:
        return f"Chunk({len(self.data)})"


def test_a_traced_generator_keeps_no_yielded_item_alive() -> None:
    """Each chunk is released once the consumer drops it, while the generator still runs."""
    alive: list[weakref.ref[Chunk]] = []

    @trace
    def chunks() -> Iterator[Chunk]:
        for _ in range(50):
            yield Chunk(1000)

    with trace.capture() as result:
        for chunk in chunks():
            alive.append(weakref.ref(chunk))
            del chunk  # released by its reference count, no collection needed
            assert sum(ref() is not None for ref in alive) == 0
    output = result.roots[0].output
    assert output["count"] == 50
    assert output["yielded"][:2] == ["Chunk(1000)", "Chunk(1000)"]


def test_the_kept_items_stay_within_one_values_cap() -> None:
    """A generator yielding 300 KB of text keeps at most one value's worth of converted items."""

    @trace
    def lines() -> Iterator[str]:
        for i in range(300):
            yield f"{i:04d}" + "x" * 1000

    with trace.capture() as result:
        assert sum(1 for _ in lines()) == 300
    output = result.roots[0].output
    assert output["count"] == 300
    assert 1 <= len(output["yielded"]) <= 9
    assert output["yielded"][0].startswith("0000xxx")


@trace
def unrelated() -> int:
    return 1


@trace
def inner() -> int:
    return 2


@trace
async def awaited_inner() -> int:
    return 3


def test_a_capture_in_a_suspended_generator_ignores_the_callers_calls() -> None:
    """The caller's calls made while the generator waits at a yield are not collected."""
    collected: list[str] = []

    def body() -> Iterator[int]:
        with trace.capture() as result:
            inner()
            yield 1
            inner()
            yield 2
        collected.extend(node.name for node in result)

    for _ in body():
        unrelated()
    assert collected == ["inner", "inner"]


def test_a_capture_in_an_async_generator_keeps_what_it_awaits() -> None:
    """An async generator's capture collects the tasks its body awaits, not its consumer's."""
    collected: list[str] = []

    async def body() -> AsyncIterator[int]:
        with trace.capture() as result:
            await asyncio.gather(awaited_inner(), awaited_inner())
            yield 1
            inner()
        collected.extend(sorted(node.name for node in result))

    async def consume() -> None:
        async for _ in body():
            unrelated()

    asyncio.run(consume())
    assert collected == ["awaited_inner", "awaited_inner", "inner"]


def test_a_capture_in_a_generator_keeps_work_it_hands_to_threads() -> None:
    """Work the generator's body sends to a thread pool (``propagate``) is collected."""
    collected: list[str] = []

    def body() -> Iterator[int]:
        with trace.capture() as result, concurrent.futures.ThreadPoolExecutor(1) as pool:
            pool.submit(propagate(inner)).result()
            yield 1
        collected.extend(node.name for node in result)

    for _ in body():
        unrelated()
    assert collected == ["inner"]


def test_a_capture_in_a_context_manager_generator_collects_the_with_block() -> None:
    """``@contextmanager`` is a scope: the block it wraps is what its capture is for."""

    @contextlib.contextmanager
    def captured() -> Iterator[object]:
        with trace.capture() as result:
            yield result

    with captured() as result:
        unrelated()
    assert [node.name for node in result] == ["unrelated"]  # type: ignore[attr-defined]
