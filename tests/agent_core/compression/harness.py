"""A real agent with compression on a temporary home: only the main model and the summariser are scripted."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

from agent_core.actor import Actor
from agent_core.agent import AgentEvent, SegmentPrompts, TurnRunner
from agent_core.compression import (
    BANNER,
    FLUSH_INSTRUCTION,
    CompressionHooks,
    CompressionOutcome,
    CompressionSettings,
    Compressor,
)
from agent_core.llm import LLMClient, LLMRequest, ScriptStep
from agent_core.memory import MemoryStores
from agent_core.storage import MessageRecord, NewMessage, Principal
from agent_core.storage.sqlite import StateStore
from tests.agent_core.agent.harness import agent_harness

WINDOW = 8_000
"""A small context window: the threshold (4,000 tokens) is a few exchanges above the fixed prompt."""


class FakeClock:
    """Wall-clock seconds the test moves by hand (cooldowns)."""

    def __init__(self, now: float = 1_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


class ChattyModel:
    """The main model: answers at length; asked to flush, it saves one numbered fact about Ada."""

    def __init__(self, reply: str = "Here is a thorough answer about cats. " * 12) -> None:
        self.reply = reply
        self.flushes: list[LLMRequest] = []

    def __call__(self, request: LLMRequest) -> ScriptStep:
        if request.messages and request.messages[-1].content == FLUSH_INSTRUCTION:
            self.flushes.append(request)
            n = len(self.flushes)
            fact = {"action": "add", "target": "user", "content": f"Ada's fact number {n}"}
            return ScriptStep.tool_call("memory", fact, id=f"flush_{n}")
        return ScriptStep.reply(self.reply)


def summary_step(request: LLMRequest) -> ScriptStep:
    """A well-behaved summariser: a short structured summary naming whether it updated an earlier one."""
    updated = "<previous-summary>" in request.messages[0].content
    return ScriptStep.reply(
        f"## Goal\nChat about cats ({'updated' if updated else 'new'}).\n## Active state\nok"
    )


@dataclass
class CompressingAgent:
    home: Path
    state: StateStore
    memory: MemoryStores
    prompts: SegmentPrompts
    compressor: Compressor
    runner: TurnRunner

    async def conversation(self, key: str = "test:dm:ada", person: str = "ada") -> str:
        record = await self.state.ensure_conversation(key, Principal(person_id=person, platform="test"))
        return record.id

    def scope(self, conversation_id: str, person: str = "ada") -> Actor:
        return Actor(person, conversation_id=conversation_id, platform="test")

    async def say(self, conversation_id: str, text: str, person: str = "ada") -> list[AgentEvent]:
        """The person sends ``text``; returns every event of the turn that answers it."""
        tip = await self.state.resolve_tip(conversation_id)
        await self.state.append_message(tip.id, NewMessage(role="user", content=text, author=person))
        return [event async for event in self.runner.run(self.scope(conversation_id, person))]

    async def fill(self, conversation_id: str, exchanges: int, size: int = 1_200) -> None:
        """Store ``exchanges`` earlier question/answer pairs of about ``size`` chars each."""
        tip = await self.state.resolve_tip(conversation_id)
        rows: list[NewMessage] = []
        for n in range(exchanges):
            rows.append(NewMessage(role="user", content=f"old question {n}: " + "q" * size, author="ada"))
            rows.append(
                NewMessage(role="assistant", content=f"old answer {n}: " + "a" * size, author="scripted")
            )
        await self.state.append_messages(tip.id, rows)

    async def tip_messages(self, conversation_id: str) -> list[MessageRecord]:
        tip = await self.state.resolve_tip(conversation_id)
        return await self.state.segment_messages(tip.id)


def outcomes(events: list[AgentEvent]) -> list[CompressionOutcome]:
    return [event for event in events if isinstance(event, CompressionOutcome)]


def banner_count(messages: list[MessageRecord]) -> int:
    return sum((m.content or "").count(BANNER) for m in messages)


@contextlib.asynccontextmanager
async def compressing_agent(
    home: Path,
    client: LLMClient,
    *,
    summariser: LLMClient | None = None,
    context_window: int = WINDOW,
    settings: CompressionSettings | None = None,
    clock: FakeClock | None = None,
    hooks: CompressionHooks | None = None,
) -> AsyncIterator[CompressingAgent]:
    built: list[Compressor] = []

    def build(state: StateStore, memory: MemoryStores) -> Compressor:
        built.append(
            Compressor(
                state=state,
                memory=memory,
                client=client,
                summariser=summariser,
                context_window=context_window,
                settings=settings,
                hooks=hooks,
                clock=clock or FakeClock(),
            )
        )
        return built[0]

    async with agent_harness(home, client, compressor=build) as agent:
        yield CompressingAgent(home, agent.state, agent.memory, agent.prompts, built[0], agent.runner)
