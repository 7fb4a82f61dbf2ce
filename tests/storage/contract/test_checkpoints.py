"""The adapter-checkpoint port on every backend: positions only move forward (also when advances race),
each platform has its own keys, forgetting drops only the keys named, and positions survive a reopen."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from gateway.storage.checkpoints import CheckpointRepository

from .backends import BackendUnderTest

if TYPE_CHECKING:
    from gateway.storage import Storage


def repo(storage: Storage) -> CheckpointRepository:
    return storage.checkpoints


async def test_a_position_only_moves_forward(storage: Storage) -> None:
    checkpoints = repo(storage)
    moved = [await checkpoints.advance("discord", "channel:7", p) for p in (5, 9, 3, 9, 8)]
    assert moved == [True, True, False, False, False]
    assert await checkpoints.load("discord") == {"channel:7": 9}


async def test_racing_advances_keep_the_highest(storage: Storage) -> None:
    checkpoints = repo(storage)
    positions = [17, 3, 99, 42, 98, 1, 64]
    await asyncio.gather(*(checkpoints.advance("slack", "thread:1", p) for p in positions))
    assert await checkpoints.load("slack") == {"thread:1": 99}


async def test_each_platform_has_its_own_keys_and_forgetting_drops_only_those_named(
    storage: Storage,
) -> None:
    checkpoints = repo(storage)
    await checkpoints.advance("discord", "channel:7", 9)
    await checkpoints.advance("discord", "channel:8", 1)
    await checkpoints.advance("slack", "channel:7", 100)
    assert await checkpoints.load("telegram") == {}
    assert await checkpoints.forget("discord", ["channel:7", "channel:unknown"]) == 1
    assert await checkpoints.forget("discord", []) == 0
    assert await checkpoints.load("discord") == {"channel:8": 1}
    assert await checkpoints.load("slack") == {"channel:7": 100}
    # A forgotten key starts again from any position.
    assert await checkpoints.advance("discord", "channel:7", 2)


async def test_positions_survive_a_reopen(backend: BackendUnderTest) -> None:
    async with backend.open() as storage:
        await repo(storage).advance("discord", "channel:7", 2**40)
    async with backend.open() as storage:
        assert await repo(storage).load("discord") == {"channel:7": 2**40}
