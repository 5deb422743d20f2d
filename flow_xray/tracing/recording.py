"""What ``@trace`` writes on a span — OpenTelemetry API only, and never raising.

Every value reaches the span through `flow_xray.serialize` (the one path:
same caps, same redaction); every ``record_*`` helper contains its own
failures, so recording never raises into user code.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import functools
import itertools
import logging
from collections.abc import Iterable, Mapping
from typing import Any, Final

from opentelemetry import trace as trace_api
from opentelemetry.context import Context
from opentelemetry.trace import Span, Status, StatusCode, Tracer

from flow_xray import attributes as attr
from flow_xray.errors import Terminated
from flow_xray.interrupts import let_signals_through
from flow_xray.llm.messages import input_message_attributes, output_message_attributes
from flow_xray.llm.requests import same_request
from flow_xray.llm.streams import is_stream, watch_stream
from flow_xray.llm.usage import (
    Usage,
    duplicate_usage_attributes,
    usage_attributes,
    usage_from_response,
)
from flow_xray.runtime.tracer import EndCall, StartCall
from flow_xray.runtime.usage import reported_below
from flow_xray.serialize.cut import CUT, cap_text
from flow_xray.serialize.encode import (
    encode_attribute,
    encode_inputs,
    encode_key,
    encode_output,
    encode_text,
)
from flow_xray.serialize.exceptions import (
    Below,
    FrameText,
    exception_message,
    exception_text,
    qualified_type,
)
from flow_xray.serialize.limits import Limits, get_limits
from flow_xray.serialize.memo import per_class
from flow_xray.serialize.reprs import Reprs, safe_repr
from flow_xray.serialize.shapes import defining_class, from_packages, instance_dict
from flow_xray.serialize.text import writable
from flow_xray.tracing.binding import Binder

logger = logging.getLogger("flow_xray")

_MAX_MESSAGE_BYTES: Final = 2048
_MAX_TRACEBACK_BYTES: Final = 32_768
# User-named attributes read per ``attributes=`` or ``trace.annotate`` (and at most
# ``max_items``): the SDK keeps 128 attributes per span by default and drops the
# oldest beyond that, which would be flow-xray's own (kind, code, inputs).
MAX_USER_ATTRIBUTES: Final = 64


def contained(what: str) -> None:
    """Log (at debug level) a recording failure that was kept away from user code.

    Recording contains every exception, ``BaseException`` included: a
    ``__repr__`` raising ``SystemExit`` or ``KeyboardInterrupt`` while its
    value is recorded must not end the caller's program, and an
    ``asyncio.CancelledError`` from there must not cancel the caller's task.
    What the user's own function raises is never caught here, nor what a signal raised
    (`flow_xray.interrupts`): that one is raised again, here, to reach the program.
    """
    let_signals_through()
    with contextlib.suppress(BaseException):
        logger.debug("flow-xray could not record %s", what, exc_info=True)


def user_attributes(pairs: Iterable[tuple[Any, Any]], *, arrays: bool = True) -> dict[str, Any]:
    """User-named values (``attributes=``, ``trace.annotate``) as attributes; never raises.

    Keys and values both take the one value path: keys become writable names
    of at most 256 chars (`encode_key`; two keys the same once
    encoded get ``#n``), values are capped and redacted by key name
    (`encode_attribute`). At most `user_attribute_limit` pairs are read.
    ``arrays=False`` stores lists as JSON text, as metadata is.
    """
    limits = get_limits()
    out: dict[str, Any] = {}
    try:
        for count, (key, value) in enumerate(itertools.islice(pairs, user_attribute_limit())):
            name = encode_key(key, limits)
            if name in out:
                name = f"{name}#{count}"
            out[name] = encode_attribute(value, limits, key=name, arrays=arrays)
    except BaseException:
        contained("user attributes")
    return out


def user_attribute_limit() -> int:
    """How many user-named attributes one ``attributes=`` or ``trace.annotate`` may add."""
    return min(get_limits().max_items, MAX_USER_ATTRIBUTES)


def record_usage(span: Span, usage: Usage) -> None:
    """Write model, provider, tokens and cost (both attribute families).

    When a span that ended inside this one already reported the same LLM
    request (an instrumentor's span around the HTTP call; the rule is
    `flow_xray.llm.requests.same_request`), the figure is written as that
    span's duplicate instead (``flow_xray.usage.*``), so backends adding up
    token counts count the request once.
    """
    try:
        limits = get_limits()
        twin = _reported_twin(span, usage)
        if twin is not None:
            figures: dict[str, Any] = duplicate_usage_attributes(usage, twin)
        else:
            figures = usage_attributes(usage)
        span.set_attributes({k: encode_attribute(v, limits) for k, v in figures.items()})
    except BaseException:
        contained("LLM usage")


def _reported_twin(span: Span, usage: Usage) -> str | None:
    """The name of a span inside ``span`` that already reported this request, or None."""
    reports = reported_below(span.get_span_context().span_id)
    request = usage.request
    twin = next((r for r in reversed(reports) if same_request(r.request, request)), None)
    return None if twin is None else str(twin.span_name)


_OK: Final = Status(StatusCode.OK)
# Results that can be neither an LLM response nor a stream (dicts can: a response as JSON).
_PLAIN_RESULTS: Final = frozenset({type(None), str, bytes, int, float, bool, list, tuple, set})


def record_result(span: Span, value: Any, usage: Usage | None, llm: bool) -> bool:
    """Record what a successful call's result says about LLM usage (the caller marks it OK,
    as it ends the span).

    Any span, not only ``llm`` ones: a return value that looks like an LLM
    response (or ``usage`` folded from the events a generator yielded) gives
    model, tokens and cost; on ``llm`` spans the reply's messages are written
    too (OpenInference attributes). A returned OpenAI / Anthropic stream is
    watched instead: returns True, and the span is ended (with the stream's
    usage and status) when its reader finishes it. Never raises.
    """
    try:
        kind = type(value)
        probed = kind is dict or (kind not in _PLAIN_RESULTS and may_be_response(value))
        if usage is None and probed:
            usage = usage_from_response(value)
        if (
            usage is None
            and probed
            and kind is not dict  # a dict is never a stream: no module lookups
            and is_stream(value)
            and watch_stream(value, functools.partial(_stream_ended, span))
        ):
            return True
        if usage is not None:
            record_usage(span, usage)
            if llm:
                _record_messages(span, output_message_attributes(value))
    except BaseException:
        contained("the result")
    return False


# Packages whose objects may be LLM responses or streams (or proxies of them, wrapt's).
_RESPONSE_PACKAGES: Final = frozenset(
    {"openai", "anthropic", "google", "mistralai", "cohere", "litellm", "groq", "wrapt"}
)


def may_be_response(value: Any) -> bool:
    """Whether a result may carry LLM usage, decided without running any of its code.

    A mapping; an object of a known LLM package (or a wrapt proxy of one); or
    an object whose class or instance ``__dict__`` declares ``usage`` /
    ``usage_metadata``. Anything else (a lazy proxy, a user object) is never
    probed: reading an attribute it lacks can run its ``__getattr__``.
    """
    kind = type(value)
    if kind is dict or _response_class(kind):
        return True
    found = instance_dict(value)
    return found is not None and ("usage" in found or "usage_metadata" in found)


@per_class
def _response_class(kind: type) -> bool:
    """Whether every value of ``kind`` may carry usage (see `may_be_response`): a mapping,
    a class of a known LLM package, or one that declares ``usage`` / ``usage_metadata``."""
    try:
        return (
            issubclass(kind, Mapping)
            or from_packages(kind, _RESPONSE_PACKAGES)
            or defining_class(kind, "usage") is not None
            or defining_class(kind, "usage_metadata") is not None
        )
    except BaseException:  # recording contains everything
        let_signals_through()
        return False


def _stream_ended(
    span: Span, usage: Usage | None, how: str, error: BaseException | None, text: str | None
) -> None:
    """A stream a traced call returned has ended: record its usage and reply, end the span.
    Called again with a signal's exception if one cut this short: the span ends stopped."""
    if not span.is_recording():  # ended already (by a first call a signal cut short)
        return
    try:
        if usage is not None:
            record_usage(span, usage)
        if text:  # the reply the stream carried, where Phoenix and the chat view read one
            reply = {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "text", "text": text}],
            }
            _record_messages(span, output_message_attributes(reply))
        outcome = None if error is None else stopped_outcome(error)
        if outcome is not None and error is not None:
            record_stopped(span, error, outcome)
        elif error is not None and is_failure(error):
            record_error(span, error)
        elif how != "read":
            span.set_attribute(attr.INCOMPLETE, True)  # closed or dropped before its end
        else:
            span.set_status(_OK)
    except BaseException:
        contained("a stream's end")  # (a signal's is raised again: called again with it)
    try:
        span.end()
    except BaseException:
        contained("a stream's end")


