"""Readiness on PostgreSQL: a read and a write proven against the server now, and the search index's state.

Invariants: every check goes to the server (no cached verdict), so a dropped server turns readiness
not-ready within one probe and ready again once the pool reconnects; a failure is a
``PostgresUnavailableError`` (a ``StateError``), as readiness expects of any backend.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from ..health import SearchHealth
from .engine import Conn, PgDatabase


class PgHealth:
    """``StoreHealth`` over one ``PgDatabase``; ``search_health`` is the search index's own report."""

    def __init__(self, db: PgDatabase, search_health: Callable[[], Awaitable[SearchHealth]]) -> None:
        self._db = db
        self._search_health = search_health

    async def check_readable(self) -> None:
        async def probe(conn: Conn) -> None:
            await conn.execute("SELECT 1 FROM meta LIMIT 1")

        await self._db.run_read(probe)

    async def check_writable(self) -> None:
        async def probe(conn: Conn) -> None:
            # A transaction id is assigned only where writes can commit (not on a read-only standby).
            await conn.execute("SELECT txid_current()")

        await self._db.run_write(probe)

    async def search_health(self) -> SearchHealth:
        return await self._search_health()
