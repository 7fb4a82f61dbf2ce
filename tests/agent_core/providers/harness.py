"""A real agent on a temporary home with a ``MemoryManager`` as its recall source and memory mirror."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from agent_core.agent import AgentEvent, AgentSettings, SegmentPrompts, Toolbox, TurnRunner, TurnScope
from agent_core.llm import LLMClient
from agent_core.memory import MemorySettings, MemoryStores
from agent_core.prompt import PromptSettings
from agent_core.providers import MemoryManager, MirroringAuditSink
from agent_core.skills import SkillStore
from agent_core.state import MessageRecord, NewMessage, Principal, StateStore
from agent_core.tools import builtin_registry


@dataclass
class ProviderHarness:
    state: StateStore
    memory: MemoryStores
    runner: TurnRunner
    manager: MemoryManager

    async def conversation(self, person: str) -> str:
        record = await self.state.ensure_conversation(
            f"test:dm:{person}", Principal(person_id=person, platform="test")
        )
        return record.id

    async def say(self, conversation_id: str, text: str, person: str) -> list[AgentEvent]:
        tip = await self.state.resolve_tip(conversation_id)
        await self.state.append_message(tip.id, NewMessage(role="user", content=text, author=person))
        scope = TurnScope(conversation_id=conversation_id, person_id=person, platform="test")
        return [event async for event in self.runner.run(scope)]

    async def messages(self, conversation_id: str) -> list[MessageRecord]:
        return await self.state.conversation_messages(conversation_id)


@contextlib.asynccontextmanager
async def provider_harness(
    home: Path, client: LLMClient, manager: MemoryManager
) -> AsyncIterator[ProviderHarness]:
    async with StateStore(home) as state, manager:
        memory = MemoryStores(home, MemorySettings(), audit=MirroringAuditSink(state, manager))
        skills = SkillStore(home)
        toolbox = Toolbox(builtin_registry(memory=memory, skills=skills))
        prompts = SegmentPrompts(
            home=home,
            settings=PromptSettings(),
            state=state,
            memory=memory,
            skills=skills,
            model="scripted",
            tool_names=toolbox.names(),
            today=lambda: date(2026, 11, 30),
        )
        runner = TurnRunner(
            state=state,
            client=client,
            prompts=prompts,
            toolbox=toolbox,
            settings=AgentSettings(),
            recall=manager,
        )
        yield ProviderHarness(state, memory, runner, manager)
