"""The memory flush: one bounded model call, offering only the memory tool, to save facts before compaction.

Invariants: exactly one model call, capped in output tokens and time; only the memory tool is offered and
only memory calls are executed, through the real memory tool scoped to the actor's person; the flush
instruction and the model's answer are internal traffic — nothing of it is persisted to the conversation
(only the memory writes themselves, with their audit rows). A failed flush never stops the compression.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence

from agent_core.actor import Actor
from agent_core.llm import ChatMessage, LLMClient, LLMError, LLMRequest, complete
from agent_core.memory import MemoryStores
from agent_core.storage import TokenUsage
from agent_core.tools import MEMORY_TOOL_NAME, ToolContext, ToolRegistry, memory_tool

from .outcome import FlushReport
from .settings import CompressionSettings

_LOG = logging.getLogger("mnemogate.compression")

FLUSH_ACTOR = "memory-flush"
FLUSH_INSTRUCTION = (
    "[Internal memory checkpoint — not a message from the person] The earlier part of this conversation "
    "is about to be compacted, and its details will no longer be visible to you. If it holds durable facts "
    "worth keeping across conversations — the person's preferences and corrections, stable personal "
    "details, environment facts, lessons learned — save them now with the memory tool (one batched call "
    "is best; skip what the memory notes already say). Do not save task progress, logs or what is easy to "
    "look up again. Do not reply to the person; if nothing is worth saving, answer 'nothing to save'."
)


class MemoryFlush:
    """Runs the pre-compression memory flush for one actor."""

    def __init__(self, client: LLMClient, memory: MemoryStores, settings: CompressionSettings) -> None:
        self._client = client
        self._settings = settings
        self._registry = ToolRegistry([memory_tool(memory)])

    async def run(self, *, system: str, history: Sequence[ChatMessage], actor: Actor) -> FlushReport:
        """Offer the model one chance to save memories; never raises for a model failure."""
        request = LLMRequest(
            system=system,
            messages=(*history, ChatMessage(role="user", content=FLUSH_INSTRUCTION)),
            tools=self._registry.specs(only=(MEMORY_TOOL_NAME,)),
            max_tokens=self._settings.flush_max_tokens,
        )
        try:
            async with asyncio.timeout(self._settings.flush_timeout_s):
                completion = await complete(self._client, request)
        except LLMError as exc:
            _LOG.warning("memory flush failed: %s", exc)
            return FlushReport(error=str(exc))
        except TimeoutError:
            _LOG.warning("memory flush timed out after %ss", self._settings.flush_timeout_s)
            return FlushReport(error="timed out")
        context = ToolContext(actor.as_writer(FLUSH_ACTOR))
        calls = [c for c in completion.tool_calls if c.name == MEMORY_TOOL_NAME]
        saved = 0
        for call in calls[: self._settings.flush_max_tool_calls]:
            result = await self._registry.dispatch(call, context)
            saved += 0 if result.is_error else 1
        usage = completion.usage
        spent = TokenUsage(
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            cache_read_tokens=usage.cache_read_tokens,
            cache_write_tokens=usage.cache_write_tokens,
        )
        return FlushReport(tool_calls=len(completion.tool_calls), saved=saved, usage=spent)
