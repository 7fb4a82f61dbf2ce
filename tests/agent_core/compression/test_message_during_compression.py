"""A message stored while a compression waits for its summary is carried into the new segment, in order."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

from agent_core.compression import CompressionStatus
from agent_core.llm import LLMRequest, ScriptedClient
from agent_core.llm.events import LLMEvent

from .harness import ChattyModel, compressing_agent, summary_step


class GatedSummariser(ScriptedClient):
    """The auxiliary model: says when it was asked, answers only once ``gate`` is set."""

    def __init__(self) -> None:
        super().__init__(default=summary_step, name="aux")
        self.gate, self.asked = asyncio.Event(), asyncio.Event()

    async def stream(self, request: LLMRequest) -> AsyncIterator[LLMEvent]:
        self.asked.set()
        await self.gate.wait()
        async for event in super().stream(request):
            yield event


async def test_a_message_stored_during_a_forced_compression_is_kept_in_the_new_segment(
    tmp_path: Path,
) -> None:
    summariser = GatedSummariser()
    model = ScriptedClient(default=ChattyModel())
    async with compressing_agent(tmp_path, model, summariser=summariser) as agent:
        conversation = await agent.conversation()
        await agent.fill(conversation, exchanges=8, size=300)
        compressing = asyncio.create_task(agent.runner.force_compress(agent.scope(conversation)))
        await asyncio.wait_for(summariser.asked.wait(), 10)
        await agent.say(conversation, "still there?")  # the chat went on while /compress ran
        summariser.gate.set()
        outcome = await compressing
        assert outcome.status is CompressionStatus.COMPRESSED
        tip = await agent.tip_messages(conversation)
        users = [m.content for m in tip if m.role == "user"]
        assert users[-1] == "still there?"
        assert sum("still there?" in (m.content or "") for m in tip) == 1
