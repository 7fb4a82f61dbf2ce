"""Adapter checkpoints in PostgreSQL, a forward-only position per (platform, key): SQL and ``PgCheckpoints``.

Invariant (the port's, ``gateway.storage.checkpoints``): a stored position never decreases — an advance is
one upsert whose update only happens for a higher position, and the conflicting row is locked and re-checked
by the server — so hand-offs finishing out of order, on any host (an old adapter owner still draining while
the new one runs), cannot move a checkpoint backwards. ``updated_at`` is ``mg_now()``.
"""

from __future__ import annotations

from collections.abc import Collection

from agent_core.storage.postgres.engine import Conn, PgDatabase

__all__ = ["PgCheckpoints", "advance_checkpoint", "load_checkpoints"]


async def load_checkpoints(conn: Conn, platform: str) -> dict[str, int]:
    cursor = await conn.execute(
        "SELECT key, position FROM adapter_checkpoints WHERE platform = %s", (platform,)
    )
    return {str(key): int(position) for key, position in await cursor.fetchall()}


async def advance_checkpoint(conn: Conn, platform: str, key: str, position: int) -> bool:
    """Record ``position`` unless a higher or equal one is stored; True when it moved forward."""
    cursor = await conn.execute(
        "INSERT INTO adapter_checkpoints(platform, key, position, updated_at) VALUES (%s, %s, %s, mg_now()) "
        "ON CONFLICT (platform, key) DO UPDATE "
        "SET position = excluded.position, updated_at = excluded.updated_at "
        "WHERE excluded.position > adapter_checkpoints.position",
        (platform, key, position),
    )
    return cursor.rowcount > 0


async def forget_checkpoints(conn: Conn, platform: str, keys: list[str]) -> int:
    """Delete these keys of ``platform``; how many rows went."""
    cursor = await conn.execute(
        "DELETE FROM adapter_checkpoints WHERE platform = %s AND key = ANY(%s)", (platform, keys)
    )
    return cursor.rowcount


class PgCheckpoints:
    """The ``CheckpointRepository`` on PostgreSQL; each call is one statement in its own transaction."""

    def __init__(self, db: PgDatabase) -> None:
        self._db = db

    async def load(self, platform: str) -> dict[str, int]:
        return await self._db.run_read(lambda c: load_checkpoints(c, platform))

    async def advance(self, platform: str, key: str, position: int) -> bool:
        return await self._db.run_write(lambda c: advance_checkpoint(c, platform, key, position))

    async def forget(self, platform: str, keys: Collection[str]) -> int:
        if not keys:
            return 0
        doomed = list(keys)
        return await self._db.run_write(lambda c: forget_checkpoints(c, platform, doomed))
