"""One adapter's checkpoints survive a reopen, never move backwards, and belong to its platform alone.

The repository's own guarantees run on every backend in tests/storage/contract/test_checkpoints.py.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from agent_core.storage.sqlite import StateStore
from gateway.adapter_checkpoints import StateCheckpoints
from gateway.storage.sqlite import SqliteStorage, open_state_store


def of(state: StateStore, platform: str) -> StateCheckpoints:
    return StateCheckpoints(SqliteStorage(state).checkpoints, platform)


async def test_checkpoints_only_move_forward_and_survive_a_reopen(tmp_path: Path) -> None:
    async with open_state_store(tmp_path) as state:
        discord = of(state, "discord")
        await asyncio.gather(*(discord.advance("channel:7", position) for position in (5, 9, 3, 8)))
        await discord.advance("channel:8", 1)
        await of(state, "slack").advance("channel:7", 100)
    async with open_state_store(tmp_path) as state:
        assert await of(state, "discord").load() == {"channel:7": 9, "channel:8": 1}
        assert await of(state, "slack").load() == {"channel:7": 100}
        assert await of(state, "telegram").load() == {}
        await of(state, "discord").forget(["channel:7", "channel:unknown"])
        await of(state, "discord").forget([])
        assert await of(state, "discord").load() == {"channel:8": 1}
        assert await of(state, "slack").load() == {"channel:7": 100}
