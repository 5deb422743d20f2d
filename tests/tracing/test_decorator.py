"""``@trace``: forms, function kinds, signatures, errors, generators and odd inputs."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import os
import re
from typing import Any

import pytest

from flow_xray import trace
from flow_xray.tree.model import TraceNode


def short(name: str) -> str:
    """A span name without the ``test_x.<locals>.`` prefix of functions defined in a test."""
    return name.rpartition(".<locals>.")[2]


def only(result: Any, name: str) -> TraceNode:
    nodes = result.find_all(name)
    assert len(nodes) == 1, [n.name for n in result]
    return nodes[0]


# --- forms ---------------------------------------------------------------------


def test_every_decorator_form_produces_one_span_per_call() -> None:
    """@trace, @trace(), @trace("name") and @trace(name=...) each trace calls."""

    @trace
    def bare(x: int) -> int:
        return x

    @trace()
    def empty(x: int) -> int:
        return x

    @trace("custom")
    def positional(x: int) -> int:
        return x

    @trace(name="keyword", kind="tool")
    def keyword(x: int) -> int:
        return x

    with trace.capture() as result:
        bare(1)
        empty(2)
        positional(3)
        keyword(4)
    assert [short(n.name) for n in result] == ["bare", "empty", "custom", "keyword"]
    assert result.find("keyword").kind == "tool"  # type: ignore[union-attr]
    assert result.find("bare").kind == "chain"  # type: ignore[union-attr]


def test_signature_name_and_docstring_are_preserved() -> None:
    """The wrapper keeps the signature, name and docstring."""

    def original(a: int, b: str = "x", *args: int, c: float = 1.0, **kw: Any) -> str:
        """Doc."""
        return b

    wrapped = trace(original)
    assert inspect.signature(wrapped) == inspect.signature(original)
    assert wrapped.__name__ == "original"
    assert wrapped.__doc__ == "Doc."
    assert wrapped.__wrapped__ is original  # type: ignore[attr-defined]


def test_async_functions_stay_coroutine_functions() -> None:
    """inspect.iscoroutinefunction holds for a traced ``async def``."""

    @trace
    async def fetch() -> int:
        return 1

    assert inspect.iscoroutinefunction(fetch)


# --- inputs and outputs ---------------------------------------------------------


def test_inputs_are_bound_arguments_with_defaults_applied() -> None:
    """input.value is a JSON object of the bound arguments, defaults included."""

    @trace
    def f(a: int, b: int = 2, *rest: int, c: str = "z", **extra: Any) -> int:
        return a

    with trace.capture() as result:
        f(1, 5, 6, 7, d=8)
        f(a=3)
    first, second = result.roots
    assert first.inputs == {"a": 1, "b": 5, "rest": [6, 7], "c": "z", "extra": {"d": 8}}
    assert second.inputs == {"a": 3, "b": 2, "rest": [], "c": "z", "extra": {}}


def test_output_is_recorded_as_json_or_text() -> None:
    """Structured return values are JSON; strings are kept as text."""

    @trace
    def structured() -> dict[str, Any]:
        return {"answer": 42, "items": [1, 2]}

    @trace
    def text() -> str:
        return "plain words"

    with trace.capture() as result:
        structured()
        text()
    assert result.find("structured").output == {"answer": 42, "items": [1, 2]}  # type: ignore[union-attr]
    assert result.find("text").output == "plain words"  # type: ignore[union-attr]


def test_capture_flags_and_exclude_keep_values_out() -> None:
    """capture_input/capture_output=False and exclude= keep those values off the span."""

    @trace(capture_input=False, capture_output=False)
    def hidden(secret_sauce: str) -> str:
        return secret_sauce

    @trace(exclude=("blob",))
    def partial(blob: bytes, label: str) -> None:
        return None

    with trace.capture() as result:
        hidden("recipe")
        partial(b"x" * 10, "ok")
    assert result.find("hidden").inputs == {}  # type: ignore[union-attr]
    assert result.find("hidden").output is None  # type: ignore[union-attr]
    assert result.find("partial").inputs == {"label": "ok"}  # type: ignore[union-attr]


def test_methods_do_not_capture_self_or_cls() -> None:
    """Instance, class and static methods are traced; self/cls are not inputs."""

    class Agent:
        @trace
        def act(self, goal: str) -> str:
            return goal

        @trace
        @classmethod
        def build(cls, size: int) -> int:
            return size

        @classmethod
        @trace
        def build2(cls, size: int) -> int:
            return size

        @trace
        @staticmethod
        def helper(x: int) -> int:
            return x

    with trace.capture() as result:
        Agent().act("win")
        Agent.build(3)
        Agent.build2(4)
        Agent.helper(5)
    assert [short(n.name) for n in result] == [
        "Agent.act",
        "Agent.build",
        "Agent.build2",
        "Agent.helper",
    ]
    assert [n.inputs for n in result] == [{"goal": "win"}, {"size": 3}, {"size": 4}, {"x": 5}]


def test_static_attributes_and_source_location_are_recorded() -> None:
    """attributes= values and code.* location attributes land on the span."""

    @trace(attributes={"team": "search", "weights": [1, 2], "config": {"k": 1}})
    def located() -> None:
        return None

    with trace.capture() as result:
        located()
    attrs = result.find("located").attributes  # type: ignore[union-attr]
    assert attrs["team"] == "search"
    assert attrs["weights"] == [1, 2]
    assert json.loads(attrs["config"]) == {"k": 1}
    assert attrs["code.function.name"].endswith("located")
    assert attrs["code.file.path"] == os.path.relpath(__file__)  # tests run from the repo
    assert isinstance(attrs["code.line.number"], int)


# --- nesting -------------------------------------------------------------------


def test_nested_calls_form_a_tree_in_call_order() -> None:
    """Calls made inside a traced call become its children, ordered by start."""

    @trace
    def leaf(i: int) -> int:
        return i

    @trace
    def root() -> int:
        return leaf(1) + leaf(2)

    with trace.capture() as result:
        root()
    (node,) = result.roots
    assert short(node.name) == "root"
    assert [c.inputs["i"] for c in node.children] == [1, 2]
    assert all(c.parent_id == node.span_id for c in node.children)


def test_async_calls_nest_under_their_parent_across_gather() -> None:
    """Children started by asyncio.gather attach to the awaiting span."""

    @trace
    async def step(i: int) -> int:
        await asyncio.sleep(0.001 * (3 - i))
        return i

    @trace
    async def fan_out() -> list[int]:
        return list(await asyncio.gather(*(step(i) for i in range(3))))

    with trace.capture() as result:
        assert asyncio.run(fan_out()) == [0, 1, 2]
    (node,) = result.roots
    assert sorted(c.inputs["i"] for c in node.children) == [0, 1, 2]
    assert result.find("fan_out").output == [0, 1, 2]  # type: ignore[union-attr]


# --- errors ----------------------------------------------------------------------


class CustomError(Exception):
    pass


def test_exception_passes_through_unchanged_and_is_recorded() -> None:
    """The same exception object reaches the caller; the node has status, error and traceback."""
    raised = CustomError("boom")

    @trace
    def fails() -> None:
        raise raised

    with trace.capture() as result, pytest.raises(CustomError) as info:
        fails()
    assert info.value is raised
    assert "fails" in "".join(
        f.name for f in __import__("traceback").extract_tb(info.value.__traceback__)
    )
    node = result.find("fails")
    assert node is not None
    assert node.status == "error"
    assert node.error == "CustomError: boom"
    assert node.traceback is not None and "raise raised" in node.traceback
    assert node.attributes["error.type"].endswith("CustomError")
    assert [e["name"] for e in node.events] == ["exception"]


def test_exception_with_failing_str_is_still_recorded() -> None:
    """An exception whose __str__ raises does not break tracing."""

    class Nasty(Exception):
        def __str__(self) -> str:
            raise RuntimeError("no str for you")

    @trace
    def fails() -> None:
        raise Nasty()

    with trace.capture() as result, pytest.raises(Nasty):
        fails()
    node = result.find("fails")
    assert node is not None and node.status == "error"
    assert node.error is not None and node.error.startswith("Nasty")


def test_system_exit_zero_is_not_an_error() -> None:
    """sys.exit(0) inside a traced call passes through without marking an error."""

    @trace
    def leave() -> None:
        raise SystemExit(0)

    with trace.capture() as result, pytest.raises(SystemExit):
        leave()
    assert result.find("leave").status == "ok"  # type: ignore[union-attr]


# --- odd inputs ----------------------------------------------------------------------


class BadRepr:
    def __repr__(self) -> str:
        raise ValueError("repr exploded")

    def __eq__(self, other: object) -> bool:
        raise TypeError("no eq")

    __hash__ = None  # type: ignore[assignment]


def test_odd_arguments_and_returns_never_break_the_call() -> None:
    """Bad __repr__, cycles and huge strings are recorded safely; results are untouched."""
    cyclic: list[Any] = [1]
    cyclic.append(cyclic)
    huge = "x" * 5_000_000
    bad = BadRepr()

    @trace
    def odd(a: Any, b: Any, c: Any) -> Any:
        return a

    with trace.capture() as result:
        assert odd(bad, cyclic, huge) is bad
        assert odd(cyclic, 1, 2) is cyclic
    first, second = result.roots
    assert len(json.dumps(first.inputs)) < 20_000
    assert "truncated" in json.dumps(first.inputs)
    assert "cycle" in json.dumps(second.output)


def test_secret_arguments_are_redacted_but_token_counts_are_not() -> None:
    """password/api_key are redacted at any depth; max_tokens stays."""

    @trace(kind="llm")
    def call(api_key: str, max_tokens: int, options: dict[str, Any]) -> None:
        return None

    with trace.capture() as result:
        call("sk-123", 256, {"nested": {"password": "hunter2"}, "prompt_tokens": 3})
    inputs = result.find("call").inputs  # type: ignore[union-attr]
    assert inputs["api_key"] == "[REDACTED]"
    assert inputs["max_tokens"] == 256
    assert inputs["options"] == {"nested": {"password": "[REDACTED]"}, "prompt_tokens": 3}


# --- generators ----------------------------------------------------------------------


def test_generator_span_covers_the_whole_iteration() -> None:
    """A generator's span ends at exhaustion and parents the calls made while iterating."""

    @trace
    def inner(i: int) -> int:
        return i

    @trace
    def numbers(n: int) -> Any:
        for i in range(n):
            yield inner(i)
        return "done"

    with trace.capture() as result:
        assert list(numbers(3)) == [0, 1, 2]
    node = only(result, "numbers")
    assert not node.incomplete
    assert node.output == {"yielded": [0, 1, 2], "count": 3, "returned": "done"}
    assert [short(c.name) for c in node.children] == ["inner"] * 3


