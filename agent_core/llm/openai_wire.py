"""Neutral request -> OpenAI Chat Completions messages and tools, deterministic byte for byte.

The system prompt is the first message, unchanged. Tool-call arguments are replayed as canonical
JSON (sorted keys, compact), so a persisted call yields the same bytes on every later turn and the
provider's automatic prefix cache keeps hitting. Pairing is repaired by :mod:`tool_pairing`.
"""

from __future__ import annotations

from typing import Any

from agent_core.llm.client import LLMRequest
from agent_core.llm.messages import ChatMessage, ToolSpec
from agent_core.llm.tool_pairing import pair_tool_messages

__all__ = ["EMPTY_TOOL_RESULT_TEXT", "to_openai_messages", "to_openai_tools"]

EMPTY_TOOL_RESULT_TEXT = "(no output)"


def to_openai_messages(request: LLMRequest) -> list[dict[str, Any]]:
    wire: list[dict[str, Any]] = [{"role": "system", "content": request.system}] if request.system else []
    for message in pair_tool_messages(request.messages):
        converted = _message(message)
        if converted is not None:
            wire.append(converted)
    return wire


def to_openai_tools(tools: tuple[ToolSpec, ...]) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {"name": t.name, "description": t.description, "parameters": dict(t.parameters)},
        }
        for t in tools
    ]


def _message(message: ChatMessage) -> dict[str, Any] | None:
    if message.role == "tool":
        return {
            "role": "tool",
            "tool_call_id": message.tool_call_id or "",
            "content": message.content or EMPTY_TOOL_RESULT_TEXT,
        }
    if message.role != "assistant":
        return {"role": message.role, "content": message.content}
    if not message.tool_calls:
        # Several OpenAI-compatible servers reject an empty assistant turn; it carries nothing.
        return {"role": "assistant", "content": message.content} if message.content else None
    return {
        "role": "assistant",
        "content": message.content or None,
        "tool_calls": [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments_json()},
            }
            for call in message.tool_calls
        ],
    }
