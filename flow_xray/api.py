"""The public ``trace`` object: the decorator with ``usage``, ``annotate``, ``capture``, ``run``."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar, overload

from opentelemetry import trace as trace_api

from flow_xray import attributes as attr
from flow_xray.capture import Capture, capture, propagate, run
from flow_xray.decorator import wrap
from flow_xray.llm import make_usage, usage_attributes
from flow_xray.model import TraceResult
from flow_xray.serialize import REDACTED, encode_output, get_limits, is_secret_name

__all__ = ["Trace", "propagate", "trace"]

F = TypeVar("F", bound=Callable[..., Any])
logger = logging.getLogger("flow_xray")


class Trace:
    """``@trace``: each call of the decorated function becomes an OpenTelemetry span.

    Forms: ``@trace``, ``@trace()``, ``@trace("name")`` and
    ``@trace(name=..., kind=..., capture_input=True, capture_output=True,
    exclude=("arg",), attributes={...})``. Works on functions, methods,
    static/class methods, ``async def``, generators and async generators; the
    signature is kept. ``kind`` is one of ``chain`` (default), ``llm``,
    ``tool``, ``agent``, ``retriever``, ``embedding`` (other OpenInference
    kinds pass through). On ``llm`` spans a return value that looks like an
    OpenAI or Anthropic response has its model, tokens and cost recorded.

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
    ) -> Any:
        if isinstance(kind, str) and kind.lower() not in attr.KINDS:
            logger.warning("flow-xray: unknown span kind %r; recorded as given", kind)
        options: dict[str, Any] = {
            "kind": str(kind).lower(),
            "capture_input": capture_input,
            "capture_output": capture_output,
            "exclude": tuple(exclude),
            "attributes": attributes,
        }
        if func_or_name is None or isinstance(func_or_name, str):
            span_name = name if name is not None else func_or_name
            return lambda func: wrap(func, name=span_name, **options)
        return wrap(func_or_name, name=name, **options)

    @staticmethod
    def usage(
        model: str | None = None,
        input_tokens: int | None = None,
        output_tokens: int | None = None,
        provider: str | None = None,
        cost_usd: float | None = None,
        *,
        prompt_tokens: int | None = None,
        completion_tokens: int | None = None,
        operation: str | None = None,
    ) -> None:
        """Record LLM usage on the current span: model, tokens and cost (from the price table
        unless ``cost_usd`` is given). ``prompt_tokens``/``completion_tokens`` are aliases.

        Example::

            trace.usage(model="gpt-4o-mini", input_tokens=120, output_tokens=40)
        """
        span = trace_api.get_current_span()
        if not span.is_recording():
            return
        try:
            usage = make_usage(
                model=model,
                input_tokens=input_tokens,
                output_tokens=output_tokens,
                provider=provider,
                cost_usd=cost_usd,
                prompt_tokens=prompt_tokens,
                completion_tokens=completion_tokens,
                operation=operation,
            )
            span.set_attributes(usage_attributes(usage))
        except Exception:
            logger.debug("flow-xray could not record usage", exc_info=True)

    @staticmethod
    def annotate(**meta: Any) -> None:
        """Attach user metadata to the current span as ``flow_xray.meta.<key>``.

        Example::

            trace.annotate(user_id="u-42", retry=1)
        """
        span = trace_api.get_current_span()
        if not span.is_recording():
            return
        limits = get_limits()
        for key, value in meta.items():
            try:
                if is_secret_name(key, limits):
                    value = REDACTED
                # Text goes through the encoder too, so it gets the per-value cap.
                elif not isinstance(value, (bool, int, float)):
                    value, _ = encode_output(value, limits, limits.max_value_bytes)
                span.set_attribute(attr.META_PREFIX + key, value)
            except Exception:
                logger.debug("flow-xray could not record annotation %r", key, exc_info=True)

    @staticmethod
    def capture(all_threads: bool = False) -> Capture:
        """See `flow_xray.capture.capture`."""
        return capture(all_threads)

    @staticmethod
    def run(fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> TraceResult:
        """See `flow_xray.capture.run`."""
        return run(fn, *args, **kwargs)

    propagate = staticmethod(propagate)


trace = Trace()
