"""Read what other instrumentations write: chat messages and error details. No OpenTelemetry.

Instrumentors record an LLM call's messages in one of three shapes; all become
the node's ``inputs["messages"]`` / ``output["messages"]`` as
``[{"role": ..., "content": ...}, ...]``:

- GenAI conventions: ``gen_ai.input.messages`` / ``gen_ai.output.messages``, JSON
  text of ``[{"role", "parts": [{"type": "text", "content"}, ...]}]`` with parts
  of every type (tool calls and their responses, reasoning, media), and
  ``gen_ai.system_instructions``;
- OpenInference: ``llm.input_messages.{i}.message.role`` / ``.content`` (or
  ``.contents.{j}.message_content.text``), ``llm.output_messages.…``;
- OpenLLMetry: ``gen_ai.prompt.{i}.role`` / ``.content``, ``gen_ai.completion.{i}.…``.

A failed span that carries no message and no exception event still says why:
its ``error.type`` and HTTP status (``http.response.status_code``, or the older
``http.status_code``: ``rate_limit_error: HTTP 429``). An HTTP client span
(`is_http_attempt`) is one attempt of a request; the accounting counts its
failure as part of the request it belongs to.

Other instrumentations write whatever their library saw (request headers,
connection strings, exception text), unscrubbed: `scrub_foreign` applies
flow-xray's redaction rules (`flow_xray.serialize.secrets`) to their spans
before they become nodes, and `scrub_attributes` to any attribute mapping.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, MutableMapping, Sequence
from typing import Any, Final

from flow_xray import attributes as attr, jsontext
from flow_xray.serialize.limits import Limits, get_limits
from flow_xray.serialize.secrets import REDACTED, hides_value, is_secret_name, scrub_text
from flow_xray.tree.spans import EventRecord, SpanRecord

__all__ = [
    "clean_error_type",
    "error_text",
    "http_status",
    "is_http_attempt",
    "promote_messages",
    "scrub_attributes",
    "scrub_foreign",
    "scrub_value",
]

_GENAI_IN: Final = attr.GEN_AI_INPUT_MESSAGES
_GENAI_OUT: Final = attr.GEN_AI_OUTPUT_MESSAGES
# (prefix, the key that shows the shape is present)
_FLAT_IN: Final = (
    (f"{attr.LLM_INPUT_MESSAGES}.", f"{attr.LLM_INPUT_MESSAGES}.0.message.role"),
    (f"{attr.GEN_AI_PROMPT}.", f"{attr.GEN_AI_PROMPT}.0.role"),
)
_FLAT_OUT: Final = (
    (f"{attr.LLM_OUTPUT_MESSAGES}.", f"{attr.LLM_OUTPUT_MESSAGES}.0.message.role"),
    (f"{attr.GEN_AI_COMPLETION}.", f"{attr.GEN_AI_COMPLETION}.0.role"),
)
_CLASS_REPR: Final = re.compile(r"^<class '([\w.]+)'>$")


def clean_error_type(value: Any) -> str | None:
    """An ``error.type`` / ``exception.type`` as a type name, or None when it names none.

    ``<class 'openai.RateLimitError'>`` (as some instrumentations write it)
    becomes ``openai.RateLimitError``; the semantic conventions' ``_OTHER``
    and bare status codes are not type names.
    """
    if not isinstance(value, str) or not value or value == "_OTHER" or value.isdigit():
        return None
    match = _CLASS_REPR.match(value)
    return match.group(1) if match else value


def http_status(attributes: Mapping[str, Any]) -> int | None:
    """The HTTP response status a span carries (either conventions' key), or None."""
    for key in attr.READ_HTTP_STATUS:
        code = attributes.get(key)
        if isinstance(code, int) and not isinstance(code, bool):
            return code
        if isinstance(code, str) and code.isdigit():
            return int(code)
    return None


def is_http_attempt(attributes: Mapping[str, Any]) -> bool:
    """Whether another instrumentation's span is one HTTP request attempt (an HTTP client
    span: a method and no LLM figure), as ``httpx`` / ``requests`` instrumentations write."""
    return (
        attr.OTEL_SCOPE_NAME in attributes
        and (attr.HTTP_REQUEST_METHOD in attributes or attr.HTTP_METHOD_OLD in attributes)
        and attr.SPAN_KIND not in attributes
    )


def error_text(
    status_message: str | None,
    event_attributes: Mapping[str, Any] | None,
    attributes: Mapping[str, Any],
) -> str:
    """``"Type: message"`` for a failed span, from its status, exception event and attributes."""
    message = status_message or None
    exc_type = None
    if event_attributes is not None:
        exc_type = clean_error_type(event_attributes.get(attr.EXCEPTION_TYPE))
        if not message:
            detail = event_attributes.get(attr.EXCEPTION_MESSAGE)
            message = detail if isinstance(detail, str) and detail else None
    exc_type = exc_type or clean_error_type(attributes.get(attr.ERROR_TYPE))
    if message is None:
        code = http_status(attributes)
        http = f"HTTP {code}" if code is not None else None
        parts = [p for p in (exc_type, http) if p]
        return ": ".join(parts) if parts else "error"
    if exc_type:
        short = exc_type.rpartition(".")[2]
        if not (message.startswith(short) or message.startswith(exc_type)):
            return f"{short}: {message}"
    return message


def promote_messages(
    others: MutableMapping[str, Any], inputs: dict[str, Any], output: Any
) -> tuple[dict[str, Any], Any]:
    """Move message attributes out of ``others`` into ``inputs`` / ``output``.

    ``inputs["messages"]`` is set unless the inputs already have chat messages (the
    GenAI ``gen_ai.system_instructions`` first, as a ``system`` message);
    ``output`` becomes ``{"messages": [...]}`` when the span recorded no output,
    only the repr of a stream it returned (the messages hold what was
    streamed), or LangChain's serialised result. A GenAI tool span's
    ``gen_ai.tool.call.arguments`` are its inputs and ``gen_ai.tool.call.result``
    its output, when it recorded none. The attributes leave ``others`` once read.
    """
    incoming = _genai(others, _GENAI_IN) or _flat_any(others, _FLAT_IN)
    outgoing = _genai(others, _GENAI_OUT) or _flat_any(others, _FLAT_OUT)
    system = _system_instructions(others)
    if system is not None:
        incoming = [system, *(incoming or [])]
    if incoming and not _chat_shaped(inputs.get("messages")):
        inputs = {**inputs, "messages": incoming}
    if outgoing and (output is None or _stream_repr(output) or _generations(output)):
        output = {"messages": outgoing}
    arguments = others.pop(attr.GEN_AI_TOOL_CALL_ARGUMENTS, None)
    if arguments is not None and not inputs:
        decoded = _json_or_text(arguments)
        inputs = dict(decoded) if isinstance(decoded, Mapping) else {"arguments": decoded}
    result = others.pop(attr.GEN_AI_TOOL_CALL_RESULT, None)
    if result is not None and output is None:
        output = _json_or_text(result)
    return inputs, output


def _chat_shaped(messages: Any) -> bool:
    """Messages a chat view reads (role and content), not another library's serialisation
    (LangChain's ``[[{"lc": 1, "type": "constructor", ...}]]``)."""
    return isinstance(messages, (list, tuple)) and any(
        isinstance(m, Mapping) and "role" in m for m in messages
    )


# How a returned stream's output reads: ``<openai.Stream object at 0x..>``, ``<_Stream for
# AsyncStream>`` (flow-xray's shape of a stream it watched).
_STREAM_REPR: Final = re.compile(r"^<[\w. ]*Stream\b")


def _generations(output: Any) -> bool:
    """LangChain's serialised ``LLMResult`` (``{"generations": [[...]]}``): its output
    messages say the same in a form the chat view reads."""
    return isinstance(output, Mapping) and "generations" in output


def _stream_repr(output: Any) -> bool:
    return isinstance(output, str) and _STREAM_REPR.match(output) is not None


def _json_or_text(value: Any) -> Any:
    if isinstance(value, str) and value[:1] in ("{", "[", '"'):
        try:
            return jsontext.loads(value)
        except ValueError:
            return value
    return value


def _system_instructions(others: MutableMapping[str, Any]) -> dict[str, Any] | None:
    """``gen_ai.system_instructions`` (JSON parts, or text) as one ``system`` message."""
    raw = others.pop(attr.GEN_AI_SYSTEM_INSTRUCTIONS, None)
    if raw is None:
        return None
    data = _json_or_text(raw)
    if isinstance(data, list):
        message = _genai_message({"role": "system", "parts": data})
        return message if len(message) > 1 else None
    return {"role": "system", "content": str(data)}


def _genai(others: MutableMapping[str, Any], key: str) -> list[dict[str, Any]] | None:
    raw = others.get(key)
    if raw is None:
        return None
    try:
        data = jsontext.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        return None
    if not isinstance(data, (list, tuple)):
        return None
    messages = [_genai_message(m) for m in data if isinstance(m, Mapping)]
    del others[key]
    return messages


# Placeholders for the media parts of a message (their bytes are not shown).
_MEDIA: Final = frozenset({"blob", "uri", "file", "image", "audio", "video", "media"})


@dataclasses.dataclass
class _Parts:
    """What a GenAI message's parts hold, by type."""

    texts: list[str] = dataclasses.field(default_factory=list)
    reasoning: list[str] = dataclasses.field(default_factory=list)
    calls: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    rest: list[Any] = dataclasses.field(default_factory=list)
    tool_call_id: str | None = None

    def add(self, part: Any) -> None:
        kind = part.get("type") if isinstance(part, Mapping) else None
        if not isinstance(part, Mapping):
            self.rest.append(part)
        elif kind == "text" and part.get("content") is not None:
            self.texts.append(str(part["content"]))
        elif kind == "tool_call":
            self.calls.append(_genai_call(part))
        elif kind == "tool_call_response":
            if part.get("id") is not None:
                self.tool_call_id = str(part["id"])
            response = part.get("response", part.get("result"))
            self.texts.append(response if isinstance(response, str) else jsontext.dumps(response))
        elif kind in ("reasoning", "thinking"):
            self.reasoning.append(str(part.get("content") or ""))
        elif kind in _MEDIA:
            self.texts.append(_media(part))
        else:
            self.rest.append(part)


def _genai_message(message: Mapping[str, Any]) -> dict[str, Any]:
    """One GenAI message as a chat message: its parts of every type read.

    ``text`` parts are the ``content``; ``tool_call`` parts the ``tool_calls``
    (``id``, ``name``, ``arguments``); a ``tool_call_response`` part makes it
    a tool result (``tool_call_id``, its response as the content); ``reasoning``
    parts the ``reasoning``; media parts (``blob``, ``uri``, ``file``) a
    placeholder line naming their modality and type. Parts of other types are
    kept under ``parts``.
    """
    out: dict[str, Any] = {"role": message.get("role")}
    parts = message.get("parts")
    if not isinstance(parts, (list, tuple)):
        if "content" in message:
            out["content"] = message["content"]
        _copy_fields(message, out)
        return out
    found = _Parts()
    for part in parts:
        found.add(part)
    if found.tool_call_id is not None:
        out["tool_call_id"] = found.tool_call_id
        if not found.calls:  # GenAI puts a tool's result in a "user" message: a tool turn
            out["role"] = "tool"
    if found.texts:
        out["content"] = "\n".join(found.texts)
    if found.calls:
        out["tool_calls"] = found.calls
        out.setdefault("content", "")
    if found.reasoning:
        out["reasoning"] = "\n".join(found.reasoning)
    if found.rest:
        out["parts"] = found.rest
    _copy_fields(message, out)
    return out


def _genai_call(part: Mapping[str, Any]) -> dict[str, Any]:
    arguments = part.get("arguments")
    call = {
        "name": str(part.get("name") or "?"),
        "arguments": arguments if isinstance(arguments, str) else jsontext.dumps(arguments),
    }
    if part.get("id") is not None:
        call["id"] = str(part["id"])
    return call


def _media(part: Mapping[str, Any]) -> str:
    """``[image image/png]``, ``[file report.pdf]``: what a media part was, not its bytes."""
    what = part.get("modality") or part.get("type")
    detail = part.get("mime_type") or part.get("uri") or part.get("file_id") or ""
    return f"[{what} {detail}]".replace(" ]", "]")


def _copy_fields(message: Mapping[str, Any], out: dict[str, Any]) -> None:
    for key in ("name", "finish_reason"):
        if message.get(key) is not None:
            out[key] = message[key]


def _flat_any(
    others: MutableMapping[str, Any], shapes: Sequence[tuple[str, str]]
) -> list[dict[str, Any]] | None:
    for prefix, marker in shapes:
        if marker in others or marker.replace(".role", ".content") in others:
            return _flat(others, prefix)
    return None


def _flat(others: MutableMapping[str, Any], prefix: str) -> list[dict[str, Any]]:
    """``prefix{i}.[message.]field[...]`` keys grouped into one dict per index ``i``."""
    by_index: dict[int, dict[str, Any]] = {}
    for key in [k for k in others if k.startswith(prefix)]:
        index, _, rest = key[len(prefix) :].partition(".")
        if not index.isdigit():
            continue
        value = others.pop(key)
        rest = rest.removeprefix("message.")
        message = by_index.setdefault(int(index), {})
        if rest in ("role", "content", "name"):
            message[rest] = value
        elif rest.startswith("contents.") and rest.endswith(".text"):
            message.setdefault("_texts", []).append(value)
        elif rest.startswith("tool_calls."):
            number, _, field = rest[len("tool_calls.") :].partition(".")
            calls = message.setdefault("_calls", {})
            calls.setdefault(number, {})[field.rpartition(".")[2]] = value
        else:
            message[rest] = value
    messages = []
    for position in sorted(by_index):
        message = by_index[position]
        texts = message.pop("_texts", None)
        if texts and "content" not in message:
            message["content"] = "\n".join(str(t) for t in texts)
        calls = message.pop("_calls", None)
        if calls:
            message["tool_calls"] = [calls[k] for k in sorted(calls, key=_as_int)]
        messages.append(message)
    return messages


def _as_int(text: str) -> int:
    return int(text) if text.isdigit() else 0


# --- secrets in other instrumentations' spans ---------------------------------
def scrub_foreign(record: SpanRecord) -> SpanRecord:
    """``record`` with secrets scrubbed when another instrumentation wrote it.

    flow-xray's own spans were scrubbed when their values were written; a span
    carrying ``otel.scope.name`` (another tracer's: OpenInference, the OpenAI
    instrumentation, raw OpenTelemetry) was not. Its attributes, event
    attributes, status message and name get the same rules as our values (see
    `scrub_attributes`) under the process-wide limits. Returns ``record``
    itself when nothing needs scrubbing (the common case: no copy is made).
    """
    attributes = record.attributes
    if attr.OTEL_SCOPE_NAME not in attributes:
        return record
    limits = get_limits()
    if not limits.redact:
        return record
    changes: dict[str, Any] = {}
    scrubbed = scrub_attributes(attributes, limits)
    if scrubbed is not None:
        changes["attributes"] = scrubbed
    events = [_scrub_event(event, limits) for event in record.events]
    if any(new is not old for new, old in zip(events, record.events, strict=True)):
        changes["events"] = tuple(events)
    for field in ("name", "status_message"):
        text = getattr(record, field)
        clean = scrub_text(text, limits) if isinstance(text, str) else text
        if clean is not text:
            changes[field] = clean
    return dataclasses.replace(record, **changes) if changes else record


def _scrub_event(event: EventRecord, limits: Limits) -> EventRecord:
    scrubbed = scrub_attributes(event.attributes, limits)
    return event if scrubbed is None else dataclasses.replace(event, attributes=scrubbed)


def scrub_attributes(attributes: Mapping[str, Any], limits: Limits) -> dict[str, Any] | None:
    """A copy of ``attributes`` with secrets replaced, or None when there is none.

    A key that names a secret (`is_secret_name`: ``http.request.header.authorization``,
    ``api_key``) has its value replaced by ``"[REDACTED]"``; credentials inside
    string values (and in strings inside sequences and nested mappings, whose
    secret-named keys are redacted too) become ``"[REDACTED:<kind>]"``. A JSON
    text (``input.value``, ``llm.invocation_parameters``) stays valid JSON.
    Nothing is copied when nothing changes: a cached name verdict per key and
    `scrub_text`'s quick pre-check per string.
    """
    if not limits.redact:
        return None
    out: dict[str, Any] | None = None
    for key, value in attributes.items():
        if isinstance(key, str) and is_secret_name(key, limits):
            clean = scrub_text(key, limits)  # a key that is itself a credential
            if clean is not key:
                out = dict(attributes) if out is None else out
                del out[key]
                out[clean] = scrub_value(value, limits)
                continue
            if hides_value(key, value, limits):
                new: Any = value if value == REDACTED else REDACTED
            else:
                new = scrub_value(value, limits)
        else:
            new = scrub_value(value, limits)
        if new is not value:
            if out is None:
                out = dict(attributes)
            out[key] = new
    return out


def scrub_value(value: Any, limits: Limits) -> Any:
    """``value`` (a string, a sequence, nested data) with secrets replaced; itself when clean.

    A changed sequence comes back as a list. Iterative, so data nested as deep
    as a trace file's does not hit the recursion limit.
    """
    if isinstance(value, str):
        return _scrub_string(value, limits)
    if not isinstance(value, (tuple, list, dict)) or not _has_secret(value, limits):
        return value
    root: list[Any] = [value]
    stack: list[tuple[Any, Any]] = [(root, 0)]
    while stack:
        holder, slot = stack.pop()
        item = holder[slot]
        if isinstance(item, str):
            holder[slot] = _scrub_string(item, limits)
        elif isinstance(item, (tuple, list)):
            holder[slot] = items = list(item)
            stack.extend((items, i) for i in range(len(items)))
        elif isinstance(item, dict):
            copy = {}
            for key, member in item.items():
                name = key
                if isinstance(key, str) and is_secret_name(key, limits):
                    name = scrub_text(key, limits)  # a key that is itself a credential
                    if name is key and hides_value(key, member, limits):
                        copy[key] = REDACTED
                        continue
                copy[name] = member
                stack.append((copy, name))
            holder[slot] = copy
    return root[0]


def _has_secret(value: Any, limits: Limits) -> bool:
    """Whether anything inside ``value`` would be scrubbed (walked iteratively)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if scrub_text(item, limits) is not item:
                return True
        elif isinstance(item, (tuple, list)):
            stack.extend(item)
        elif isinstance(item, dict):
            for key, member in item.items():
                if (
                    isinstance(key, str)
                    and is_secret_name(key, limits)
                    and member != REDACTED
                    and (scrub_text(key, limits) is not key or hides_value(key, member, limits))
                ):
                    return True
                stack.append(member)
    return False


def _scrub_string(text: str, limits: Limits) -> str:
    """``scrub_text``, but a JSON text whose scrubbing would break it is scrubbed as data."""
    scrubbed = scrub_text(text, limits)
    if scrubbed is text or text[:1] not in ("{", "["):
        return scrubbed
    try:
        data = jsontext.loads(text)
    except ValueError:
        return scrubbed
    clean = scrub_value(data, limits)
    try:
        return jsontext.dumps(clean)
    except (TypeError, ValueError):
        return scrubbed
