"""The agent harness with a ``MemoryManager`` as its recall source and memory mirror."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

from agent_core.llm import LLMClient
from agent_core.providers import MemoryManager, MirroringAuditSink
from tests.agent_core.agent.harness import Harness, agent_harness


@contextlib.asynccontextmanager
async def provider_harness(home: Path, client: LLMClient, manager: MemoryManager) -> AsyncIterator[Harness]:
    async with (
        manager,
        agent_harness(
            home, client, recall=manager, audit=lambda state: MirroringAuditSink(state, manager)
        ) as agent,
    ):
        yield agent
