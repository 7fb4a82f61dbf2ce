"""The deployment's client key in PostgreSQL: one row of ``client_key`` every host reads (``PgClientKey``).

Invariant (the port's, ``gateway.storage.client_keys``): the first key inserted stays — an insert that finds
a row does nothing (``ON CONFLICT DO NOTHING`` waits for a concurrent inserter's commit) and the read that
follows, in the same transaction but a statement of its own, sees the row that won — so hosts starting
together agree on one key, and the same cookie is the same account on every host.
"""

from __future__ import annotations

from agent_core.storage.postgres.engine import Conn, PgDatabase
from gateway.storage.client_keys import KEY_BYTES, ClientKeyUnusableError

__all__ = ["PgClientKey", "keep_client_key", "store_client_key"]


async def keep_client_key(conn: Conn, proposed: bytes) -> bytes | None:
    """The stored key, ``proposed`` inserted first when there is none."""
    await conn.execute(
        "INSERT INTO client_key(id, secret, created_at) VALUES (1, %s, mg_now()) ON CONFLICT (id) DO NOTHING",
        (proposed,),
    )
    row = await (await conn.execute("SELECT secret FROM client_key WHERE id = 1")).fetchone()
    return bytes(row[0]) if row is not None else None


async def store_client_key(conn: Conn, secret: bytes) -> None:
    """Make ``secret`` the key (a moved home's: its browsers keep their accounts); only ``mnemogate migrate``
    replaces a key, into a schema it has just filled with that home's accounts."""
    await conn.execute(
        "INSERT INTO client_key(id, secret, created_at) VALUES (1, %s, mg_now()) "
        "ON CONFLICT (id) DO UPDATE SET secret = excluded.secret, created_at = excluded.created_at",
        (secret,),
    )


class PgClientKey:
    """``ClientKeyStore`` on PostgreSQL."""

    def __init__(self, db: PgDatabase) -> None:
        self._db = db

    async def keep(self, proposed: bytes) -> bytes:
        stored = await self._db.run_write(lambda conn: keep_client_key(conn, proposed))
        if stored is None or len(stored) != KEY_BYTES:
            size = "no" if stored is None else f"{len(stored)} bytes, not {KEY_BYTES}"
            raise ClientKeyUnusableError(
                f"the client key in {self._db.where} is damaged ({size}): restore it from a backup; "
                "deleting it makes every browser and API client start a new conversation"
            )
        return stored
