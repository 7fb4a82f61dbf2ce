"""``StateCheckpoints``: the ``Checkpoints`` contract for one adapter, kept in state.db."""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Mapping

from agent_core.storage.sqlite import StateStore
from gateway.storage.sqlite.checkpoints import advance_checkpoint, forget_checkpoints, load_checkpoints


class StateCheckpoints:
    """One platform's checkpoints; each ``advance`` is its own durable write."""

    def __init__(self, state: StateStore, platform: str, *, clock: Callable[[], float] = time.time) -> None:
        self._state, self._platform, self._clock = state, platform, clock

    async def load(self) -> Mapping[str, int]:
        return await self._state.run_read(lambda conn: load_checkpoints(conn, self._platform))

    async def advance(self, key: str, position: int) -> None:
        now = self._clock()
        await self._state.run_write(lambda conn: advance_checkpoint(conn, self._platform, key, position, now))

    async def forget(self, keys: Collection[str]) -> None:
        if keys:
            doomed = list(keys)
            await self._state.run_write(lambda conn: forget_checkpoints(conn, self._platform, doomed))