def _record_messages(span: Span, attributes: dict[str, Any]) -> None:
    if attributes:
        span.set_attributes(_encoded(attributes))


def _encoded(attributes: dict[str, Any], limits: Limits | None = None) -> dict[str, Any]:
    """Message attributes through the one value encoder (caps, redaction); JSON for non-text."""
    if not attributes:
        return attributes
    limits = limits or get_limits()
    return {k: encode_attribute(v, limits, arrays=False) for k, v in attributes.items()}


def record_error(
    span: Span, exc: BaseException, reprs: Reprs | None = None, below: Below | None = None
) -> FrameText | None:
    """Mark ``span`` failed: status ERROR ``Type: message``, ``error.type``, an exception event.

    Message and traceback are bounded whatever the exception carries, scrubbed
    of credentials, and the traceback leaves out flow-xray's own frames. The
    raising frame is on the event (``code.file.path`` / ``code.line.number`` /
    ``code.function.name``) and on the span as ``flow_xray.error.location``.
    ``reprs`` is the call's repr cache (an argument in the exception is not
    repr'd again). `below` finds the frames an inner traced call already
    formatted (see `frame_text`); the frames formatted here are returned, for
    the calls further out, or None.
    """
    frames: FrameText | None = None
    try:
        limits = get_limits()
        type_name = writable(type(exc).__qualname__)
        raw: str | None = None
        try:
            raw = exception_message(exc, limits, _MAX_MESSAGE_BYTES, reprs)
            message = encode_text(raw, _MAX_MESSAGE_BYTES, limits)
        except BaseException:
            let_signals_through()
            message = encode_text(safe_repr(exc, _MAX_MESSAGE_BYTES), _MAX_MESSAGE_BYTES, limits)
        full_type = writable(qualified_type(exc))
        try:
            stack, frames = exception_text(exc, limits, _MAX_MESSAGE_BYTES, reprs, raw, below)
        except BaseException:
            let_signals_through()
            stack = f"{full_type}: {message}"
        if len(stack) > _MAX_TRACEBACK_BYTES:  # keep the end: the raising frame and the message
            stack = f"{CUT}\n" + stack[-_MAX_TRACEBACK_BYTES:]
        stack = cap_text(stack, _MAX_TRACEBACK_BYTES + 64)  # scrubbed piece by piece already
        event: dict[str, Any] = {
            attr.EXCEPTION_TYPE: full_type,
            attr.EXCEPTION_MESSAGE: message,
            attr.EXCEPTION_STACKTRACE: stack,
            attr.EXCEPTION_ESCAPED: True,
        }
        site = frames.site if frames is not None else None
        if site is not None:
            path = writable(site.path)
            event.update(
                {
                    attr.CODE_FILE: path,
                    attr.CODE_LINE: site.line,
                    attr.CODE_FUNCTION: writable(site.function),
                }
            )
            span.set_attribute(attr.ERROR_LOCATION, f"{path}:{site.line}")
        span.set_attribute(attr.ERROR_TYPE, full_type)
        span.add_event(attr.EXCEPTION_EVENT, event)
        span.set_status(
            Status(StatusCode.ERROR, f"{type_name}: {message}" if message else type_name)
        )
    except BaseException:
        contained("an exception")
    return frames


