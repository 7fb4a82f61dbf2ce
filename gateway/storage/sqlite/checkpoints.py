"""Adapter checkpoints in state.db, a forward-only position per (platform, key): SQL, ``SqliteCheckpoints``.

Invariant: a stored position never decreases — ``advance_checkpoint`` with a lower or equal position
changes nothing — so hand-offs finishing out of order cannot move a checkpoint backwards.
The functions take a sqlite3 connection; ``SqliteCheckpoints`` runs ``load_checkpoints`` on a reader and
each write as one ``run_write`` transaction.
"""

from __future__ import annotations

import functools
import sqlite3
import time
from collections.abc import Callable, Collection, Sequence

from agent_core.storage.sqlite import StateStore


def load_checkpoints(conn: sqlite3.Connection, platform: str) -> dict[str, int]:
    rows = conn.execute("SELECT key, position FROM adapter_checkpoints WHERE platform = ?", (platform,))
    return {str(key): int(position) for key, position in rows}


def advance_checkpoint(conn: sqlite3.Connection, platform: str, key: str, position: int, now: float) -> bool:
    """Record ``position`` unless a higher or equal one is stored; True when it moved forward."""
    cursor = conn.execute(
        "INSERT INTO adapter_checkpoints(platform, key, position, updated_at) VALUES (?, ?, ?, ?) "
        "ON CONFLICT(platform, key) DO UPDATE "
        "SET position = excluded.position, updated_at = excluded.updated_at "
        "WHERE excluded.position > adapter_checkpoints.position",
        (platform, key, position, now),
    )
    return cursor.rowcount > 0


def forget_checkpoints(conn: sqlite3.Connection, platform: str, keys: Sequence[str]) -> int:
    """Delete these keys of ``platform``; how many rows went."""
    return sum(
        conn.execute(
            "DELETE FROM adapter_checkpoints WHERE platform = ? AND key = ?", (platform, key)
        ).rowcount
        for key in keys
    )


class SqliteCheckpoints:
    """The ``CheckpointRepository`` on state.db; ``clock`` (backend configuration) stamps ``updated_at``."""

    def __init__(self, state: StateStore, *, clock: Callable[[], float] = time.time) -> None:
        self._state = state
        self._clock = clock

    async def load(self, platform: str) -> dict[str, int]:
        return await self._state.run_read(functools.partial(load_checkpoints, platform=platform))

    async def advance(self, platform: str, key: str, position: int) -> bool:
        def advance(conn: sqlite3.Connection) -> bool:
            return advance_checkpoint(conn, platform, key, position, self._clock())

        return await self._state.run_write(advance)

    async def forget(self, platform: str, keys: Collection[str]) -> int:
        if not keys:
            return 0
        doomed = list(keys)
        return await self._state.run_write(
            functools.partial(forget_checkpoints, platform=platform, keys=doomed)
        )
