"""A real discord.py adapter wired to the loopback fake Discord, and a recording sink."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import discord.gateway
import discord.http
import pytest
import yarl

from adapters.discord import DiscordAdapter, create_adapter
from tests.adapters.fakes.discord_server import FakeDiscordServer
from tests.adapters.fakes.recording_sink import RecordingSink


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