def test_generator_closed_early_is_marked_incomplete() -> None:
    """break out of a traced generator ends its span, marked incomplete."""

    @trace
    def forever() -> Any:
        i = 0
        while True:
            yield i
            i += 1

    with trace.capture() as result:
        for value in forever():
            if value == 2:
                break
    node = only(result, "forever")
    assert node.incomplete
    assert node.latency_ms is not None
    assert node.status == "ok"


def test_generator_error_marks_the_span_failed() -> None:
    """An exception inside a generator reaches the consumer and marks the span."""

    @trace
    def broken() -> Any:
        yield 1
        raise KeyError("gone")

    with trace.capture() as result, pytest.raises(KeyError):
        list(broken())
    node = only(result, "broken")
    assert node.status == "error" and node.error == "KeyError: 'gone'"


def test_no_context_stays_attached_across_yield() -> None:
    """Between items the consumer's spans are not children of the generator's span."""

    @trace
    def producer() -> Any:
        yield 1
        yield 2

    @trace
    def consumer_step(x: int) -> int:
        return x

    with trace.capture() as result:
        for item in producer():
            consumer_step(item)
    assert {short(n.name) for n in result.roots} == {"producer", "consumer_step"}
    assert only(result, "producer").children == []


def test_generator_send_and_throw_are_forwarded() -> None:
    """send() values and throw() exceptions reach the wrapped generator."""

    @trace
    def echo() -> Any:
        received = []
        try:
            while True:
                received.append((yield len(received)))
        except ValueError:
            yield received

    with trace.capture():
        gen = echo()
        next(gen)
        gen.send("a")
        gen.send("b")
        assert gen.throw(ValueError("stop")) == ["a", "b"]
        gen.close()


