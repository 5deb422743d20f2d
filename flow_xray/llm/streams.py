"""Usage from streamed LLM responses: stream events, and streams consumed after the call returned.

Providers spread a streamed response's usage over its events: OpenAI Chat
Completions put it in the last chunk (with ``stream_options.include_usage``),
the Responses API in ``response.completed``, Anthropic in ``message_start``
(input tokens) and ``message_delta`` (the final output count). `StreamUsage`
folds such events into one `Usage`.

A traced function may also *return* a stream (``openai.Stream``,
``AsyncStream``, Anthropic's ``Stream`` / ``MessageStream``) that its caller
reads later. `watch_stream` hooks into that very object — the caller gets the
same object back — and reports the usage when the stream ends: read to the end,
closed early, or dropped. No OpenTelemetry here.
"""

from __future__ import annotations

import contextlib
import threading
import weakref
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Generator, Iterator
from typing import Any, Final

from flow_xray.interrupts import let_signals_through
from flow_xray.llm.usage import Usage, field, usage_from_response
from flow_xray.serialize.shapes import module_root

__all__ = ["StreamEnd", "StreamUsage", "is_stream", "stream_usage_for", "watch_stream"]

# Called once when a watched stream ends: (usage or None, how it ended, error or None,
# the text it streamed or None).
StreamEnd = Callable[[Usage | None, str, BaseException | None, str | None], None]
# The streamed text kept for the reply (a span attribute is capped far below this anyway).
_MAX_TEXT: Final = 65_536

_STREAM_MODULES: Final = frozenset({"openai", "anthropic"})
_EVENT_TYPES: Final = frozenset(
    {
        "message_start",
        "message_delta",
        "message_stop",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "ping",
        "text",
        "response.created",
        "response.in_progress",
        "response.completed",
        "response.incomplete",
        "response.failed",
        "response.output_text.delta",
    }
)
_FINAL_RESPONSE_EVENTS: Final = frozenset(
    {"response.completed", "response.incomplete", "response.failed"}
)


_get = field  # mappings by key, objects only by attributes they really have


def _keys(obj: Any) -> Any:
    """Field names of a dict or a pydantic-style object (what a chunk and a response differ in)."""
    if isinstance(obj, dict):
        return obj
    fields = getattr(type(obj), "model_fields", None)
    return fields if isinstance(fields, dict) else getattr(obj, "__dict__", {})


def _count(obj: Any, name: str) -> int | None:
    value = _get(obj, name)
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


class StreamUsage:
    """Folds the events of one streamed response into its `Usage`.

    Example:
        >>> acc = StreamUsage()
        >>> acc.add({"type": "message_start", "message": {"model": "claude-3-5-haiku",
        ...          "usage": {"input_tokens": 12, "output_tokens": 1}}})
        >>> acc.add({"type": "message_delta", "usage": {"output_tokens": 7}})
        >>> (acc.usage().input_tokens, acc.usage().output_tokens)
        (12, 7)
    """

    __slots__ = ("_final", "_input", "_model", "_output", "_provider", "_responses", "_text")

    def __init__(self) -> None:
        self._text: list[str] = []  # the reply's text deltas, bounded (`text`)
        self._final: Usage | None = None  # a complete figure (last chunk, final message)
        self._responses: list[Usage] = []  # whole responses yielded one by one
        self._model: str | None = None
        self._provider: str | None = None
        self._input: int | None = None
        self._output: int | None = None

    def add(self, event: Any) -> None:
        """Take one event or chunk into account; never raises."""
        with contextlib.suppress(Exception):  # an odd event is not ours to surface
            self._add(event)

    def text(self) -> str | None:
        """The text the stream carried (its reply), or None when it carried none."""
        return "".join(self._text) or None

    def _add_text(self, event: Any, kind: Any) -> None:
        if kind == "content_block_delta":  # Anthropic
            piece = _get(_get(event, "delta"), "text")
        elif kind == "response.output_text.delta":  # Responses
            piece = _get(event, "delta")
        elif _get(event, "object") == "chat.completion.chunk":  # OpenAI Chat Completions
            choices = _get(event, "choices") or ()
            piece = _get(_get(choices[0], "delta"), "content") if choices else None
        else:
            return
        if isinstance(piece, str) and sum(map(len, self._text)) < _MAX_TEXT:
            self._text.append(piece)

    def _add(self, event: Any) -> None:
        kind = _get(event, "type")
        self._add_text(event, kind)
        if kind == "message_start":  # Anthropic: input tokens and the model
            message = _get(event, "message")
            start = usage_from_response(message)
            if start is not None:
                self._model, self._provider = start.model, start.provider
                self._input = start.input_tokens
                self._output = start.output_tokens
        elif kind == "message_delta":  # Anthropic: the final (cumulative) output count
            usage = _get(event, "usage")
            output = _count(usage, "output_tokens")
            if output is not None:
                self._output = output
            delta_input = _count(usage, "input_tokens")
            if delta_input:  # newer API versions repeat the input count here
                self._input = delta_input
        elif kind == "message_stop" or kind in _FINAL_RESPONSE_EVENTS:
            # Anthropic's MessageStream hands the final message; Responses its response.
            inner = _get(event, "message") if kind == "message_stop" else _get(event, "response")
            final = usage_from_response(inner)
            if final is not None:
                self._final = final
        elif _get(event, "usage") is not None:
            found = usage_from_response(event)
            if found is None:
                return
            if _get(event, "object") == "chat.completion.chunk" or "choices" not in _keys(event):
                self._final = found  # OpenAI's usage chunk ends the stream
            else:
                self._responses.append(found)  # a whole response: each is a request

    def usage(self) -> Usage | None:
        """The usage seen so far, or None when no event carried any."""
        if self._responses:
            last = self._responses[-1]
            if len(self._responses) == 1:
                return last
            return Usage(
                model=last.model,
                provider=last.provider,
                input_tokens=sum(u.input_tokens or 0 for u in self._responses),
                output_tokens=sum(u.output_tokens or 0 for u in self._responses),
                operation=last.operation,
                from_response=last.from_response,
            )
        if self._final is not None:
            return self._final
        if self._input is None and self._output is None:
            return None
        return Usage(
            model=self._model,
            provider=self._provider or "anthropic",
            input_tokens=self._input,
            output_tokens=self._output,
            operation="chat",
            from_response=self._model is not None,
        )


