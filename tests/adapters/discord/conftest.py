"""A real discord.py adapter wired to the loopback fake Discord, and a recording sink."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import discord.gateway
import discord.http
import pytest
import yarl

from adapters.discord import DiscordAdapter, create_adapter
from gateway.contracts import InboundMessage
from tests.adapters.fakes.discord_server import FakeDiscordServer


@dataclass
class RecordingSink:
    """The gateway's side of the contract: stores what it is handed."""

    received: list[InboundMessage] = field(default_factory=list)

    async def __call__(self, message: InboundMessage) -> None:
        self.received.append(message)

    async def wait_for(self, count: int, within_s: float = 10.0) -> list[InboundMessage]:
        await wait_until(lambda: len(self.received) >= count, within_s, f"{count} inbound messages")
        return self.received


async def wait_until(condition: Callable[[], bool], within_s: float = 10.0, what: str = "condition") -> None:
    deadline = time.monotonic() + within_s
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out waiting for {what}")
        await asyncio.sleep(0.01)


def adapter_settings(fake: FakeDiscordServer, **overrides: Any) -> dict[str, Any]:
    return {"token": fake.token, "guild_ready_timeout_s": 0.05, "connect_timeout_s": 10.0, **overrides}


@pytest.fixture
async def fake(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[FakeDiscordServer]:
    async with FakeDiscordServer() as server:
        # discord.py has no public base-URL option; these two class attributes are its only endpoints.
        monkeypatch.setattr(discord.http.Route, "BASE", server.api_base)
        monkeypatch.setattr(discord.gateway.DiscordWebSocket, "DEFAULT_GATEWAY", yarl.URL(server.gateway_url))
        yield server


@pytest.fixture
def sink() -> RecordingSink:
    return RecordingSink()


@pytest.fixture
async def adapter(fake: FakeDiscordServer, sink: RecordingSink) -> AsyncIterator[DiscordAdapter]:
    discord_adapter = create_adapter(adapter_settings(fake, free_response_channels=["700"]))
    async with discord_adapter:
        await discord_adapter.start(sink)
        yield discord_adapter