def test_async_generator_is_traced_and_closed_early() -> None:
    """Async generators get a span; early exit marks it incomplete."""

    @trace
    async def ticks(n: int) -> Any:
        for i in range(n):
            await asyncio.sleep(0)
            yield i

    async def consume() -> list[int]:
        out = [i async for i in ticks(3)]
        gen = ticks(10)
        async for i in gen:
            if i == 1:
                break
        await gen.aclose()
        return out

    with trace.capture() as result:
        assert asyncio.run(consume()) == [0, 1, 2]
    complete, partial = result.roots
    assert not complete.incomplete and complete.output["count"] == 3
    assert partial.incomplete


def test_generator_without_output_capture_does_not_hold_yielded_items() -> None:
    """With capture_output=False, items the consumer dropped are not kept alive by the span."""
    import gc
    import weakref

    class Chunk:
        pass

    @trace(capture_output=False)
    def chunks() -> Any:
        while True:
            yield Chunk()

    with trace.capture():
        gen = chunks()
        ref = weakref.ref(next(gen))
        next(gen)
        next(gen)
        gc.collect()
        assert ref() is None
        gen.close()


# --- usage and metadata ------------------------------------------------------------


def test_usage_and_annotate_record_on_the_current_span() -> None:
    """trace.usage() gives tokens and cost; trace.annotate() gives meta keys."""

    @trace(kind="llm")
    def llm() -> str:
        trace.usage(model="gpt-4o-mini", input_tokens=1000, output_tokens=500)
        trace.annotate(user="u1", tags=["a", "b"])
        return "hi"

    with trace.capture() as result:
        llm()
    meta = result.find("llm").meta  # type: ignore[union-attr]
    assert meta["model"] == "gpt-4o-mini"
    assert (meta["prompt_tokens"], meta["completion_tokens"], meta["total_tokens"]) == (
        1000,
        500,
        1500,
    )
    assert meta["estimated_cost_usd"] > 0
    assert meta["user"] == "u1"
    assert json.loads(meta["tags"]) == ["a", "b"]


