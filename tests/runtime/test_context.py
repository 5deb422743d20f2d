"""The context operations every traced call uses: the API's context variable, directly."""

from __future__ import annotations

import asyncio
import contextvars
import logging
import subprocess
import sys
import textwrap

import pytest
from opentelemetry import context as context_api, trace as trace_api
from opentelemetry.trace import NonRecordingSpan, SpanContext

from flow_xray.runtime import context as runtime_context


def test_with_the_apis_default_runtime_they_are_its_context_variable() -> None:
    """Read, set and reset: what the API's ``get_current`` / ``attach`` / ``detach`` see."""
    span = NonRecordingSpan(SpanContext(7, 9, False))
    made = trace_api.set_span_in_context(span)
    token = runtime_context.attach(made)
    try:
        assert context_api.get_current() is made is runtime_context.current_context()
        assert trace_api.get_current_span() is span
    finally:
        runtime_context.detach(token)
    assert trace_api.get_current_span() is not span
    token = context_api.attach(made)  # and the other way round
    assert runtime_context.current_context() is made
    context_api.detach(token)


def test_a_token_of_another_context_is_logged_as_the_api_logs_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Detaching in another context (a coroutine driven from two tasks) never raises: the
    API's message, on the API's logger, as its own ``detach`` does."""
    made = trace_api.set_span_in_context(NonRecordingSpan(SpanContext(7, 9, False)))
    token = contextvars.copy_context().run(runtime_context.attach, made)
    with caplog.at_level(logging.ERROR):
        runtime_context.detach(token)
        api_record = caplog.records[-1]
        context_api.detach(token)
    ours, theirs = caplog.records[-2:]
    assert (
        (ours.name, ours.getMessage())
        == (theirs.name, theirs.getMessage())
        == (
            api_record.name,
            "Failed to detach context",
        )
    )


def test_a_traced_coroutine_resumed_in_another_context_runs_on() -> None:
    """A coroutine whose steps run in two contexts (driven by hand, as some frameworks do):
    its call detaches in the wrong one, which is logged, and the result still comes back."""
    from flow_xray import trace

    @trace
    async def step() -> int:
        await asyncio.sleep(0)
        return 3

    async def main() -> int:
        coro = step()
        waiter = coro.send(None)  # first step in this task's context
        await asyncio.sleep(0)
        try:
            contextvars.copy_context().run(coro.send, None)  # resumed elsewhere
        except StopIteration as done:
            return int(done.value)
        raise AssertionError(waiter)

    with trace.capture() as result:
        assert asyncio.run(main()) == 3
    [node] = list(result)
    assert node.output == 3


def test_another_runtime_context_goes_through_the_api() -> None:
    """A runtime context other than the API's default (``OTEL_PYTHON_CONTEXT``): the API's
    own functions are used, and traced calls still nest."""
    script = textwrap.dedent(
        """
        from opentelemetry import context
        from opentelemetry.context.contextvars_context import ContextVarsRuntimeContext

        class Custom(ContextVarsRuntimeContext):
            pass

        context._RUNTIME_CONTEXT = Custom()
        from flow_xray import trace
        from flow_xray.runtime import context as runtime_context

        assert runtime_context.attach is context.attach
        assert runtime_context.current_context is context.get_current

        @trace
        def inner(x):
            return x + 1

        @trace
        def outer(x):
            return inner(x) * 2

        with trace.capture() as result:
            outer(1)
        [root] = result.roots
        print(root.name, [c.name for c in root.children], root.output)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.split() == ["outer", "['inner']", "4"]
