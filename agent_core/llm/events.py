"""The events a model stream yields, and the drained :class:`Completion` of one call.

A stream yields, in order: any number of :class:`TextDelta` / :class:`ReasoningDelta` /
:class:`ToolCallEvent` (tool calls only once complete), then exactly one :class:`UsageEvent` and one
:class:`StopEvent` last. Reasoning ("thinking") never arrives as :class:`TextDelta`.

Token semantics follow Anthropic's: ``input_tokens`` counts prompt tokens that were neither read
from nor written to the provider's prompt cache; ``prompt_tokens`` is the whole prompt.
Stop reasons are normalised to: ``end_turn``, ``tool_use``, ``max_tokens``, ``stop_sequence``,
``refusal`` (content filters included), ``pause_turn``, or the provider's own word when unknown.
"""

from __future__ import annotations

from dataclasses import dataclass

from agent_core.llm.messages import ToolCall

__all__ = [
    "Completion",
    "LLMEvent",
    "ReasoningDelta",
    "StopEvent",
    "TextDelta",
    "ToolCallEvent",
    "UsageEvent",
]


@dataclass(frozen=True)
class TextDelta:
    text: str


@dataclass(frozen=True)
class ReasoningDelta:
    """Model "thinking" text: for logs or a debug view, never part of the reply."""

    text: str


@dataclass(frozen=True)
class ToolCallEvent:
    call: ToolCall


@dataclass(frozen=True)
class UsageEvent:
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0

    @property
    def prompt_tokens(self) -> int:
        """Everything the prompt occupied in the context window, cached or not."""
        return self.input_tokens + self.cache_read_tokens + self.cache_write_tokens


@dataclass(frozen=True)
class StopEvent:
    reason: str


LLMEvent = TextDelta | ReasoningDelta | ToolCallEvent | UsageEvent | StopEvent


@dataclass(frozen=True)
class Completion:
    """One model call drained: the reply text, complete tool calls, usage and why it stopped."""

    text: str
    tool_calls: tuple[ToolCall, ...]
    usage: UsageEvent
    stop_reason: str
    reasoning: str = ""