def test_annotate_caps_long_text() -> None:
    """A long string passed to trace.annotate is cut to the per-value cap, with a marker."""

    @trace
    def annotated() -> None:
        trace.annotate(document="x" * 1_000_000)

    with trace.capture() as result:
        annotated()
    text = result.find("annotated").meta["document"]  # type: ignore[union-attr]
    assert len(text.encode()) <= 8192 and re.search(r"…\[truncated [0-9,]+ chars\]$", text)


def test_usage_outside_any_span_is_a_no_op() -> None:
    """Calling trace.usage/annotate with no span open does nothing and raises nothing."""
    trace.usage(model="gpt-4o", input_tokens=1)
    trace.annotate(x=1)


def test_interrupted_call_is_incomplete_and_interrupted_not_an_error() -> None:
    """Ctrl-C inside a traced call: the node is "interrupted" and incomplete, not a failure."""

    @trace
    def interrupted() -> None:
        raise KeyboardInterrupt

    with trace.capture() as result, pytest.raises(KeyboardInterrupt):
        interrupted()
    node = only(result, "interrupted")
    assert node.status == "interrupted" and node.incomplete and node.error is None
    assert result.totals.errors == 0 and result.totals.interrupted == 1


def test_streaming_llm_generator_takes_usage_from_its_last_chunk() -> None:
    """An llm generator whose final chunk carries usage (OpenAI include_usage) gets tokens."""

    @trace(kind="llm")
    def stream() -> Any:
        yield {"model": "gpt-4o-mini", "choices": [{"delta": {"content": "Hi"}}], "usage": None}
        yield {
            "model": "gpt-4o-mini",
            "choices": [],
            "usage": {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15},
        }

    with trace.capture() as result:
        assert len(list(stream())) == 2
    meta = only(result, "stream").meta
    assert (meta["prompt_tokens"], meta["completion_tokens"], meta["total_tokens"]) == (12, 3, 15)


def test_cancelled_task_marks_its_call_incomplete() -> None:
    """A call cancelled by asyncio (e.g. a timeout) is "cancelled" and incomplete, no error."""

    @trace
    async def slow() -> None:
        await asyncio.sleep(10)

    async def main() -> None:
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(slow(), 0.01)

    with trace.capture() as result:
        asyncio.run(main())
    node = only(result, "slow")
    assert node.incomplete and node.status == "cancelled"
    assert result.totals.errors == 0 and result.totals.cancelled == 1


