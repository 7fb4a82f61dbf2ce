"""A real agent on a temporary home: state.db, memory files, skills, tools — only the model is scripted."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from agent_core.actor import Actor
from agent_core.agent import (
    AgentEvent,
    AgentSettings,
    RecallSource,
    SegmentPrompts,
    Toolbox,
    TurnRunner,
)
from agent_core.compression import Compressor
from agent_core.llm import LLMClient
from agent_core.memory import MemoryAuditSink, MemorySettings, MemoryStores
from agent_core.prompt import PromptSettings
from agent_core.skills import SkillStore
from agent_core.storage import MessageRecord, NewMessage, Principal
from agent_core.storage.sqlite import StateStore
from agent_core.tools import builtin_registry

TODAY = date(2026, 11, 30)


@dataclass
class Harness:
    home: Path
    state: StateStore
    memory: MemoryStores
    runner: TurnRunner
    prompts: SegmentPrompts

    async def conversation(self, key: str = "test:dm:ada", person: str = "ada") -> str:
        record = await self.state.ensure_conversation(key, Principal(person_id=person, platform="test"))
        return record.id

    async def say(self, conversation_id: str, text: str, person: str = "ada") -> list[AgentEvent]:
        """The person sends ``text``; returns every event of the turn that answers it."""
        tip = await self.state.resolve_tip(conversation_id)
        await self.state.append_message(tip.id, NewMessage(role="user", content=text, author=person))
        scope = Actor(person, conversation_id=conversation_id, platform="test")
        return [event async for event in self.runner.run(scope)]

    async def messages(self, conversation_id: str) -> list[MessageRecord]:
        return await self.state.conversation_messages(conversation_id)


@contextlib.asynccontextmanager
async def agent_harness(
    home: Path,
    client: LLMClient,
    *,
    recall: RecallSource | None = None,
    settings: AgentSettings | None = None,
    compressor: Callable[[StateStore, MemoryStores], Compressor] | None = None,
    audit: Callable[[StateStore], MemoryAuditSink] | None = None,
) -> AsyncIterator[Harness]:
    async with StateStore(home) as state:
        memory = MemoryStores(home, MemorySettings(), audit=audit(state) if audit is not None else state)
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
            today=lambda: TODAY,
        )
        runner = TurnRunner(
            state=state,
            client=client,
            prompts=prompts,
            toolbox=toolbox,
            settings=settings or AgentSettings(),
            recall=recall,
            compressor=compressor(state, memory) if compressor is not None else None,
        )
        yield Harness(home, state, memory, runner, prompts)