def is_failure(exc: BaseException) -> bool:
    """Whether an exception leaving a call means the call failed (not stopped, not exited 0)."""
    if isinstance(exc, GeneratorExit) or stopped_outcome(exc) is not None:
        return False
    if isinstance(exc, SystemExit):
        return exc.code not in (None, 0)
    return True


def stopped_outcome(exc: BaseException) -> str | None:
    """``"cancelled"`` or ``"interrupted"`` when ``exc`` stopped the call rather than failed it.

    Cancelled: ``asyncio.CancelledError`` (a ``task.cancel()``, a timeout from
    ``asyncio.timeout`` / ``wait_for``, a sibling failing in a ``TaskGroup``;
    anyio cancels through it too), ``concurrent.futures.CancelledError`` and
    trio's ``Cancelled``. Interrupted: ``KeyboardInterrupt`` and the SIGTERM
    ``flow-xray run`` turns into `Terminated`. ``sys.exit(n)`` is neither.
    """
    if isinstance(exc, (asyncio.CancelledError, concurrent.futures.CancelledError)):
        return attr.CANCELLED
    if isinstance(exc, (KeyboardInterrupt, Terminated)):
        return attr.INTERRUPTED
    if type(exc).__name__ == "Cancelled" and type(exc).__module__.startswith("trio"):
        return attr.CANCELLED
    return None


