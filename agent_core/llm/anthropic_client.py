"""The Anthropic Messages API client: streaming, tool use, prompt caching and usage incl. cache tokens.

Built on the official ``anthropic`` SDK with its own retries disabled (``max_retries=0``); retries
are :mod:`agent_core.llm.retry`'s alone. Every SDK exception is translated to an ``LLMError``.
Thinking blocks surface only as ``ReasoningDelta``.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Self

import anthropic
from anthropic.types import RawMessageStreamEvent

from agent_core.llm.anthropic_wire import build_anthropic_body
from agent_core.llm.client import LLMRequest
from agent_core.llm.errors import (
    LLMConfigError,
    LLMConnectionError,
    LLMError,
    LLMServerError,
    LLMTimeoutError,
    error_for_status,
)
from agent_core.llm.events import LLMEvent, ReasoningDelta, StopEvent, TextDelta, ToolCallEvent, UsageEvent
from agent_core.llm.messages import ToolCall
from agent_core.llm.retry import RetryPolicy, parse_retry_after, stream_with_retries
from agent_core.llm.settings import ModelSettings

__all__ = ["AnthropicClient", "translate_anthropic_error"]

PROVIDER = "anthropic"


class AnthropicClient:
    """An ``LLMClient`` for Claude models; an async context manager owning the SDK's HTTP pool."""

    def __init__(self, settings: ModelSettings) -> None:
        if settings.api_key is None:
            raise LLMConfigError("provider 'anthropic' needs an api_key")
        self.name = f"{PROVIDER}:{settings.model}"
        self._settings = settings
        self._policy = RetryPolicy.from_settings(settings)
        self._sdk = anthropic.AsyncAnthropic(
            api_key=settings.api_key.get_secret_value(),
            base_url=settings.resolved_base_url(),
            timeout=settings.timeout_s,
            max_retries=0,
        )

    async def aclose(self) -> None:
        await self._sdk.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    def stream(self, request: LLMRequest) -> AsyncIterator[LLMEvent]:
        body = build_anthropic_body(
            request,
            model=self._settings.model,
            max_tokens=self._settings.max_tokens,
            caching=self._settings.prompt_caching,
            ttl=self._settings.cache_ttl,
        )
        return stream_with_retries(self._policy, lambda: self._attempt(body))

    async def _attempt(self, body: dict[str, Any]) -> AsyncGenerator[LLMEvent, None]:
        turn = _StreamedTurn()
        try:
            raw_stream = await self._sdk.messages.create(**body, stream=True)
            async with raw_stream:
                async for raw in raw_stream:
                    for event in turn.feed(raw):
                        yield event
        except anthropic.APIError as exc:
            raise translate_anthropic_error(exc) from exc
        if not turn.finished:
            raise LLMServerError("The model's reply was cut off; please try again.", provider=PROVIDER)


def translate_anthropic_error(exc: anthropic.APIError) -> LLMError:
    if isinstance(exc, anthropic.APITimeoutError):
        return LLMTimeoutError(provider=PROVIDER, detail=exc.message)
    if isinstance(exc, anthropic.APIConnectionError):
        return LLMConnectionError(provider=PROVIDER, detail=exc.message)
    if isinstance(exc, anthropic.APIStatusError):
        return error_for_status(
            exc.status_code,
            kind=exc.type,
            detail=exc.api_message or exc.message,
            provider=PROVIDER,
            retry_after=parse_retry_after(exc.response.headers),
        )
    return LLMServerError(provider=PROVIDER, detail=exc.message)


@dataclass
class _PendingTool:
    id: str
    name: str
    start_input: dict[str, object]
    json_parts: list[str] = field(default_factory=list)

    def finish(self) -> ToolCall:
        if not self.json_parts:
            return ToolCall(self.id, self.name, dict(self.start_input))
        return ToolCall.from_json(self.id, self.name, "".join(self.json_parts))


@dataclass
class _StreamedTurn:
    """Folds the raw SSE events of one message into neutral events."""

    usage: dict[str, int] = field(default_factory=dict)
    tools: dict[int, _PendingTool] = field(default_factory=dict)
    stop_reason: str = "end_turn"
    finished: bool = False

    def feed(self, raw: RawMessageStreamEvent) -> list[LLMEvent]:
        if raw.type == "message_start":
            self._take_usage(raw.message.usage.model_dump())
        elif raw.type == "content_block_start":
            return self._start_block(raw.index, raw.content_block)
        elif raw.type == "content_block_delta":
            return self._delta(raw.index, raw.delta)
        elif raw.type == "content_block_stop":
            pending = self.tools.pop(raw.index, None)
            return [ToolCallEvent(pending.finish())] if pending else []
        elif raw.type == "message_delta":
            self.stop_reason = raw.delta.stop_reason or self.stop_reason
            self._take_usage(raw.usage.model_dump())
        elif raw.type == "message_stop":
            self.finished = True
            return [self._usage_event(), StopEvent(self.stop_reason)]
        return []

    def _start_block(self, index: int, block: Any) -> list[LLMEvent]:
        if block.type == "tool_use":
            self.tools[index] = _PendingTool(block.id, block.name, dict(block.input or {}))
        elif block.type == "text" and block.text:
            return [TextDelta(block.text)]
        elif block.type == "thinking" and block.thinking:
            return [ReasoningDelta(block.thinking)]
        return []

    def _delta(self, index: int, delta: Any) -> list[LLMEvent]:
        if delta.type == "text_delta":
            return [TextDelta(delta.text)] if delta.text else []
        if delta.type == "thinking_delta":
            return [ReasoningDelta(delta.thinking)] if delta.thinking else []
        if delta.type == "input_json_delta" and index in self.tools:
            self.tools[index].json_parts.append(delta.partial_json)
        return []

    def _take_usage(self, usage: dict[str, Any]) -> None:
        # message_delta usage is cumulative: a present field replaces the message_start value.
        for key in (
            "input_tokens",
            "output_tokens",
            "cache_read_input_tokens",
            "cache_creation_input_tokens",
        ):
            value = usage.get(key)
            if isinstance(value, int):
                self.usage[key] = value

    def _usage_event(self) -> UsageEvent:
        return UsageEvent(
            input_tokens=self.usage.get("input_tokens", 0),
            output_tokens=self.usage.get("output_tokens", 0),
            cache_read_tokens=self.usage.get("cache_read_input_tokens", 0),
            cache_write_tokens=self.usage.get("cache_creation_input_tokens", 0),
        )
