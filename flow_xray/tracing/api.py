"""The public ``trace`` object: the decorator with ``usage``, ``annotate``, ``tag``, ``capture``,
``run`` and ``arun``."""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar, overload

from opentelemetry import trace as trace_api

from flow_xray import attributes as attr
from flow_xray.llm.usage import Usage, make_usage
from flow_xray.tracing.decorator import wrap
from flow_xray.tracing.options import TraceOptions
from flow_xray.tracing.propagation import propagate
from flow_xray.tracing.recording import contained, record_usage, user_attributes

if TYPE_CHECKING:
    from flow_xray.sdk.capture import Capture
    from flow_xray.tree.model import TraceResult

__all__ = ["Trace", "propagate", "trace"]

F = TypeVar("F", bound=Callable[..., Any])
P = ParamSpec("P")
R = TypeVar("R")


def _on_current_span(build: Callable[P, Usage]) -> Callable[P, None]:
    """Turn a `Usage` builder into a function recording that usage on the current span."""

    @functools.wraps(build)
    def record(*args: P.args, **kwargs: P.kwargs) -> None:
        span = trace_api.get_current_span()
        if not span.is_recording():
            return
        try:
            usage = build(*args, **kwargs)
        except BaseException:
            contained("LLM usage")
            return
        record_usage(span, usage)

    return record


def _on_span(prefix: str, pairs: Iterable[tuple[Any, Any]], what: str) -> None:
    """Write user-named values on the current span as ``prefix + key`` (`user_attributes`)."""
    span = trace_api.get_current_span()
    if not span.is_recording():
        return
    values = user_attributes(pairs, arrays=False)
    try:
        span.set_attributes({prefix + key: v for key, v in values.items()})
    except BaseException:
        contained(what)


_META_USAGE_KEYS = (
    "model",
    "provider",
    "prompt_tokens",
    "completion_tokens",
    "input_tokens",
    "output_tokens",
    "cost_usd",
    "estimated_cost_usd",
)


