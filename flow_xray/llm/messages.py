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

`chat_view` reads the same shapes back from a trace node (its inputs, output
and attributes, as plain data) into the turns the HTML viewer shows: one
normalised form for OpenAI and Anthropic messages, tool calls and results,
and messages other instrumentations recorded (already moved into the node's
``inputs["messages"]`` / ``output["messages"]`` by the tree builder).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Final

from flow_xray import attributes as attr
from flow_xray.interrupts import let_signals_through
from flow_xray.llm.usage import field

__all__ = ["chat_view", "input_message_attributes", "output_message_attributes"]

_SETTINGS: Final = (str, int, float, bool)
# Flattened messages written at most (two attributes each): with the call's own attributes
# they stay under the SDK's default of 128 attributes a span, which would otherwise drop the
# oldest ones (the call's inputs first). The whole conversation is in ``input.value``.
_MAX_INPUT_MESSAGES: Final = 40
_MAX_OUTPUT_MESSAGES: Final = 8


_get = field  # mappings by key, objects only by attributes they really have


# A recorded list longer than the item cap ends with this text and the count of the rest.
_MORE_ITEMS: Final = "…[truncated] +"


def _is_chat(value: Any) -> bool:
    """Whether ``value`` is a list of chat messages (a recorded one may end with a cut marker)."""
    if not isinstance(value, (list, tuple)) or not value:
        return False
    if _elided(value[-1]):
        value = value[:-1]
    return bool(value) and all(
        isinstance(m, Mapping) and isinstance(m.get("role"), str) for m in value
    )


def _elided(item: Any) -> bool:
    """Whether a list item is the marker a capped list ends with (``+N more items``)."""
    return isinstance(item, str) and item.startswith(_MORE_ITEMS) and item.endswith(" more items")


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


