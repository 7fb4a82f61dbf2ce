"""Adapter leases on PostgreSQL (table ``adapter_leases`` of the gateway's v1 DDL): SQL, ``PgAdapterLeases``.

Invariants: a claim is ONE statement, ``INSERT … ON CONFLICT (adapter) DO UPDATE … WHERE`` the row's holder
is the claimant or its lease has expired, so two hosts claiming at once serialise on the row (the conflict
locks it) and exactly one of them holds it; every time is the server's (``mg_now()``), so hosts whose
clocks disagree still agree on expiry; a release keeps the row (expired at once) so ``generation``, which
grows with every change of holder, never starts over. Functions take the connection first so another
repository's transaction can call them.
"""

from __future__ import annotations

from agent_core.storage.postgres.engine import Conn, PgDatabase
from gateway.storage.adapter_leases import AdapterOwner, LeaseState

_CLAIM = """
    INSERT INTO adapter_leases AS lease (adapter, holder, host, acquired_at, expires_at, generation)
    VALUES (%(adapter)s, %(holder)s, %(host)s, mg_now(), mg_now() + %(lease_s)s, 1)
    ON CONFLICT (adapter) DO UPDATE SET
        acquired_at = CASE WHEN lease.holder = EXCLUDED.holder THEN lease.acquired_at
                      ELSE EXCLUDED.acquired_at END,
        generation = lease.generation + CASE WHEN lease.holder = EXCLUDED.holder THEN 0 ELSE 1 END,
        holder = EXCLUDED.holder, host = EXCLUDED.host, expires_at = EXCLUDED.expires_at
    WHERE lease.holder = EXCLUDED.holder OR lease.expires_at <= mg_now()
    RETURNING holder, host, expires_at - mg_now(), generation
"""


async def claim_lease(conn: Conn, adapter: str, holder: str, host: str, lease_s: float) -> LeaseState:
    """Acquire or renew ``adapter``'s lease for ``holder`` unless another live holder has it."""
    params = {"adapter": adapter, "holder": holder, "host": host, "lease_s": lease_s}
    row = await (await conn.execute(_CLAIM, params)).fetchone()
    if row is None:  # a live lease of another holder: the conflict locked its row, so this read is current
        row = await (
            await conn.execute(
                "SELECT holder, host, expires_at - mg_now(), generation FROM adapter_leases "
                "WHERE adapter = %s",
                (adapter,),
            )
        ).fetchone()
    assert row is not None, "the claimed lease row exists"
    current, current_host, expires_in_s, generation = row
    return LeaseState(
        adapter=adapter,
        held=current == holder,
        holder=str(current),
        host=str(current_host),
        expires_in_s=float(expires_in_s),
        generation=int(generation),
    )


async def release_lease(conn: Conn, adapter: str, holder: str) -> bool:
    """Expire ``holder``'s lease of ``adapter`` now; False when it held none (or it had expired)."""
    cursor = await conn.execute(
        "UPDATE adapter_leases SET expires_at = mg_now() "
        "WHERE adapter = %s AND holder = %s AND expires_at > mg_now()",
        (adapter, holder),
    )
    return cursor.rowcount > 0


async def lease_owners(conn: Conn) -> list[AdapterOwner]:
    rows = await (
        await conn.execute(
            "SELECT adapter, holder, host, acquired_at, expires_at, expires_at - mg_now(), generation "
            "FROM adapter_leases ORDER BY adapter"
        )
    ).fetchall()
    return [
        AdapterOwner(
            adapter=str(adapter),
            holder=str(holder),
            host=str(host),
            acquired_at=float(acquired_at),
            expires_at=float(expires_at),
            expires_in_s=float(expires_in_s),
            generation=int(generation),
        )
        for adapter, holder, host, acquired_at, expires_at, expires_in_s, generation in rows
    ]


class PgAdapterLeases:
    """The ``AdapterLeaseRepository`` on PostgreSQL: each call one transaction on the server's clock."""

    def __init__(self, db: PgDatabase) -> None:
        self._db = db

    async def claim(self, adapter: str, holder: str, host: str, lease_s: float) -> LeaseState:
        async def claim(conn: Conn) -> LeaseState:
            return await claim_lease(conn, adapter, holder, host, lease_s)

        return await self._db.run_write(claim)

    async def release(self, adapter: str, holder: str) -> bool:
        async def release(conn: Conn) -> bool:
            return await release_lease(conn, adapter, holder)

        return await self._db.run_write(release)

    async def owners(self) -> list[AdapterOwner]:
        return await self._db.run_read(lease_owners)
