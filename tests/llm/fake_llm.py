"""A fake OpenAI- and Anthropic-compatible HTTP server on 127.0.0.1 whose usage is known.

The real ``openai`` and ``anthropic`` clients talk to it (``base_url=server.openai_url``
or ``server.anthropic_url``). Every request is answered with token counts that
the server computes and logs in `FakeLLM.calls`, so a test can compare what
flow-xray shows with what "the provider" billed:

- ``POST /v1/chat/completions``: JSON, or SSE chunks (``stream: true``) ending
  ``data: [DONE]``, with a usage chunk when ``stream_options.include_usage``; a
  request offering ``tools`` with no tool result yet is answered with a call of
  the first tool (an agent's first turn), the next one with the text reply;
- ``POST /v1/responses``: JSON, or SSE ``response.*`` events ending ``response.completed``;
- ``POST /v1/embeddings``: float or base64 vectors;
- ``POST /v1/messages`` (Anthropic): JSON, or SSE ``message_start`` …
  ``message_delta`` … ``message_stop``.

A model named ``fail-429`` or ``fail-500`` gets that status with the provider's
error body (``{"error": {...}}``); such calls are logged with ``ok=False``.
``flaky-429`` fails a client's first attempt only (``x-stainless-retry-count: 0``),
so a client retrying succeeds. Error answers carry ``retry-after-ms: 10``.

Token counts: input = 7 + the number of words in the request's text, output =
the number of words in the reply (``REPLY``), so different prompts give
different, predictable numbers. Run it standalone with
``python -m tests.llm.fake_llm`` (prints its base URL, serves until killed).
"""

from __future__ import annotations

import base64
import json
import struct
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

REPLY = "The answer is forty two, as computed."
EMBEDDING_DIMENSIONS = 4


@dataclass(frozen=True)
class Call:
    """One request the server answered: what it billed, and whether it failed."""

    path: str
    model: str
    stream: bool
    status: int
    input_tokens: int
    output_tokens: int

    @property
    def ok(self) -> bool:
        """True for a 2xx answer."""
        return 200 <= self.status < 300

    @property
    def total_tokens(self) -> int:
        """Input plus output tokens."""
        return self.input_tokens + self.output_tokens


@dataclass
class FakeLLM:
    """The running server: its URLs and the log of answered calls."""

    url: str
    calls: list[Call] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    # A chat stream for model ``stall-stream`` sends its first chunk, sets ``stalled`` and
    # waits for ``release`` (at most 10 s) before the rest: a reader is then blocked.
    stalled: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)

    @property
    def openai_url(self) -> str:
        """``base_url`` for ``openai.OpenAI``."""
        return f"{self.url}/v1"

    @property
    def anthropic_url(self) -> str:
        """``base_url`` for ``anthropic.Anthropic`` (the client appends ``/v1/messages``)."""
        return self.url

    def billed(self) -> tuple[int, int]:
        """Input and output tokens of every successful call so far."""
        with self.lock:
            ok = [c for c in self.calls if c.ok]
        return sum(c.input_tokens for c in ok), sum(c.output_tokens for c in ok)

    def failures(self) -> int:
        """How many calls were answered with an error status."""
        with self.lock:
            return sum(not c.ok for c in self.calls)

    def reset(self) -> None:
        """Forget the calls logged so far."""
        with self.lock:
            self.calls.clear()
        self.stalled.clear()
        self.release.clear()


def _words(value: Any) -> int:
    """Words in every string inside a JSON value (message contents, input, system)."""
    if isinstance(value, str):
        return len(value.split())
    if isinstance(value, list):
        return sum(_words(v) for v in value)
    if isinstance(value, dict):
        return sum(
            _words(v) for k, v in value.items() if k in ("content", "text", "input", "system")
        )
    return 0


def input_tokens_for(body: dict[str, Any]) -> int:
    """The input tokens the server bills for a request body."""
    text = body.get("messages") or body.get("input") or []
    return 7 + _words(text) + _words(body.get("system") or "")


OUTPUT_TOKENS = len(REPLY.split())


def _reply_chunks() -> list[str]:
    words = REPLY.split(" ")
    return [w if i == 0 else " " + w for i, w in enumerate(words)]


def _sse(event: str | None, data: Any) -> bytes:
    text = data if isinstance(data, str) else json.dumps(data)
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {text}\n\n".encode()


_SAMPLE = {"string": "Paris", "integer": 3, "number": 1.5, "boolean": True}


