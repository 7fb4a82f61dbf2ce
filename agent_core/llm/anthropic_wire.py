"""Neutral request -> Anthropic Messages API body, normalised so history bytes never shift.

Invariants: (1) every message's content is a list of blocks, never a bare string, so adding or
removing a cache marker never changes a message's shape; (2) text is stripped and empty blocks are
dropped the same way on every turn; (3) consecutive same-role messages are merged by concatenating
their block lists (never their strings), with tool results first in a user message; (4) tool-call
arguments are replayed as the same mapping; (5) cache breakpoints are added last, by
:mod:`agent_core.llm.caching`, to the fully normalised body.
"""

from __future__ import annotations

from typing import Any

from agent_core.llm.caching import CacheTTL, apply_system_and_3
from agent_core.llm.client import LLMRequest
from agent_core.llm.messages import ChatMessage, ToolSpec
from agent_core.llm.tool_pairing import pair_tool_messages

__all__ = ["EMPTY_TOOL_RESULT_TEXT", "build_anthropic_body", "to_anthropic_messages"]

EMPTY_TOOL_RESULT_TEXT = "(no output)"

Block = dict[str, Any]
WireMessage = dict[str, Any]


def build_anthropic_body(
    request: LLMRequest, *, model: str, max_tokens: int, caching: bool, ttl: CacheTTL = "5m"
) -> dict[str, Any]:
    """The keyword arguments for ``messages.create`` (without ``stream``)."""
    messages = to_anthropic_messages(request.messages)
    system: list[Block] = [{"type": "text", "text": request.system}] if request.system else []
    if caching:
        system, messages = apply_system_and_3(system, messages, ttl=ttl)
    body: dict[str, Any] = {
        "model": model,
        "max_tokens": request.max_tokens or max_tokens,
        "messages": messages,
    }
    if system:
        body["system"] = system
    if request.tools:
        body["tools"] = [_tool(spec) for spec in request.tools]
    return body


def to_anthropic_messages(messages: tuple[ChatMessage, ...]) -> list[WireMessage]:
    merged: list[WireMessage] = []
    for message in pair_tool_messages(messages):
        role, blocks = _role_and_blocks(message)
        if not blocks:
            continue
        if merged and merged[-1]["role"] == role:
            merged[-1]["content"].extend(blocks)
        else:
            merged.append({"role": role, "content": blocks})
    for wire in merged:
        if wire["role"] == "user":
            # The API requires tool results to lead the user message that answers a tool call.
            blocks = wire["content"]
            wire["content"] = [b for b in blocks if b["type"] == "tool_result"] + [
                b for b in blocks if b["type"] != "tool_result"
            ]
    return merged


def _role_and_blocks(message: ChatMessage) -> tuple[str, list[Block]]:
    text = message.content.strip()
    if message.role == "tool":
        return "user", [
            {
                "type": "tool_result",
                "tool_use_id": message.tool_call_id or "",
                "content": text or EMPTY_TOOL_RESULT_TEXT,
            }
        ]
    blocks: list[Block] = [{"type": "text", "text": text}] if text else []
    if message.role == "assistant":
        blocks.extend(
            {"type": "tool_use", "id": call.id, "name": call.name, "input": dict(call.arguments)}
            for call in message.tool_calls
        )
        return "assistant", blocks
    # Anthropic has no mid-conversation system role; such notes travel as user text.
    return "user", blocks


def _tool(spec: ToolSpec) -> Block:
    return {"name": spec.name, "description": spec.description, "input_schema": dict(spec.parameters)}
