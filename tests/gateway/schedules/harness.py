"""The real gateway backbone with a scheduler on a ManualClock: pipeline, queue, workers, delivery, schedules.

Only time and the platform are the test's: the scheduler and the schedule book read a ``ManualClock`` the
test moves and ``tick()``s (no loop, no sleeps), and the platform is a RecordingAdapter or a real adapter
against a loopback fake. The model is the offline one unless a test gives another.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_core.llm import ClosableLLMClient, OfflineClient
from gateway.config import Home, Settings
from gateway.contracts import Adapter
from gateway.delivery import DeliveryLoop
from gateway.queue import WorkerPool
from gateway.runtime import Gateway, Runtime, build_gateway, open_runtime, worker_pool
from gateway.schedules import ManualClock, Scheduler, ScheduleRules
from gateway.schedules.deployment import deliverable_platforms
from gateway.storage.schedules import FiredRun

from ..delivery.recording_adapter import RecordingAdapter, dm

START = 1_900_000_000.0  # 2030-03-17 17:46:40 UTC: the manual clock's first instant


def world_config(platform: str = "test", **extra: Any) -> dict[str, Any]:
    """``platform`` open to everyone and deliverable, no rate limit, quick delivery retries."""
    config: dict[str, Any] = {
        "access": {platform: {"mode": "open"}},
        "rate_limit": {"enabled": False},
        "adapters": {platform: {"enabled": True}},
        "delivery": {"backoff_initial_s": 0.02, "backoff_max_s": 0.05},
    }
    config.update(extra)
    return config


@dataclass
class World:
    """One gateway process whose clock the test holds."""

    runtime: Runtime
    gateway: Gateway
    adapter: Adapter
    pool: WorkerPool
    scheduler: Scheduler
    clock: ManualClock

    async def say(self, text: str, *, event: str, user: str = "ada") -> None:
        await self.gateway.pipeline.handle(dm(text, user=user, event=event, platform=self.adapter.name))

    async def command(self, text: str, *, event: str) -> str:
        """Send a command and return its answer (commands answer at once, outside the turn queue)."""
        before = len(self.texts())
        await self.say(text, event=event)
        await self.wait_for(lambda: len(self.texts()) > before, f"the answer to {text!r}")
        return self.texts()[-1]

    async def tick(self, *, advance_s: float = 0.0) -> list[FiredRun]:
        self.clock.advance(advance_s)
        return await self.scheduler.tick()

    async def wait_for(self, predicate: Callable[[], bool], what: str, timeout: float = 15.0) -> None:  # noqa: ASYNC109
        deadline = time.monotonic() + timeout
        while not predicate():
            if time.monotonic() > deadline:
                raise AssertionError(f"{what}: not within {timeout} s")
            await asyncio.sleep(0.005)

    async def idle(self) -> None:
        """Every queued job done and every outbox row delivered (or given up)."""

        async def settled() -> bool:
            jobs = await self.runtime.storage.queue.jobs()
            if any(job.state in ("queued", "running") for job in jobs):
                return False
            rows = [row for job in {j.conversation_id for j in jobs} for row in await self._outbox(job)]
            return all(row.state in ("sent", "failed") for row in rows)

        deadline = time.monotonic() + 15.0
        while not await settled():
            if time.monotonic() > deadline:
                raise AssertionError("the gateway did not settle within 15 s")
            await asyncio.sleep(0.005)

    async def _outbox(self, conversation_id: str) -> list[Any]:
        return list(await self.runtime.storage.outbox.for_conversation(conversation_id))

    def texts(self) -> list[str]:
        assert isinstance(self.adapter, RecordingAdapter)
        return self.adapter.texts()


@contextlib.asynccontextmanager
async def world(
    home: Path,
    *,
    client: ClosableLLMClient | None = None,
    config: dict[str, Any] | None = None,
    adapter: Adapter | None = None,
    clock: ManualClock | None = None,
) -> AsyncIterator[World]:
    platform = adapter.name if adapter is not None else "test"
    settings = Settings(**(config if config is not None else world_config(platform)))
    manual = clock or ManualClock(START)
    async with open_runtime(Home(home), settings, client=client or OfflineClient(), clock=manual) as runtime:
        assert runtime.schedules is not None
        gateway = build_gateway(runtime)
        chat = adapter or RecordingAdapter()
        rules = ScheduleRules(settings.schedules, platforms=deliverable_platforms(settings))
        scheduler = Scheduler(runtime.storage.schedules, rules, clock=manual, signals=runtime.signals)
        async with contextlib.AsyncExitStack() as stack:
            await stack.enter_async_context(chat)
            await chat.start(gateway.pipeline.handle)
            await stack.enter_async_context(
                DeliveryLoop(
                    outbox=gateway.outbox.repository,
                    adapters={chat.name: chat},
                    signals=runtime.signals,
                    settings=settings.delivery,
                )
            )
            pool = await stack.enter_async_context(worker_pool(runtime))
            yield World(runtime, gateway, chat, pool, scheduler, manual)
