"""The OpenAI-compatible Chat Completions client (OpenAI, OpenRouter, Ollama, vLLM, llama.cpp server).

Built on the official ``openai`` SDK with its own retries disabled; retries are
:mod:`agent_core.llm.retry`'s alone. Streamed tool-call argument fragments are assembled by index and
emitted only when complete; ``reasoning_content`` / ``reasoning`` deltas (DeepSeek, vLLM, Ollama,
OpenRouter) surface as ``ReasoningDelta``, never as reply text.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncGenerator, AsyncIterator
from dataclasses import dataclass, field
from types import MappingProxyType, TracebackType
from typing import Any, Self
from urllib.parse import urlsplit

import openai
from openai.types.chat import ChatCompletionChunk

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
from agent_core.llm.openai_wire import to_openai_messages, to_openai_tools
from agent_core.llm.retry import RetryPolicy, parse_retry_after, stream_with_retries
from agent_core.llm.settings import ModelSettings

__all__ = ["OpenAIClient", "translate_openai_error"]

PROVIDER = "openai"

_STOP_REASONS = MappingProxyType(
    {
        "stop": "end_turn",
        "tool_calls": "tool_use",
        "function_call": "tool_use",
        "length": "max_tokens",
        "content_filter": "refusal",
    }
)


class OpenAIClient:
    """An ``LLMClient`` for any OpenAI-compatible endpoint; an async context manager."""

    def __init__(self, settings: ModelSettings) -> None:
        if settings.api_key is None:
            raise LLMConfigError("provider 'openai' needs an api_key (any placeholder for a local server)")
        base_url = settings.resolved_base_url()
        self.name = f"{PROVIDER}:{settings.model}"
        self._settings = settings
        self._policy = RetryPolicy.from_settings(settings)
        # OpenAI's own API rejects max_tokens for reasoning models; local servers often know only it.
        self._max_tokens_key = (
            "max_completion_tokens" if urlsplit(base_url or "").hostname == "api.openai.com" else "max_tokens"
        )
        self._sdk = openai.AsyncOpenAI(
            api_key=settings.api_key.get_secret_value(),
            base_url=base_url,
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
        body: dict[str, Any] = {
            "model": self._settings.model,
            "messages": to_openai_messages(request),
            self._max_tokens_key: request.max_tokens or self._settings.max_tokens,
            "stream_options": {"include_usage": True},
        }
        if request.tools:
            body["tools"] = to_openai_tools(request.tools)
        return stream_with_retries(self._policy, lambda: self._attempt(body))

    async def _attempt(self, body: dict[str, Any]) -> AsyncGenerator[LLMEvent, None]:
        turn = _StreamedTurn()
        try:
            chunks = await self._sdk.chat.completions.create(**body, stream=True)
            async with chunks:
                async for chunk in chunks:
                    for event in turn.feed(chunk):
                        yield event
        except openai.APIError as exc:
            raise translate_openai_error(exc) from exc
        for event in turn.finish():
            yield event


def translate_openai_error(exc: openai.APIError) -> LLMError:
    if isinstance(exc, openai.APITimeoutError):
        return LLMTimeoutError(provider=PROVIDER, detail=exc.message)
    if isinstance(exc, openai.APIConnectionError):
        return LLMConnectionError(provider=PROVIDER, detail=exc.message)
    status = exc.status_code if isinstance(exc, openai.APIStatusError) else None
    if isinstance(exc, openai.APIResponseValidationError):
        return LLMServerError(provider=PROVIDER, status=status, detail=exc.message)
    headers = exc.response.headers if isinstance(exc, openai.APIStatusError) else {}
    body_message = exc.body.get("message") if isinstance(exc.body, dict) else None
    return error_for_status(
        status,
        kind=exc.code or exc.type,
        detail=body_message if isinstance(body_message, str) else exc.message,
        provider=PROVIDER,
        retry_after=parse_retry_after(headers),
    )


@dataclass
class _PendingTool:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


@dataclass
class _StreamedTurn:
    """Folds streamed chunks into neutral events; tool calls are released by :meth:`finish`."""

    tools: dict[int, _PendingTool] = field(default_factory=dict)
    usage: UsageEvent = field(default_factory=UsageEvent)
    finish_reason: str | None = None

    def feed(self, chunk: ChatCompletionChunk) -> list[LLMEvent]:
        if chunk.usage is not None:
            details = chunk.usage.prompt_tokens_details
            cached = (details.cached_tokens or 0) if details is not None else 0
            self.usage = UsageEvent(
                input_tokens=max(chunk.usage.prompt_tokens - cached, 0),
                output_tokens=chunk.usage.completion_tokens,
                cache_read_tokens=cached,
            )
        events: list[LLMEvent] = []
        for choice in chunk.choices:
            if choice.index != 0:
                continue
            delta = choice.delta
            reasoning = _reasoning_text(delta.model_extra or {})
            if reasoning:
                events.append(ReasoningDelta(reasoning))
            if delta.content:
                events.append(TextDelta(delta.content))
            if delta.refusal:
                # A refusal is the model's answer to the user; dropping it would send an empty reply.
                events.append(TextDelta(delta.refusal))
            for part in delta.tool_calls or ():
                pending = self.tools.setdefault(part.index, _PendingTool())
                pending.id = part.id or pending.id
                if part.function is not None:
                    pending.name = part.function.name or pending.name
                    pending.arguments.append(part.function.arguments or "")
            if choice.finish_reason is not None:
                self.finish_reason = choice.finish_reason
        return events

    def finish(self) -> list[LLMEvent]:
        events: list[LLMEvent] = [
            ToolCallEvent(
                ToolCall.from_json(
                    pending.id or f"call_{uuid.uuid4().hex[:24]}", pending.name, "".join(pending.arguments)
                )
            )
            for _, pending in sorted(self.tools.items())
        ]
        if self.finish_reason is None:
            reason = "tool_use" if self.tools else "end_turn"
        else:
            reason = _STOP_REASONS.get(self.finish_reason, self.finish_reason)
        return [*events, self.usage, StopEvent(reason)]


def _reasoning_text(extra: dict[str, Any]) -> str:
    for key in ("reasoning_content", "reasoning"):
        value = extra.get(key)
        if isinstance(value, str) and value:
            return value
    return ""