def test_annotate_redacts_secret_keys() -> None:
    """trace.annotate(api_key=...) stores [REDACTED], like a secret argument."""

    @trace
    def step() -> None:
        trace.annotate(api_key="sk-live-123", user="u1")

    with trace.capture() as result:
        step()
    assert only(result, "step").meta == {"api_key": "[REDACTED]", "user": "u1"}


# --- one path from a value to an attribute -------------------------------------------


def test_static_attributes_are_redacted_and_capped_like_inputs() -> None:
    """attributes= values take the inputs' path: secret names redacted, long text capped."""

    @trace(attributes={"api_key": "sk-live-123", "note": "x" * 10_000, "retries": 3})
    def configured() -> None:
        return None

    with trace.capture() as result:
        configured()
    attrs = only(result, "configured").attributes
    assert attrs["api_key"] == "[REDACTED]"
    assert len(attrs["note"].encode()) <= 8192
    assert re.search(r"…\[truncated [0-9,]+ chars\]$", attrs["note"])
    assert attrs["retries"] == 3


class Hostile:
    """Everything a serializer might call raises."""

    def __repr__(self) -> str:
        raise RuntimeError("no repr")

    def __iter__(self) -> Any:
        raise RuntimeError("no iter")

    def __len__(self) -> int:
        raise RuntimeError("no len")


def test_hostile_static_attributes_never_break_decoration_or_calls() -> None:
    """A cyclic, huge or raising attributes= value neither raises at decoration nor at call."""
    cyclic: dict[str, Any] = {}
    cyclic["self"] = cyclic

    @trace(attributes={"h": Hostile(), "cyclic": cyclic, "big": list(range(10**6)), "n": 10**5000})
    def odd(x: int) -> int:
        return x + 1

    with trace.capture() as result:
        assert odd(1) == 2
    attrs = only(result, "odd").attributes
    assert "repr failed" in attrs["h"]
    assert "<cycle>" in attrs["cyclic"]
    assert len(attrs["big"]) <= 8192
    assert attrs["n"] == "<int bits=16610>"


def test_the_default_span_name_is_the_full_qualname() -> None:
    """As in 0.2.0: a function defined inside another is named ``outer.<locals>.inner``."""

    @trace
    def inner() -> None:
        return None

    with trace.capture() as result:
        inner()
    (node,) = result
    assert node.name == inner.__qualname__
    assert node.name.endswith(".<locals>.inner")
    assert result.find("inner") is node  # find() also takes the short name


@pytest.mark.parametrize("where", ["capture", "user provider"])
def test_a_function_that_ends_its_own_span_gets_one_warning(
    where: str,
    request: pytest.FixtureRequest,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """User code may end the current span itself: the call still returns its value, the span
    keeps what it had, and the only complaint is the SDK's one ``end()`` warning (no status
    or attribute written to the ended span), in a capture and under the user's provider."""
    from opentelemetry import trace as trace_api

    @trace
    def closes_itself(x: int) -> int:
        trace_api.get_current_span().end()
        return x + 1

    if where == "user provider":
        _, exporter = request.getfixturevalue("user_provider")
    with caplog.at_level("WARNING"), trace.capture() as result:
        assert closes_itself(1) == 2
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert warnings == ["Calling end() on an ended span."]
    node = only(result, "closes_itself")
    assert node.inputs == {"x": 1} and node.output is None and node.status != "error"
    if where == "user provider":
        (span,) = exporter.get_finished_spans()
        assert "output.value" not in (span.attributes or {})


def test_a_test_double_tracer_is_driven_through_the_api(otel_globals: Any) -> None:
    """A provider that is a ``unittest.mock`` double (as users' own unit tests set one):
    ``@trace`` starts and ends its spans through the API's calls, never through a
    one-step recorder the double seems to offer (it answers any attribute)."""
    from unittest import mock

    from opentelemetry import trace as trace_api

    provider = mock.MagicMock(spec=trace_api.TracerProvider)
    trace_api.set_tracer_provider(provider)
    tracer = provider.get_tracer.return_value
    span = tracer.start_span.return_value

    @trace
    def add(a: int, b: int) -> int:
        return a + b

    assert add(1, 2) == 3
    name = tracer.start_span.call_args.args[0]
    attributes = tracer.start_span.call_args.kwargs["attributes"]
    assert name.endswith("add") and json.loads(attributes["input.value"]) == {"a": 1, "b": 2}
    span.set_attributes.assert_called_once()
    span.end.assert_called_once_with()
