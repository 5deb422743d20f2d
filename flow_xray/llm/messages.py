"""Chat messages of an ``llm`` call, as OpenInference's flattened span attributes. No OpenTelemetry.

Phoenix (and other OpenInference readers) show an LLM span's conversation from
``llm.input_messages.{i}.message.role`` / ``.content``,
``llm.output_messages.{i}.message.role`` / ``.content`` and
``llm.invocation_parameters`` (JSON of the request's settings). flow-xray
writes them for ``@trace(kind="llm")`` calls whose arguments include chat
messages (a ``messages`` list of ``{"role", "content"}``), reading the reply
from the returned response (OpenAI Chat Completions and Responses, Anthropic
Messages, as objects or dicts). Values are returned raw: the caller passes
them through the one attribute encoder (caps, redaction).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

__all__ = ["input_message_attributes", "output_message_attributes"]

_SETTINGS: Final = (str, int, float, bool)
_MAX_MESSAGES: Final = 64


def _get(obj: Any, name: str) -> Any:
    if isinstance(obj, Mapping):
        return obj.get(name)
    return getattr(obj, name, None)


def _is_chat(value: Any) -> bool:
    return (
        isinstance(value, (list, tuple))
        and bool(value)
        and all(isinstance(m, Mapping) and isinstance(m.get("role"), str) for m in value)
    )


def _text(content: Any) -> str | None:
    """Message content as text: a string, or the text parts of a content list."""
    if isinstance(content, str):
        return content
    if isinstance(content, (list, tuple)):
        texts = [
            t
            for part in content
            if isinstance(t := _get(part, "text"), str)
            and _get(part, "type") in ("text", "output_text", "input_text", None)
        ]
        return "\n".join(texts) if texts else None
    return None


def _flatten(prefix: str, messages: Sequence[tuple[str, str | None]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for i, (role, content) in enumerate(messages[:_MAX_MESSAGES]):
        out[f"{prefix}.{i}.message.role"] = role
        if content is not None:
            out[f"{prefix}.{i}.message.content"] = content
    return out


def input_message_attributes(arguments: Mapping[str, Any]) -> dict[str, Any]:
    """OpenInference input attributes for a call's bound arguments; {} when they hold no chat.

    The first argument that is a list of ``{"role": ...}`` mappings is the
    conversation (an Anthropic-style ``system`` string goes first);
    ``llm.invocation_parameters`` gets the other plain-valued arguments.
    """
    name = next((k for k, v in arguments.items() if _is_chat(v)), None)
    if name is None:
        return {}
    messages: list[tuple[str, str | None]] = []
    system = arguments.get("system")
    if isinstance(system, str):
        messages.append(("system", system))
    messages.extend((str(m["role"]), _text(m.get("content"))) for m in arguments[name])
    out = _flatten("llm.input_messages", messages)
    settings = {
        k: v
        for k, v in arguments.items()
        if k not in (name, "system") and isinstance(v, _SETTINGS) and not isinstance(v, bytes)
    }
    if settings:
        out["llm.invocation_parameters"] = settings
    return out


def _reply(response: Any) -> list[tuple[str, str | None]]:
    choices = _get(response, "choices")
    if isinstance(choices, (list, tuple)) and choices:  # OpenAI Chat Completions
        replies = []
        for choice in choices:
            message = _get(choice, "message")
            if message is not None:
                replies.append(
                    (str(_get(message, "role") or "assistant"), _text(_get(message, "content")))
                )
        return replies
    content = _get(response, "content")
    if _get(response, "type") == "message" and isinstance(content, (list, tuple)):  # Anthropic
        return [(str(_get(response, "role") or "assistant"), _text(content))]
    output = _get(response, "output")
    if _get(response, "object") == "response" and isinstance(output, (list, tuple)):  # Responses
        return [
            (str(_get(item, "role") or "assistant"), _text(_get(item, "content")))
            for item in output
            if _get(item, "type") == "message"
        ]
    return []


def output_message_attributes(response: Any) -> dict[str, Any]:
    """OpenInference output attributes for an LLM response; {} when it is not a chat response."""
    try:
        return _flatten("llm.output_messages", _reply(response))
    except Exception:  # odd objects may raise from any attribute
        return {}
