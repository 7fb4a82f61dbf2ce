"""Adapter checkpoints survive a reopen of state.db and never move backwards."""

from __future__ import annotations

import asyncio
from pathlib import Path

from gateway.adapter_checkpoints import StateCheckpoints
from gateway.storage.sqlite import open_state_store


async def test_checkpoints_only_move_forward_and_survive_a_reopen(tmp_path: Path) -> None:
    async with open_state_store(tmp_path) as state:
        discord = StateCheckpoints(state, "discord")
        await asyncio.gather(*(discord.advance("channel:7", position) for position in (5, 9, 3, 8)))
        await discord.advance("channel:8", 1)
        await StateCheckpoints(state, "slack").advance("channel:7", 100)
    async with open_state_store(tmp_path) as state:
        assert await StateCheckpoints(state, "discord").load() == {"channel:7": 9, "channel:8": 1}
        assert await StateCheckpoints(state, "slack").load() == {"channel:7": 100}
        assert await StateCheckpoints(state, "telegram").load() == {}
        await StateCheckpoints(state, "discord").forget(["channel:7", "channel:unknown"])
        assert await StateCheckpoints(state, "discord").load() == {"channel:8": 1}
        assert await StateCheckpoints(state, "slack").load() == {"channel:7": 100}
