"""``/v1`` served for real in this process: uvicorn on 127.0.0.1 in front of the real inbound pipeline,
queue, worker pool (its turns followed live by the API channel, as ``serve`` wires it) and delivery loop,
with a model that echoes what it was sent and can be held, so tests can overlap and watch a stream grow.
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

import openai

from agent_core.llm import LLMRequest, StopEvent, TextDelta, UsageEvent
from agent_core.llm.events import LLMEvent
from gateway.api import ApiChannel, ServedModel
from gateway.config import Home, Settings
from gateway.delivery import DeliveryLoop, StreamRegistry
from gateway.http import Readiness, adapters_probe, create_app, serve_http
from gateway.identity import ClientKey
from gateway.runtime import Runtime, build_gateway, open_runtime, streaming_agent, worker_pool

API_TOKEN = "v1-api-token-0123456789"
ADMIN_TOKEN = "v1-admin-token-0123456789"
MODEL = ServedModel("echo-1", "tests", context_window=8_000)


class EchoModel:
    """Replies "echo: " + the request bytes of the newest user message, in ``parts`` deltas.

    ``hold``: calls wait before answering until ``release``; ``pause_after_first``: each call waits after
    its first delta until ``resume`` (so a test sees a reply begin before the model has finished it).
    """

    name = "echo"

    def __init__(self, parts: int = 3) -> None:
        self.parts = parts
        self.requests: list[LLMRequest] = []
        self._open = asyncio.Event()
        self._open.set()
        self._rest = asyncio.Event()
        self._rest.set()

    def hold(self) -> None:
        self._open.clear()

    def release(self) -> None:
        self._open.set()

    def pause_after_first(self) -> None:
        self._rest.clear()

    def resume(self) -> None:
        self._rest.set()

    async def stream(self, request: LLMRequest) -> AsyncIterator[LLMEvent]:
        self.requests.append(request)
        await self._open.wait()
        said = next((m.content for m in reversed(request.messages) if m.role == "user"), "")
        text = "echo: " + said
        size = -(-len(text) // self.parts)
        for index, start in enumerate(range(0, len(text), size)):
            if index == 1:
                await self._rest.wait()
            yield TextDelta(text[start : start + size])
        sent = len(request.system) + sum(len(m.content) for m in request.messages)
        yield UsageEvent(input_tokens=sent // 4, output_tokens=len(text) // 4 + 1)
        yield StopEvent("end_turn")

    async def aclose(self) -> None:
        return None

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()


@dataclass
class ServedApi:
    runtime: Runtime
    api: ApiChannel
    model: EchoModel
    base_url: str

    def client(self, key: str = API_TOKEN, **options: Any) -> openai.AsyncOpenAI:
        return openai.AsyncOpenAI(
            base_url=f"{self.base_url}/v1", api_key=key, max_retries=0, timeout=20, **options
        )

    async def arrived(self) -> int:
        """How many API messages the gateway accepted (the inbound ledger)."""
        return await self.runtime.storage.admin.inbound_count(platform="api")


def api_settings(**sections: Any) -> Settings:
    config: dict[str, Any] = {
        "http": {"admin_token": ADMIN_TOKEN, "api_token": API_TOKEN, "api_reply_timeout_s": 15},
        "rate_limit": {"enabled": False},
    }
    config.update(sections)
    return Settings(**config)


@contextlib.asynccontextmanager
async def served_api(
    home: Path, settings: Settings | None = None, model: EchoModel | None = None
) -> AsyncIterator[ServedApi]:
    """What ``serve`` wires for ``/v1``, on a free loopback port."""
    settings = settings or api_settings()
    model = model or EchoModel()
    async with open_runtime(Home(home), settings, client=model) as runtime:
        gateway = build_gateway(runtime)
        api = ApiChannel()
        async with contextlib.AsyncExitStack() as stack:
            await stack.enter_async_context(api)
            await api.start(gateway.pipeline.handle)
            delivery = await stack.enter_async_context(
                DeliveryLoop(
                    outbox=gateway.outbox.repository,
                    adapters={api.name: api},
                    signals=runtime.signals,
                    settings=settings.delivery,
                )
            )
            agent = streaming_agent(runtime, {}, delivery, StreamRegistry(), live={api.name: api})
            await stack.enter_async_context(worker_pool(runtime, agent))
            app = create_app(
                Readiness({"adapters": adapters_probe([api])}),
                http=settings.http,
                api_channel=api,
                api_model=MODEL,
                reads=runtime.storage.admin,
                transcripts=runtime.storage.agent,
                client_key=await ClientKey.for_deployment(runtime.storage.client_key),
            )
            server = await stack.enter_async_context(serve_http(app, "127.0.0.1", 0))
            port = server.servers[0].sockets[0].getsockname()[1]
            yield ServedApi(runtime, api, model, f"http://127.0.0.1:{port}")


async def eventually(condition: Callable[[], Awaitable[bool]], what: str, within_s: float = 10.0) -> None:
    """Poll ``condition`` until it holds (bounded in time), or fail naming ``what``."""
    deadline = time.monotonic() + within_s
    while not await condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.01)
