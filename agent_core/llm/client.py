"""The model-client contract: :class:`LLMRequest`, the :class:`LLMClient` protocol and :func:`complete`.

``LLMRequest.system`` is the segment's frozen system prompt and is sent byte for byte; ``messages``
are already the request view (``api_content`` substituted, recall fenced). A client either yields a
full event sequence ending in ``UsageEvent`` then ``StopEvent`` or raises an ``LLMError``; once it has
yielded an event it never retries, so streamed text is never duplicated.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator
from dataclasses import dataclass
from types import TracebackType
from typing import Protocol, Self, runtime_checkable

from agent_core.llm.events import (
    Completion,
    LLMEvent,
    ReasoningDelta,
    StopEvent,
    TextDelta,
    ToolCallEvent,
    UsageEvent,
)
from agent_core.llm.messages import ChatMessage, ToolCall, ToolSpec

__all__ = ["ClosableLLMClient", "LLMClient", "LLMRequest", "complete"]


@dataclass(frozen=True)
class LLMRequest:
    system: str
    messages: tuple[ChatMessage, ...]
    tools: tuple[ToolSpec, ...] = ()
    max_tokens: int | None = None

    def tool_names(self) -> frozenset[str]:
        return frozenset(tool.name for tool in self.tools)


@runtime_checkable
class LLMClient(Protocol):
    """Anything that turns an :class:`LLMRequest` into a stream of :data:`LLMEvent`."""

    name: str

    def stream(self, request: LLMRequest) -> AsyncIterator[LLMEvent]: ...


class ClosableLLMClient(LLMClient, Protocol):
    """A client that holds resources (an HTTP pool); enter it once at the composition root."""

    async def aclose(self) -> None: ...

    async def __aenter__(self) -> Self: ...

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None: ...


async def complete(client: LLMClient, request: LLMRequest) -> Completion:
    """Drain one streamed call into a :class:`Completion` (errors propagate as ``LLMError``)."""
    text: list[str] = []
    reasoning: list[str] = []
    calls: list[ToolCall] = []
    usage = UsageEvent()
    stop_reason = "end_turn"
    events = client.stream(request)
    try:
        async for event in events:
            match event:
                case TextDelta(text=chunk):
                    text.append(chunk)
                case ReasoningDelta(text=chunk):
                    reasoning.append(chunk)
                case ToolCallEvent(call=call):
                    calls.append(call)
                case UsageEvent():
                    usage = event
                case StopEvent(reason=reason):
                    stop_reason = reason
    finally:
        # Close the generator now (not at garbage collection) so its HTTP response is released.
        if isinstance(events, AsyncGenerator):
            await events.aclose()
    return Completion("".join(text), tuple(calls), usage, stop_reason, "".join(reasoning))