def record_stopped(span: Span, exc: BaseException, outcome: str) -> None:
    """Mark ``span`` cancelled or interrupted: `attr.OUTCOME`, incomplete, an exception event.

    The status stays UNSET. OpenTelemetry has no cancelled status (its
    specification issue #4677 and semantic-conventions #560 are open), and
    ERROR would make every backend count the cancelled siblings of one real
    failure as failures too. The exception event (type and message, no
    ``error.type``) still says what stopped the call.
    """
    try:
        full_type = writable(qualified_type(exc))
        limits = get_limits()
        try:
            raw = exception_message(exc, limits, _MAX_MESSAGE_BYTES)
            message = encode_text(raw, _MAX_MESSAGE_BYTES, limits)
        except BaseException:
            let_signals_through()
            message = encode_text(safe_repr(exc, _MAX_MESSAGE_BYTES), _MAX_MESSAGE_BYTES, limits)
        span.set_attributes({attr.OUTCOME: outcome, attr.INCOMPLETE: True})
        span.add_event(
            attr.EXCEPTION_EVENT,
            {
                attr.EXCEPTION_TYPE: full_type,
                attr.EXCEPTION_MESSAGE: message,
                attr.EXCEPTION_ESCAPED: True,
            },
        )
    except BaseException:
        contained("a cancellation")


# (module constants: read on every traced call)
_INPUT_VALUE: Final = attr.INPUT_VALUE
_INPUT_MIME_TYPE: Final = attr.INPUT_MIME_TYPE
_OUTPUT_VALUE: Final = attr.OUTPUT_VALUE
_OUTPUT_MIME_TYPE: Final = attr.OUTPUT_MIME_TYPE
_MIME_JSON: Final = attr.MIME_JSON


def end_stopped(span: Span, exc: BaseException) -> None:
    """End ``span`` as stopped by ``exc``, a signal's raised as it started (in a recorder)."""
    with contextlib.suppress(Exception):
        record_stopped(span, exc, stopped_outcome(exc) or attr.INTERRUPTED)
        span.end()


