"""The composition root: builds every component from settings and enters them on one AsyncExitStack.

Shutdown is the reverse of start-up by construction. ``serve`` runs until SIGTERM/SIGINT.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import AsyncIterator
from dataclasses import dataclass

from agent_core.agent import SegmentPrompts, Toolbox, TurnRunner
from agent_core.llm import ClosableLLMClient, build_client
from agent_core.memory import MemoryStores
from agent_core.prompt import ensure_soul
from agent_core.skills import SkillStore
from agent_core.state import StateError, StateStore
from agent_core.tools import builtin_registry
from gateway.config import Home, Settings
from gateway.http import create_app, serve_http

_LOG = logging.getLogger("mnemogate.runtime")


@dataclass(frozen=True)
class Runtime:
    """The running components of one process."""

    home: Home
    settings: Settings
    state: StateStore
    memory: MemoryStores
    skills: SkillStore
    client: ClosableLLMClient
    agent: TurnRunner

    async def readiness(self) -> dict[str, str]:
        """Component name -> "ok" or a short reason; ``/readyz`` is 200 only when all are ok."""
        try:
            await self.state.check_writable()
        except StateError as exc:
            return {"state_db": f"unavailable: {exc}"}
        return {"state_db": "ok"}


@contextlib.asynccontextmanager
async def open_runtime(home: Home, settings: Settings) -> AsyncIterator[Runtime]:
    """Open state.db, memory, skills, the model client and the turn loop for ``home``."""
    home.ensure()
    await asyncio.to_thread(ensure_soul, home.root, settings.prompt.soul_file)
    async with contextlib.AsyncExitStack() as stack:
        state = await stack.enter_async_context(StateStore(home.root, settings.state))
        memory = MemoryStores(home.root, settings.memory, audit=state)
        skills = SkillStore(home.root)
        client = await stack.enter_async_context(build_client(settings.model))
        toolbox = Toolbox(
            builtin_registry(memory=memory, skills=skills, output_budget=settings.agent.tool_output_chars)
        )
        prompts = SegmentPrompts(
            home=home.root,
            settings=settings.prompt,
            state=state,
            memory=memory,
            skills=skills,
            model=settings.model.model,
            tool_names=toolbox.names(),
        )
        agent = TurnRunner(
            state=state, client=client, prompts=prompts, toolbox=toolbox, settings=settings.agent
        )
        yield Runtime(home, settings, state, memory, skills, client, agent)


async def serve(home: Home, settings: Settings, host: str, port: int) -> None:
    """Run the HTTP server (and, as they land, adapters, delivery and workers) until a stop signal."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    async with open_runtime(home, settings) as runtime:
        app = create_app(readiness=runtime.readiness)
        async with serve_http(app, host, port):
            _LOG.info("mnemogate listening on http://%s:%d (home %s)", host, port, home.root)
            print(f"mnemogate listening on http://{host}:{port} (home {home.root})", flush=True)
            await stop.wait()
            _LOG.info("stopping")