def _flatten(prefix: str, messages: Sequence[tuple[str, str | None]], most: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for i, (role, content) in enumerate(messages[:most]):
        out[f"{prefix}.{i}.message.role"] = role
        if content is not None:
            out[f"{prefix}.{i}.message.content"] = content
    return out


def input_message_attributes(arguments: Mapping[str, Any]) -> dict[str, Any]:
    """OpenInference input attributes for a call's bound arguments; {} when they hold no chat.

    The first argument that is a list of ``{"role": ...}`` mappings is the
    conversation (an Anthropic-style ``system`` string goes first); with none,
    a prompt string (``ask(prompt: str)``: an argument named like a prompt, or
    the only text argument) is one user message. ``llm.invocation_parameters``
    gets the other plain-valued arguments.
    """
    name = next((k for k, v in arguments.items() if _is_chat(v)), None)
    prompt = _prompt_argument(arguments) if name is None else None
    if name is None and prompt is None:
        return {}
    messages: list[tuple[str, str | None]] = []
    system = arguments.get("system")
    if isinstance(system, str):
        messages.append(("system", system))
    if name is not None:
        messages.extend(
            (str(m["role"]), _text(m.get("content"))) for m in arguments[name] if not _elided(m)
        )
    elif prompt is not None:
        name = prompt
        messages.append(("user", arguments[prompt]))
    out = _flatten(attr.LLM_INPUT_MESSAGES, messages, _MAX_INPUT_MESSAGES)
    settings = {
        k: v
        for k, v in arguments.items()
        if k not in (name, "system") and isinstance(v, _SETTINGS) and not isinstance(v, bytes)
    }
    if settings:
        out[attr.LLM_INVOCATION_PARAMETERS] = settings
    return out


_PROMPT_NAMES: Final = ("prompt", "question", "query", "input", "text", "message", "content")
# Text arguments that are settings, not the prompt.
_NOT_PROMPTS: Final = frozenset(
    {"system", "model", "provider", "instructions", "user", "name", "role", "stop", "format"}
)


def _prompt_argument(arguments: Mapping[str, Any]) -> str | None:
    """The argument holding a plain prompt string, or None."""
    texts = [
        k
        for k, v in arguments.items()
        if isinstance(v, str) and v and k.lower() not in _NOT_PROMPTS
    ]
    named = [k for k in texts if k.lower() in _PROMPT_NAMES]
    if named:
        return named[0]
    return texts[0] if len(texts) == 1 else None


def _reply_messages(response: Any) -> list[Any]:
    """The reply messages of a response: OpenAI Chat Completions choices, an Anthropic
    Message (itself), the message and function-call items of a Responses response."""
    choices = _get(response, "choices")
    if isinstance(choices, (list, tuple)) and choices:  # OpenAI Chat Completions
        return [m for choice in choices if (m := _get(choice, "message")) is not None]
    content = _get(response, "content")
    if _get(response, "type") == "message" and isinstance(content, (list, tuple)):  # Anthropic
        return [response]
    output = _get(response, "output")
    if _get(response, "object") == "response" and isinstance(output, (list, tuple)):  # Responses
        return [item for item in output if _get(item, "type") in ("message", "function_call")]
    return []


def _reply(response: Any) -> list[tuple[str, str | None]]:
    return [
        (str(_get(message, "role") or "assistant"), _text(_get(message, "content")))
        for message in _reply_messages(response)
        if _get(message, "type") != "function_call"
    ]


def output_message_attributes(response: Any) -> dict[str, Any]:
    """OpenInference output attributes for an LLM response; {} when it is not a chat response."""
    try:
        return _flatten(attr.LLM_OUTPUT_MESSAGES, _reply(response), _MAX_OUTPUT_MESSAGES)
    except Exception:  # odd objects may raise from any attribute
        let_signals_through()
        return {}


# -- the viewer's form ----------------------------------------------------------

_PARAMS_ATTRIBUTE: Final = attr.LLM_INVOCATION_PARAMETERS
_GENAI_REQUEST: Final = attr.GEN_AI_REQUEST_PREFIX
_NOT_PARAMS: Final = frozenset({"model", "messages", "system", "input", "instructions", "stream"})


def chat_view(inputs: Any, output: Any, attributes: Any = None) -> dict[str, Any] | None:
    """The conversation of an LLM call, as the viewer shows it; None when it holds no chat.

    Args:
        inputs: the node's inputs (a call's bound arguments or a request body):
            a chat list (``messages``, or a Responses ``input`` list or text),
            an Anthropic ``system`` / Responses ``instructions``, and settings.
        output: the node's output: a Chat Completions, Anthropic Messages or
            Responses response (as a dict), ``{"messages": [...]}``, or text.
        attributes: the node's other attributes (``llm.invocation_parameters``,
            ``gen_ai.request.*``).

    Returns:
        ``{"messages": [turn, ...], "response": [turn, ...], "params": {...},
        "model": str}`` (``model`` only when the request names one), where a
        turn is ``{"role", "content"}`` (content text, possibly empty) plus,
        when present, ``tool_calls`` (``[{"name", "arguments", "id"}]``,
        arguments as text), ``tool_call_id`` and ``name``.

    Example:
        >>> chat_view({"messages": [{"role": "user", "content": "hi"}], "temperature": 0}, "hello")
        ... # doctest: +NORMALIZE_WHITESPACE
        {'messages': [{'role': 'user', 'content': 'hi'}],
         'response': [{'role': 'assistant', 'content': 'hello'}], 'params': {'temperature': 0}}
    """
    try:
        return _chat_view(inputs, output, attributes)
    except Exception:  # a debugging view never fails on an odd value
        let_signals_through()
        return None


def _chat_view(inputs: Any, output: Any, attributes: Any) -> dict[str, Any] | None:
    inputs = inputs if isinstance(inputs, Mapping) else {}
    messages: list[dict[str, Any]] = []
    for key in ("system", "instructions"):
        text = _text(inputs.get(key))
        if text:
            messages.append({"role": "system", "content": text})
    name = "messages" if _is_chat(inputs.get("messages")) else None
    name = name or next((k for k, v in inputs.items() if _is_chat(v)), None)
    if name is not None:
        for message in inputs[name]:
            if _elided(message):  # the recorded list was cut: say how many turns are missing
                messages.append({"role": "not recorded", "content": message})
            else:
                messages.extend(_turns(message))
    elif isinstance(inputs.get("input"), str):  # Responses: `input="..."`
        messages.append({"role": "user", "content": inputs["input"]})
    try:
        response = _response_turns(output)
    except Exception:  # an odd output object costs the reply, not the conversation
        let_signals_through()
        response = []
    if not messages and not response:
        return None
    view: dict[str, Any] = {
        "messages": messages,
        "response": response,
        "params": _params(inputs, attributes),
    }
    model = view["params"].pop("_model", None)
    model = inputs.get("model") or model
    if isinstance(model, str) and model:
        view["model"] = model
    return view


def _response_turns(output: Any) -> list[dict[str, Any]]:
    if isinstance(output, str):
        return [{"role": "assistant", "content": output}] if output else []
    if isinstance(output, Mapping) and _is_chat(output.get("messages")):  # promoted attributes
        return [
            turn
            for message in output["messages"]
            if not _elided(message)
            for turn in _turns(message)
        ]
    turns = []
    for message in _reply_messages(output):
        if _get(message, "type") == "function_call":  # a Responses tool call item
            call = _tool_call(message)
            turns.append({"role": "assistant", "content": "", "tool_calls": [call]})
        else:
            turns.extend(_turns(message, default_role="assistant"))
    return turns


def _turns(message: Any, default_role: str = "user") -> list[dict[str, Any]]:
    """One message as turns: Anthropic ``tool_result`` blocks become ``tool`` turns of their own."""
    role = _get(message, "role")
    role = role if isinstance(role, str) and role else default_role
    content = _get(message, "content")
    turn: dict[str, Any] = {"role": role, "content": _text(content) or ""}
    calls = []
    results = []
    if isinstance(content, (list, tuple)):
        for part in content:
            kind = _get(part, "type")
            if kind == "tool_use":  # Anthropic
                calls.append(_tool_call(part))
            elif kind == "tool_result":
                results.append(
                    {
                        "role": "tool",
                        "content": _text(_get(part, "content")) or "",
                        "tool_call_id": str(_get(part, "tool_use_id") or ""),
                    }
                )
            elif kind in ("image", "image_url", "input_image"):
                turn["content"] += ("\n" if turn["content"] else "") + "[image]"
    for call in _get(message, "tool_calls") or ():  # OpenAI, or promoted OpenInference
        calls.append(_tool_call(call))
    legacy = _get(message, "function_call")
    if legacy is not None:
        calls.append(_tool_call(legacy))
    if calls:
        turn["tool_calls"] = calls
    for key in ("tool_call_id", "name"):
        value = _get(message, key)
        if isinstance(value, str) and value:
            turn[key] = value
    if results and not turn["content"] and not calls:
        return results
    return [turn, *results]


def _tool_call(call: Any) -> dict[str, Any]:
    function = _get(call, "function")
    source = function if function is not None else call
    arguments = _get(source, "arguments")
    if arguments is None:
        arguments = _get(source, "input")  # Anthropic tool_use
    if not isinstance(arguments, str):
        arguments = "" if arguments is None else json.dumps(arguments, default=str)
    out = {"name": str(_get(source, "name") or "?"), "arguments": arguments}
    ident = _get(call, "id") or _get(call, "call_id")
    if isinstance(ident, str) and ident:
        out["id"] = ident
    return out


def _params(inputs: Mapping[str, Any], attributes: Any) -> dict[str, Any]:
    """Request settings: ``llm.invocation_parameters``, ``gen_ai.request.*``, plain arguments."""
    params: dict[str, Any] = {}
    attributes = attributes if isinstance(attributes, Mapping) else {}
    raw = attributes.get(_PARAMS_ATTRIBUTE)
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError:
            raw = None
    sources = [raw if isinstance(raw, Mapping) else {}, inputs]
    sources.append(
        {k[len(_GENAI_REQUEST) :]: v for k, v in attributes.items() if k.startswith(_GENAI_REQUEST)}
    )
    for source in sources:
        for key, value in source.items():
            if key not in _NOT_PARAMS and key not in params and _is_setting(value):
                params[key] = value
            elif key == "model" and isinstance(value, str):
                params.setdefault("_model", value)  # taken out again by `_chat_view`
    return params


def _is_setting(value: Any) -> bool:
    if isinstance(value, (list, tuple)):
        return len(value) <= 8 and all(isinstance(v, _SETTINGS) for v in value)
    return isinstance(value, _SETTINGS)
