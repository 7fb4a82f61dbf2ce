"""``StateCheckpoints``: the ``Checkpoints`` contract for one adapter, over a ``CheckpointRepository``."""

from __future__ import annotations

from collections.abc import Collection, Mapping

from gateway.storage.checkpoints import CheckpointRepository


class StateCheckpoints:
    """One platform's checkpoints; each ``advance`` is its own durable write."""

    def __init__(self, checkpoints: CheckpointRepository, platform: str) -> None:
        self._checkpoints, self._platform = checkpoints, platform

    async def load(self) -> Mapping[str, int]:
        return await self._checkpoints.load(self._platform)

    async def advance(self, key: str, position: int) -> None:
        await self._checkpoints.advance(self._platform, key, position)

    async def forget(self, keys: Collection[str]) -> None:
        if keys:
            await self._checkpoints.forget(self._platform, keys)
