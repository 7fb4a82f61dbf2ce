"""The web chat and the OpenAI-compatible API served for real: uvicorn on 127.0.0.1 in front of the real
pipeline, queue, worker pool and delivery loop (what ``mnemogate serve`` runs), with a scripted model
that answers every user message it is asked to answer and can be held mid-turn to force overlaps.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import httpx

from agent_core.llm import LLMRequest
from agent_core.llm.events import LLMEvent
from agent_core.llm.scripted import ScriptedClient
from gateway.access import NewPersonBudget
from gateway.api import ApiChannel
from gateway.config import Home, Settings
from gateway.delivery import DeliveryLoop
from gateway.http import AdminBackend, Readiness, adapters_probe, create_app, serve_http
from gateway.identity import ClientKey, rekey_legacy_web_accounts
from gateway.runtime import Runtime, build_gateway, open_runtime, web_people, worker_pool
from gateway.webchat import BrowserChat, WebChatAdapter
from tests.gateway.queue.harness import echo_step

API_TOKEN = "served-api-token-0123456789"
ADMIN_TOKEN = "served-admin-token-0123456789"


class HeldClient:
    """The echo model, whose turns wait while ``hold`` is on (so a test can overlap requests for real)."""

    name = "held-echo"

    def __init__(self) -> None:
        self._inner = ScriptedClient(default=echo_step)
        self._open = asyncio.Event()
        self._open.set()
        self.calls = 0

    def hold(self) -> None:
        self._open.clear()

    def release(self) -> None:
        self._open.set()

    async def stream(self, request: LLMRequest) -> AsyncIterator[LLMEvent]:
        self.calls += 1
        await self._open.wait()
        async for event in self._inner.stream(request):
            yield event

    async def aclose(self) -> None:
        return None

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()


@dataclass
class Served:
    runtime: Runtime
    web: WebChatAdapter
    api: ApiChannel
    model: HeldClient
    base_url: str

    def browser(self, **kwargs: Any) -> httpx.AsyncClient:
        return httpx.AsyncClient(base_url=self.base_url, timeout=15, **kwargs)

    def admin(self) -> httpx.AsyncClient:
        return self.browser(headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})

    async def arrived(self, platform: str) -> int:
        """How many events of ``platform`` the gateway has accepted (the inbound ledger, via AdminReads)."""
        return await self.runtime.storage.admin.inbound_count(platform=platform)


def served_settings(**sections: Any) -> Settings:
    config: dict[str, Any] = {
        "http": {"admin_token": ADMIN_TOKEN, "api_token": API_TOKEN, "api_reply_timeout_s": 15},
        "rate_limit": {"enabled": False},
    }
    config.update(sections)
    return Settings(**config)


@contextlib.asynccontextmanager
async def served(home: Path, settings: Settings | None = None) -> AsyncIterator[Served]:
    """Everything ``serve`` wires for the embedded channels, on a free loopback port."""
    settings = settings or served_settings()
    model = HeldClient()
    async with open_runtime(Home(home), settings, client=model) as runtime:
        gateway = build_gateway(runtime)
        web, api = BrowserChat(), ApiChannel()
        client_key = await ClientKey.for_deployment(runtime.storage.client_key)
        await rekey_legacy_web_accounts(runtime.storage.identity, client_key)
        adapters = {"web": web, "api": api}
        async with contextlib.AsyncExitStack() as stack:
            for adapter in adapters.values():
                await stack.enter_async_context(adapter)
                await adapter.start(gateway.pipeline.handle)
            await stack.enter_async_context(
                DeliveryLoop(
                    outbox=gateway.outbox.repository,
                    adapters=adapters,
                    signals=runtime.signals,
                    settings=settings.delivery,
                )
            )
            await stack.enter_async_context(worker_pool(runtime))
            app = create_app(
                Readiness({"adapters": adapters_probe([web, api])}),
                http=settings.http,
                webchat=web,
                api_channel=api,
                admin=AdminBackend(
                    runtime.storage.admin,
                    runtime.storage.agent,
                    runtime.memory,
                    runtime.search,
                    pairing=gateway.access.pairing,
                ),
                reads=runtime.storage.admin,
                client_key=client_key,
                new_web_persons=NewPersonBudget(
                    runtime.storage.identity, settings.rate_limit.new_web_persons
                ),
                people=web_people(runtime),
            )
            server = await stack.enter_async_context(serve_http(app, "127.0.0.1", 0))
            port = server.servers[0].sockets[0].getsockname()[1]
            yield Served(runtime, web, api, model, f"http://127.0.0.1:{port}")


async def eventually(condition: Callable[[], Awaitable[bool]], what: str, within_s: float = 10.0) -> None:
    """Poll ``condition`` until it holds (bounded in time), or fail naming ``what``."""
    deadline = time.monotonic() + within_s
    while not await condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.01)


async def idle(served: Served) -> None:
    """Wait until no turn is queued or running and every outbox row left the queue."""

    async def settled() -> bool:
        counters = await served.runtime.storage.admin.gateway_counters()
        jobs, outbox = dict(counters.jobs_by_state), dict(counters.outbox_by_state)
        busy = jobs.get("queued", 0) + jobs.get("running", 0)
        unsent = outbox.get("pending", 0) + outbox.get("sending", 0)
        return busy == 0 and unsent == 0

    await eventually(settled, "the gateway to settle")
