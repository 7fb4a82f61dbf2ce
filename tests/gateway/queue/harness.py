"""The real gateway backbone on a temporary home: pipeline, queue, workers and delivery in one process.

Only the model is scripted (``echo_step`` answers with every user message it was asked to answer) and the
platform is a RecordingAdapter; state.db, access control, commands and the outbox are the real ones.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_core.llm import ClosableLLMClient, LLMRequest
from agent_core.llm.scripted import ScriptedClient, ScriptStep
from gateway.config import Home, Settings
from gateway.delivery import DeliveryLoop, FailureHook
from gateway.queue import WorkerPool
from gateway.runtime import Gateway, Runtime, build_gateway, open_runtime, worker_pool
from gateway.storage.queue import JobRecord, TurnQueueRepository

from ..delivery.recording_adapter import RecordingAdapter


def pending_user_texts(request: LLMRequest) -> list[str]:
    texts: list[str] = []
    for message in reversed(request.messages):
        if message.role != "user":
            break
        texts.append(message.content)
    return list(reversed(texts))


def echo_step(request: LLMRequest) -> ScriptStep:
    return ScriptStep.reply("echo: " + " | ".join(pending_user_texts(request)))


def open_config(**extra: Any) -> dict[str, Any]:
    """Settings with the ``test`` platform open to everyone and no rate limit, plus ``extra`` sections."""
    config: dict[str, Any] = {"access": {"test": {"mode": "open"}}, "rate_limit": {"enabled": False}}
    config.update(extra)
    return config


@dataclass
class Backbone:
    runtime: Runtime
    gateway: Gateway
    adapter: RecordingAdapter
    pool: WorkerPool | None
    delivery: DeliveryLoop

    async def wait_for(self, predicate: Callable[[], bool], timeout: float = 10.0) -> None:  # noqa: ASYNC109
        deadline = time.monotonic() + timeout
        while not predicate():
            if time.monotonic() > deadline:
                raise AssertionError(f"condition not met within {timeout} s; sent={self.adapter.texts()}")
            await asyncio.sleep(0.005)

    async def wait_sent(self, count: int, timeout: float = 10.0) -> list[str]:  # noqa: ASYNC109
        await self.wait_for(lambda: len(self.adapter.sent) >= count, timeout)
        return self.adapter.texts()

    @property
    def queue(self) -> TurnQueueRepository:
        return self.runtime.storage.queue

    async def jobs(self) -> list[JobRecord]:
        return await self.queue.jobs()


@contextlib.asynccontextmanager
async def backbone(
    home: Path,
    *,
    client: ClosableLLMClient | None = None,
    config: dict[str, Any] | None = None,
    workers: bool = True,
    adapter: RecordingAdapter | None = None,
    on_delivery_failure: FailureHook | None = None,
) -> AsyncIterator[Backbone]:
    settings = Settings(**(config if config is not None else open_config()))
    model = client or ScriptedClient(default=echo_step)
    async with open_runtime(Home(home), settings, client=model) as runtime:
        gateway = build_gateway(runtime)
        recording = adapter or RecordingAdapter()
        await recording.start(gateway.pipeline.handle)
        delivery = DeliveryLoop(
            outbox=gateway.outbox.repository,
            adapters={recording.name: recording},
            signals=runtime.signals,
            settings=settings.delivery,
            on_failure=on_delivery_failure,
        )
        async with delivery, contextlib.AsyncExitStack() as stack:
            pool = await stack.enter_async_context(worker_pool(runtime)) if workers else None
            yield Backbone(runtime, gateway, recording, pool, delivery)
