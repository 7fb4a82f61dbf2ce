"""Adapter leases in state.db (table ``adapter_leases``, gateway migration 9): SQL, ``SqliteAdapterLeases``.

Invariants: one row per adapter, written only inside a ``BEGIN IMMEDIATE`` transaction, so a claim reads and
writes the row with no other writer in between; a claim by the row's holder renews it, by anyone else it
takes the row only when ``expires_at <= now``; a release keeps the row (expired at once) so ``generation``,
which grows with every change of holder, never starts over. ``now`` is the class's ``clock`` (backend
configuration: one host shares one clock), never a caller's.
"""

from __future__ import annotations

import functools
import sqlite3
import time
from collections.abc import Callable

from agent_core.storage.sqlite import StateStore
from gateway.storage.adapter_leases import AdapterOwner, LeaseState


def claim_lease(
    conn: sqlite3.Connection, adapter: str, holder: str, host: str, lease_s: float, now: float
) -> LeaseState:
    """Acquire or renew ``adapter``'s lease for ``holder`` unless another live holder has it."""
    conn.execute(
        "INSERT INTO adapter_leases(adapter, holder, host, acquired_at, expires_at, generation) "
        "VALUES (?, ?, ?, ?, ?, 1) "
        "ON CONFLICT(adapter) DO UPDATE SET "
        "acquired_at = CASE WHEN adapter_leases.holder = excluded.holder "
        "  THEN adapter_leases.acquired_at ELSE excluded.acquired_at END, "
        "generation = adapter_leases.generation "
        "  + CASE WHEN adapter_leases.holder = excluded.holder THEN 0 ELSE 1 END, "
        "holder = excluded.holder, host = excluded.host, expires_at = excluded.expires_at "
        "WHERE adapter_leases.holder = excluded.holder OR adapter_leases.expires_at <= ?",
        (adapter, holder, host, now, now + lease_s, now),
    )
    row = conn.execute(
        "SELECT holder, host, expires_at, generation FROM adapter_leases WHERE adapter = ?", (adapter,)
    ).fetchone()
    current, current_host, expires_at, generation = row
    return LeaseState(
        adapter=adapter,
        held=current == holder,
        holder=str(current),
        host=str(current_host),
        expires_in_s=float(expires_at) - now,
        generation=int(generation),
    )


def release_lease(conn: sqlite3.Connection, adapter: str, holder: str, now: float) -> bool:
    """Expire ``holder``'s lease of ``adapter`` now; False when it held none (or it had expired)."""
    cursor = conn.execute(
        "UPDATE adapter_leases SET expires_at = ? WHERE adapter = ? AND holder = ? AND expires_at > ?",
        (now, adapter, holder, now),
    )
    return cursor.rowcount > 0


def lease_owners(conn: sqlite3.Connection, now: float) -> list[AdapterOwner]:
    rows = conn.execute(
        "SELECT adapter, holder, host, acquired_at, expires_at, generation FROM adapter_leases "
        "ORDER BY adapter"
    )
    return [
        AdapterOwner(
            adapter=str(adapter),
            holder=str(holder),
            host=str(host),
            acquired_at=float(acquired_at),
            expires_at=float(expires_at),
            expires_in_s=float(expires_at) - now,
            generation=int(generation),
        )
        for adapter, holder, host, acquired_at, expires_at, generation in rows
    ]


class SqliteAdapterLeases:
    """The ``AdapterLeaseRepository`` on state.db; ``clock`` (backend configuration) times every lease."""

    def __init__(self, state: StateStore, *, clock: Callable[[], float] = time.time) -> None:
        self._state = state
        self._clock = clock

    async def claim(self, adapter: str, holder: str, host: str, lease_s: float) -> LeaseState:
        def claim(conn: sqlite3.Connection) -> LeaseState:
            return claim_lease(conn, adapter, holder, host, lease_s, self._clock())

        return await self._state.run_write(claim)

    async def release(self, adapter: str, holder: str) -> bool:
        def release(conn: sqlite3.Connection) -> bool:
            return release_lease(conn, adapter, holder, self._clock())

        return await self._state.run_write(release)

    async def owners(self) -> list[AdapterOwner]:
        return await self._state.run_read(functools.partial(self._owners))

    def _owners(self, conn: sqlite3.Connection) -> list[AdapterOwner]:
        return lease_owners(conn, self._clock())