class Trace:
    """``@trace``: each call of the decorated function becomes an OpenTelemetry span.

    Forms: ``@trace``, ``@trace()``, ``@trace("name")`` and
    ``@trace(name=..., kind=..., capture_input=True, capture_output=True,
    exclude=("arg",), attributes={...}, redact={"ssn", ...})``. ``redact``
    names keys redacted at any depth of this function's inputs and output (as
    ``"[REDACTED]"``, compared case- and separator-insensitively), on top of
    the default redaction; ``exclude`` leaves arguments out. Works on functions, methods,
    static/class methods, ``async def``, generators and async generators; the
    signature is kept. ``kind`` is one of ``chain`` (default), ``llm``,
    ``tool``, ``agent``, ``retriever``, ``embedding`` (other OpenInference
    kinds pass through). On any span, a return value that looks like an
    OpenAI or Anthropic response (or a stream of one) has its model, tokens and
    cost recorded; each request counts once in the totals (see `Totals`).

    Example::

        @trace(kind="tool")
        def search(query: str, limit: int = 3) -> list[str]: ...
    """

    @overload
    def __call__(self, func: F, /) -> F: ...

    @overload
    def __call__(
        self,
        func_or_name: str | None = None,
        /,
        *,
        name: str | None = None,
        kind: str = "chain",
        capture_input: bool = True,
        capture_output: bool = True,
        exclude: Iterable[str] = (),
        attributes: Mapping[str, Any] | None = None,
        redact: Iterable[str] | None = None,
    ) -> Callable[[F], F]: ...

    def __call__(
        self,
        func_or_name: Any = None,
        /,
        *,
        name: str | None = None,
        kind: str = "chain",
        capture_input: bool = True,
        capture_output: bool = True,
        exclude: Iterable[str] = (),
        attributes: Mapping[str, Any] | None = None,
        redact: Iterable[str] | None = None,
    ) -> Any:
        bare = not (func_or_name is None or isinstance(func_or_name, str))
        options = TraceOptions.build(
            name=name if name is not None or bare else func_or_name,
            kind=kind,
            capture_input=capture_input,
            capture_output=capture_output,
            exclude=exclude,
            attributes=attributes,
            redact=redact,
        )
        if bare:
            return wrap(func_or_name, options)
        return lambda func: wrap(func, options)

    # Record LLM usage on the current span (signature and docs: `flow_xray.llm.usage.make_usage`).
    usage = staticmethod(_on_current_span(make_usage))

    @staticmethod
    def annotate(**meta: Any) -> None:
        """Attach user metadata to the current span as ``flow_xray.meta.<key>``.

        Values take the same path as inputs (caps, redaction by key name).

        Example::

            trace.annotate(user_id="u-42", retry=1)
        """
        _on_span(attr.META_PREFIX, meta.items(), "annotations")

    @staticmethod
    def tag(*labels: Any, **tags: Any) -> None:
        """0.3's ``trace.tag``: attach labels and key-value tags to the current span.

        Each label is stored as ``flow_xray.tag.<label>`` = True and each
        ``key=value`` as ``flow_xray.tag.<key>``, through the same path as
        `annotate` (caps, redaction by key name); later calls add to earlier
        ones. The viewer shows them as badges on the call, they are kept in
        the JSON (the node's ``attributes``; ``node.tags`` reads them back)
        and exported over OTLP like any attribute. Outside a traced call it
        does nothing.

        Example::

            trace.tag("cache-miss", "retry", region="eu", attempt=2)
        """
        pairs = itertools.chain(((label, True) for label in labels), tags.items())
        _on_span(attr.TAG_PREFIX, pairs, "tags")

    @staticmethod
    def meta(**kwargs: Any) -> None:
        """0.2.0's ``trace.meta``: LLM keys become usage, every other key metadata.

        ``model``, ``provider``, ``prompt_tokens`` / ``input_tokens``,
        ``completion_tokens`` / ``output_tokens`` and ``cost_usd`` (or 0.2.0's
        ``estimated_cost_usd``) go to `usage` (tokens and cost, priced from
        the table when no cost is given); ``total_tokens`` is derived and
        dropped when both counts are given; the rest goes to `annotate`.

        Example::

            trace.meta(model=resp.model, prompt_tokens=resp.usage.prompt_tokens,
                       completion_tokens=resp.usage.completion_tokens, user="u-42")
        """
        usage = {k: kwargs.pop(k) for k in _META_USAGE_KEYS if k in kwargs}
        estimated = usage.pop("estimated_cost_usd", None)
        if estimated is not None:
            usage.setdefault("cost_usd", estimated)
        counts = ("prompt_tokens", "input_tokens"), ("completion_tokens", "output_tokens")
        if "total_tokens" in kwargs and all(any(k in usage for k in pair) for pair in counts):
            del kwargs["total_tokens"]
        if usage:
            Trace.usage(**usage)
        if kwargs:
            Trace.annotate(**kwargs)

    # The API side reaches the SDK side here, and only here: collecting spans
    # needs an SDK processor, so `flow_xray.sdk` loads when a capture is asked for.

    @staticmethod
    def capture(
        all_threads: bool = False, max_spans: int | None = None, processes: bool = False
    ) -> Capture:
        """See `flow_xray.sdk.capture.capture`."""
        from flow_xray.sdk.capture import capture  # noqa: PLC0415  # the bridge (see above)

        return capture(all_threads, max_spans, processes)

    @staticmethod
    def run(
        fn: Callable[..., Any], /, *args: Any, raise_exceptions: bool = False, **kwargs: Any
    ) -> TraceResult:
        """See `flow_xray.sdk.capture.run`."""
        from flow_xray.sdk.capture import run  # noqa: PLC0415  # the bridge (see above)

        return run(fn, *args, raise_exceptions=raise_exceptions, **kwargs)

    @staticmethod
    async def arun(
        fn: Callable[..., Any], /, *args: Any, raise_exceptions: bool = False, **kwargs: Any
    ) -> TraceResult:
        """See `flow_xray.sdk.capture.arun` (0.3.5's ``await trace.arun(fn, ...)``)."""
        from flow_xray.sdk.capture import arun  # noqa: PLC0415  # the bridge (see above)

        return await arun(fn, *args, raise_exceptions=raise_exceptions, **kwargs)

    propagate = staticmethod(propagate)


trace = Trace()