def stream_usage_for(first: Any) -> StreamUsage | None:
    """A `StreamUsage` fed with ``first`` when it looks like an LLM stream event, else None.

    Generators call this on their first yielded item so that ordinary
    generators pay one check, not one per item.
    """
    try:
        kind = _get(first, "type")
        looks = (
            (isinstance(kind, str) and kind in _EVENT_TYPES)
            or _get(first, "object") == "chat.completion.chunk"
            or (isinstance(first, dict) and "choices" in first)  # a chunk as a plain dict
            or usage_from_response(first) is not None  # whole responses, one per item
        )
    except Exception:
        let_signals_through()
        return None
    if not looks:
        return None
    acc = StreamUsage()
    acc.add(first)
    return acc


def is_stream(obj: Any) -> bool:
    """True for an OpenAI / Anthropic stream object that can be watched (see `watch_stream`)."""
    try:
        return module_root(obj, proxied=True) in _STREAM_MODULES and hasattr(obj, "_iterator")
    except Exception:
        let_signals_through()
        return False


class _Once:
    """Calls ``end`` once, whichever of the iterator or the finalizer gets there first.

    A signal's exception (Ctrl-C) cutting ``end`` short makes it call ``end`` again with
    that exception: ``end`` then does what is left (a span's end does nothing to a span
    already ended).
    """

    __slots__ = ("_end", "_lock", "acc")

    def __init__(self, end: StreamEnd) -> None:
        self._end: StreamEnd | None = end
        self._lock = threading.Lock()
        self.acc = StreamUsage()

    def __call__(self, how: str, error: BaseException | None = None) -> None:
        end = None
        try:
            with self._lock:
                end, self._end = self._end, None
            if end is not None:
                end(self.acc.usage(), how, error, self.acc.text())
        except BaseException as exc:
            if end is not None:
                end(self.acc.usage(), "failed", exc, self.acc.text())
            raise

    def stopped(self, exc: BaseException) -> None:
        """The reading stopped with ``exc``: closed early (``GeneratorExit``) or failed."""
        if isinstance(exc, GeneratorExit):
            self("closed")
        else:
            self("failed", exc)


def _watched(inner: Iterator[Any], once: _Once) -> Generator[Any, None, None]:
    """``inner``'s items, each folded into ``once``'s usage; ``once`` told how reading ended:
    read through, closed early (``GeneratorExit``), failed or interrupted (the exception,
    a signal's too: the reading is over either way).

    Started by `watch_stream` up to its first ``yield``: a signal's exception raised as
    a generator starts (before its ``try``) would end the reading untold.
    """
    try:
        yield None
        for item in inner:
            once.acc.add(item)
            yield item
        once("read")
    except BaseException as exc:
        once.stopped(exc)
        raise


async def _awatched(inner: AsyncIterator[Any], once: _Once) -> AsyncGenerator[Any, None]:
    """`_watched` for an async stream (started the same way)."""
    try:
        yield None
        async for item in inner:
            once.acc.add(item)
            yield item
        once("read")
    except BaseException as exc:
        once.stopped(exc)
        raise


def _started(watched: AsyncGenerator[Any, None]) -> AsyncGenerator[Any, None]:
    """``watched`` run to its first ``yield``, which awaits nothing: no event loop needed."""
    with contextlib.suppress(StopIteration):
        watched.asend(None).send(None)
    return watched


def watch_stream(stream: Any, end: StreamEnd) -> bool:
    """Observe ``stream`` as its reader consumes it; call ``end`` once when it ends.

    The object itself is kept (its iterator is wrapped in place), so the caller
    gets back exactly what the function returned. ``end`` gets the folded usage
    and how the stream ended: ``"read"`` (to the end), ``"closed"`` (stopped
    early), ``"failed"`` (with the error) or ``"dropped"`` (garbage-collected
    unread). Returns False, changing nothing, when ``stream`` cannot be watched.
    """
    try:
        inner = stream._iterator
        once = _Once(end)
        if hasattr(inner, "__anext__"):
            stream._iterator = _started(_awatched(inner, once))
        elif hasattr(inner, "__next__"):
            watched = _watched(inner, once)
            next(watched)
            stream._iterator = watched
        else:
            return False
    except Exception:
        let_signals_through()
        return False
    with contextlib.suppress(TypeError):  # not weak-referenceable: ends when read or closed
        weakref.finalize(stream, once, "dropped")
    return True
