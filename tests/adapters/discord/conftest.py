"""A real discord.py adapter wired to the loopback fake Discord, and a recording sink."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Sequence
from typing import Any

import discord.gateway
import discord.http
import pytest
import yarl

from adapters.discord import DiscordAdapter, DiscordSettings, create_adapter
from gateway.adapter_checkpoints import StateCheckpoints
from gateway.storage.sqlite import SqliteStorage, open_state_store
from tests.adapters.fakes.discord_server import FakeDiscordServer
from tests.adapters.fakes.recording_sink import RecordingSink

DM_CHANNEL = 600000000000000001
NO_RETRIES: Sequence[float] = ()


def adapter_settings(fake: FakeDiscordServer, **overrides: Any) -> dict[str, Any]:
    return {"token": fake.token, "guild_ready_timeout_s": 0.05, "connect_timeout_s": 10.0, **overrides}


def checkpointed_adapter(
    fake: FakeDiscordServer,
    checkpoints: StateCheckpoints,
    *,
    retry_delays_s: Sequence[float] = (0.01, 0.02),
    stop_grace_s: float = 5.0,
    **options: Any,
) -> DiscordAdapter:
    settings = DiscordSettings.model_validate(adapter_settings(fake, **options))
    adapter = DiscordAdapter(settings, retry_delays_s=retry_delays_s, stop_grace_s=stop_grace_s)
    adapter.use_checkpoints(checkpoints)
    return adapter


async def checkpoint_reaches(checkpoints: StateCheckpoints, channel_id: int, position: int) -> None:
    deadline = time.monotonic() + 10.0
    while (await checkpoints.load()).get(f"channel:{channel_id}", 0) < position:
        assert time.monotonic() < deadline, f"checkpoint of {channel_id} never reached {position}"
        await asyncio.sleep(0.01)


@pytest.fixture
async def checkpoints(tmp_path: Any) -> AsyncIterator[StateCheckpoints]:
    async with open_state_store(tmp_path) as state:
        yield StateCheckpoints(SqliteStorage(state).checkpoints, "discord")


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
