"""The conversation of each LLM call, for the viewer page: a ``chat`` column.

The turns come from `flow_xray.llm.messages.chat_view` (OpenAI and Anthropic
messages, tool calls, and what other instrumentations recorded), read from
each ``llm`` call's inputs, output and attributes in the trace's columns
(`flow_xray.tree.columns`). No OpenTelemetry here.
"""

from __future__ import annotations

import json
from typing import Any

from flow_xray.jsontext import JsonText
from flow_xray.llm.messages import chat_view
from flow_xray.tree.columns import Absent, Columns


def add_chat(columns: Columns, absent: Absent) -> None:
    """Give each LLM call holding chat messages its conversation (``chat``, see `chat_view`);
    the calls without one are listed in ``absent["chat"]``. No column when no call has one."""
    kinds = columns.get("kind") or ()
    llm = [i for i, kind in enumerate(kinds) if kind == "llm"]
    if not llm:
        return
    inputs, outputs, attributes = (
        columns.get(key) or [None] * len(kinds) for key in ("inputs", "output", "attributes")
    )
    chats: list[Any] = [None] * len(kinds)
    for i in llm:
        chats[i] = chat_view(_parsed(inputs[i]), _parsed(outputs[i]), _parsed(attributes[i]))
    if any(chat is not None for chat in chats):
        columns["chat"] = chats
        absent["chat"] = [i for i, chat in enumerate(chats) if chat is None]


def _parsed(value: Any) -> Any:
    return json.loads(value) if type(value) is JsonText else value