def _tool_call(body: dict[str, Any], n: int) -> dict[str, Any] | None:
    """A call of the request's first tool, with sample values for its required arguments,
    while no tool result is in the conversation yet (an agent's first turn); else None."""
    tools = body.get("tools") or []
    messages = body.get("messages") or []
    if not tools or any(m.get("role") == "tool" for m in messages if isinstance(m, dict)):
        return None
    function = tools[0].get("function") or {}
    schema = function.get("parameters") or {}
    properties = schema.get("properties") or {}
    arguments = {
        name: _SAMPLE.get(str((properties.get(name) or {}).get("type")), "x")
        for name in schema.get("required") or list(properties)
    }
    return {
        "id": f"call_fake{n}",
        "type": "function",
        "function": {"name": function.get("name", "tool"), "arguments": json.dumps(arguments)},
    }


class _Handler(BaseHTTPRequestHandler):
    server_version = "fake-llm/1"
    protocol_version = "HTTP/1.1"
    fake: FakeLLM  # set on the subclass made per server

    def log_message(self, format: str, *args: Any) -> None:
        """Keep test output clean."""

    # --- plumbing -----------------------------------------------------------

    def _json(self, status: int, payload: Any) -> None:
        body = json.dumps(payload).encode()
        self.send_response(status)
        if status >= 400:  # the clients' default retries wait this long, not seconds
            self.send_header("retry-after-ms", "10")
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("x-request-id", f"req_{len(self.fake.calls)}")
        self.end_headers()
        self.wfile.write(body)

    def _stream(self, events: Iterator[bytes]) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for event in events:
            self.wfile.write(f"{len(event):x}\r\n".encode() + event + b"\r\n")
        self.wfile.write(b"0\r\n\r\n")

    def _log(self, path: str, model: str, stream: bool, status: int, i: int, o: int) -> str:
        """Log the call; return a response id unique to it (as real providers give)."""
        with self.fake.lock:
            self.fake.calls.append(Call(path, model, stream, status, i, o))
            return str(len(self.fake.calls))

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except ValueError:
            self._json(400, {"error": {"message": "body is not JSON", "type": "invalid_request"}})
            return
        path = self.path.split("?", 1)[0]
        model = str(body.get("model", ""))
        anthropic = path == "/v1/messages"
        retry = self.headers.get("x-stainless-retry-count", "0")
        if model in ("fail-429", "fail-500") or (model == "flaky-429" and retry == "0"):
            status = int(model[-3:])
            self._log(path, model, bool(body.get("stream")), status, 0, 0)
            self._error(status, anthropic)
            return
        handler = {
            "/v1/chat/completions": self._chat,
            "/v1/responses": self._responses,
            "/v1/embeddings": self._embeddings,
            "/v1/messages": self._messages,
        }.get(path)
        if handler is None:
            self._json(404, {"error": {"message": f"no route {path}", "type": "not_found"}})
            return
        handler(path, model, body)

    def _error(self, status: int, anthropic: bool) -> None:
        if anthropic:
            kind = "rate_limit_error" if status == 429 else "api_error"
            self._json(
                status,
                {"type": "error", "error": {"type": kind, "message": f"fake {kind} ({status})"}},
            )
            return
        kind = "rate_limit_exceeded" if status == 429 else "server_error"
        self._json(
            status,
            {"error": {"message": f"fake {kind} ({status})", "type": kind, "code": kind}},
        )

    # --- OpenAI -------------------------------------------------------------

    def _chat(self, path: str, model: str, body: dict[str, Any]) -> None:
        i, o = input_tokens_for(body), OUTPUT_TOKENS
        stream = bool(body.get("stream"))
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        usage = {"prompt_tokens": i, "completion_tokens": o, "total_tokens": i + o}
        n = self._log(path, model, stream, 200, i, o)
        base = {"id": f"chatcmpl-fake{n}", "created": int(time.time()), "model": model}
        if not stream:
            message: dict[str, Any] = {"role": "assistant", "content": REPLY}
            call = _tool_call(body, n)
            if call is not None:
                message = {"role": "assistant", "content": None, "tool_calls": [call]}
            self._json(
                200,
                {
                    **base,
                    "object": "chat.completion",
                    "choices": [
                        {
                            "index": 0,
                            "message": message,
                            "finish_reason": "stop" if call is None else "tool_calls",
                            "logprobs": None,
                        }
                    ],
                    "usage": usage,
                },
            )
            return

        def events() -> Iterator[bytes]:
            chunk = {**base, "object": "chat.completion.chunk"}
            first = {"role": "assistant", "content": ""}
            yield _sse(None, {**chunk, "choices": [{"index": 0, "delta": first}]})
            if model == "stall-stream":
                self.fake.stalled.set()
                self.fake.release.wait(10)
            for piece in _reply_chunks():
                delta = {"index": 0, "delta": {"content": piece}, "finish_reason": None}
                yield _sse(None, {**chunk, "choices": [delta]})
            end = {"index": 0, "delta": {}, "finish_reason": "stop"}
            yield _sse(None, {**chunk, "choices": [end]})
            if include_usage:
                yield _sse(None, {**chunk, "choices": [], "usage": usage})
            yield _sse(None, "[DONE]")

        self._stream(events())

    def _responses(self, path: str, model: str, body: dict[str, Any]) -> None:
        i, o = input_tokens_for(body), OUTPUT_TOKENS
        stream = bool(body.get("stream"))
        n = self._log(path, model, stream, 200, i, o)
        message = {
            "type": "message",
            "id": f"msg_fake{n}",
            "status": "completed",
            "role": "assistant",
            "content": [{"type": "output_text", "text": REPLY, "annotations": []}],
        }
        response = {
            "id": f"resp_fake{n}",
            "object": "response",
            "created_at": int(time.time()),
            "status": "completed",
            "model": model,
            "output": [message],
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
            "usage": {
                "input_tokens": i,
                "output_tokens": o,
                "total_tokens": i + o,
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens_details": {"reasoning_tokens": 0},
            },
        }
        if not stream:
            self._json(200, response)
            return

        def events() -> Iterator[bytes]:
            started = {**response, "status": "in_progress", "output": [], "usage": None}
            yield _sse(
                "response.created",
                {"type": "response.created", "sequence_number": 0, "response": started},
            )
            for n, piece in enumerate(_reply_chunks(), start=1):
                yield _sse(
                    "response.output_text.delta",
                    {
                        "type": "response.output_text.delta",
                        "sequence_number": n,
                        "item_id": f"msg_fake{n}",
                        "output_index": 0,
                        "content_index": 0,
                        "delta": piece,
                        "logprobs": [],
                    },
                )
            yield _sse(
                "response.completed",
                {"type": "response.completed", "sequence_number": 99, "response": response},
            )

        self._stream(events())

    def _embeddings(self, path: str, model: str, body: dict[str, Any]) -> None:
        texts = body.get("input")
        items = texts if isinstance(texts, list) else [texts]
        i = input_tokens_for(body)
        self._log(path, model, False, 200, i, 0)
        vector = [0.25 * (n + 1) for n in range(EMBEDDING_DIMENSIONS)]
        as_base64 = body.get("encoding_format") == "base64"
        encoded: Any = (
            base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode()
            if as_base64
            else vector
        )
        self._json(
            200,
            {
                "object": "list",
                "data": [
                    {"object": "embedding", "index": n, "embedding": encoded}
                    for n in range(len(items))
                ],
                "model": model,
                "usage": {"prompt_tokens": i, "total_tokens": i},
            },
        )

    # --- Anthropic ----------------------------------------------------------

    def _messages(self, path: str, model: str, body: dict[str, Any]) -> None:
        i, o = input_tokens_for(body), OUTPUT_TOKENS
        stream = bool(body.get("stream"))
        n = self._log(path, model, stream, 200, i, o)
        message = {
            "id": f"msg_fake{n}",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [{"type": "text", "text": REPLY}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": i, "output_tokens": o},
        }
        if not stream:
            self._json(200, message)
            return

        def events() -> Iterator[bytes]:
            # As the real API does: message_start carries the input tokens (and a
            # placeholder output count), message_delta the final output count.
            start = {**message, "content": [], "stop_reason": None}
            start["usage"] = {"input_tokens": i, "output_tokens": 1}
            yield _sse("message_start", {"type": "message_start", "message": start})
            block = {"type": "text", "text": ""}
            yield _sse(
                "content_block_start",
                {"type": "content_block_start", "index": 0, "content_block": block},
            )
            yield _sse("ping", {"type": "ping"})
            for piece in _reply_chunks():
                delta = {"type": "text_delta", "text": piece}
                yield _sse(
                    "content_block_delta",
                    {"type": "content_block_delta", "index": 0, "delta": delta},
                )
            yield _sse("content_block_stop", {"type": "content_block_stop", "index": 0})
            yield _sse(
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                    "usage": {"output_tokens": o},
                },
            )
            yield _sse("message_stop", {"type": "message_stop"})

        self._stream(events())


class RunningServer:
    """A `FakeLLM` served from a background thread; `stop()` shuts it down."""

    def __init__(self) -> None:
        handler = type("Handler", (_Handler,), {})
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self.fake = FakeLLM(url=f"http://127.0.0.1:{self._server.server_address[1]}")
        handler.fake = self.fake
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop serving and close the socket."""
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


if __name__ == "__main__":
    running = RunningServer()
    print(running.fake.url, flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        running.stop()
