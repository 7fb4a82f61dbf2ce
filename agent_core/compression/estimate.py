"""The one prompt-size estimator (chars / 4) used by the trigger, the tail budget and the effectiveness check.

Invariant: every size compression reasons about comes from these functions, so the trigger, the tail
walk and the "was the summary shorter" check can never disagree (the anchor's several estimators let
thresholds drift and caused compression loops). Provider-reported counts, when known, replace the
estimate for the part of the prompt they cover.
"""

from __future__ import annotations

from collections.abc import Iterable

from agent_core.llm import ChatMessage, LLMRequest, ToolSpec, canonical_json

CHARS_PER_TOKEN = 4
MESSAGE_OVERHEAD_TOKENS = 4
"""Role markers and separators each message costs on the wire."""


def text_tokens(text: str | None) -> int:
    """Estimated tokens of ``text``: characters / 4, rounded up."""
    if not text:
        return 0
    return -(-len(text) // CHARS_PER_TOKEN)


def message_tokens(message: ChatMessage) -> int:
    """Estimated tokens of one request-view message, tool calls included."""
    total = MESSAGE_OVERHEAD_TOKENS + text_tokens(message.content) + text_tokens(message.tool_call_id)
    for call in message.tool_calls:
        total += text_tokens(call.id) + text_tokens(call.name) + text_tokens(call.arguments_json())
    return total


def messages_tokens(messages: Iterable[ChatMessage]) -> int:
    return sum(message_tokens(message) for message in messages)


def tools_tokens(tools: Iterable[ToolSpec]) -> int:
    return sum(
        text_tokens(spec.name)
        + text_tokens(spec.description)
        + text_tokens(canonical_json(dict(spec.parameters)))
        for spec in tools
    )


def request_tokens(request: LLMRequest) -> int:
    """Estimated prompt tokens of a whole request: system prompt, messages and tool schemas."""
    return text_tokens(request.system) + messages_tokens(request.messages) + tools_tokens(request.tools)
