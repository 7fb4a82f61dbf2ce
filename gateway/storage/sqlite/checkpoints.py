"""Adapter checkpoints: a forward-only position per (platform, key), as functions of a connection.

Invariant: a stored position never decreases — ``advance_checkpoint`` with a lower or equal position
changes nothing — so hand-offs finishing out of order cannot move a checkpoint backwards.
Run ``load_checkpoints`` through ``StateStore.run_read`` and ``advance_checkpoint`` through ``run_write``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence


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