def input_attributes(
    binder: Binder,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    llm: bool = False,
    reprs: Reprs | None = None,
    limits: Limits | None = None,
) -> dict[str, Any] | None:
    """``input.value`` (JSON of the bound arguments) and its mime type; None if that failed.

    Returned rather than set, so the decorator can hand them to ``start_span``
    with the static attributes: one attribute copy instead of two more calls.
    For an ``llm`` call whose arguments hold chat messages, OpenInference's
    ``llm.input_messages.*`` and ``llm.invocation_parameters`` come too.
    ``reprs`` is the call's repr cache, shared with its output and error;
    ``limits`` the function's own (``@trace(redact=...)``), else the process's.
    """
    try:
        limits = limits or get_limits()
        arguments = binder(args, kwargs)
        # Inputs may use the span's budget but one value's worth, kept for the output.
        value_bytes = limits.max_value_bytes
        budget = limits.max_span_bytes - value_bytes
        text = encode_inputs(
            arguments, limits, value_bytes if budget < value_bytes else budget, reprs
        )
        out = {_INPUT_VALUE: text, _INPUT_MIME_TYPE: _MIME_JSON}
        if llm:
            out.update(_encoded(input_message_attributes(arguments), limits))
    except BaseException:
        contained("inputs")
        return None
    return out


def output_attributes(
    value: Any, used: int, reprs: Reprs | None = None, limits: Limits | None = None
) -> dict[str, Any] | None:
    """``output.value`` within the per-value cap and what is left of the span budget, and
    its mime type; None if that failed.

    Returned rather than set, so the call's end sets them with its status in one
    step. ``reprs`` is the call's repr cache (an argument returned is not repr'd
    again); ``limits`` as in `input_attributes`.
    """
    try:
        limits = limits or get_limits()
        budget = limits.max_span_bytes - used  # what the inputs left, within one value's cap
        if budget >= limits.max_value_bytes:
            budget = limits.max_value_bytes
        elif budget < 256:
            budget = 256
        text, mime = encode_output(value, limits, budget, reprs)
    except BaseException:
        contained("output")
        return None
    return {_OUTPUT_VALUE: text, _OUTPUT_MIME_TYPE: mime}


def end_span(span: Span, attributes: Mapping[str, Any] | None, ok: bool) -> None:
    """End ``span`` with ``attributes`` set and, when ``ok``, its status OK; never raises.

    What the local recorder does in one step (`flow_xray.sdk.local.LocalTracer.end_call`),
    in three API calls, each contained on its own: a span that refuses its attributes
    still ends.
    """
    if attributes:
        try:
            span.set_attributes(attributes)
        except BaseException:
            contained("output")
    if ok:
        try:
            span.set_status(_OK)
        except BaseException:
            contained("the result")
    try:
        span.end()
    except BaseException:
        contained("a span end")


def api_call_recorder(
    tracer: Tracer, name: str, static: Mapping[str, Any]
) -> tuple[StartCall, EndCall]:
    """``@trace``'s start and end of one function's calls through the OpenTelemetry API (any
    tracer; `flow_xray.runtime.tracer.call_recorder_of` says when the tracer has its own).

    The static and input attributes go to ``start_span`` together: the SDK then copies and
    checks them in one go instead of taking the span's lock again for each
    ``set_attribute``, and a sampler sees them, as OpenTelemetry recommends for attributes
    known at the start. The span is made current by ``set_span_in_context``; it ends by
    `end_span`.
    """

    def start(inputs: Mapping[str, Any] | None) -> tuple[Span, Context]:
        span = tracer.start_span(name, attributes={**static, **inputs} if inputs else static)
        try:
            return span, trace_api.set_span_in_context(span)
        except BaseException as exc:  # a signal's: the span is never handed over, so end it
            end_stopped(span, exc)
            raise

    return start, end_span
