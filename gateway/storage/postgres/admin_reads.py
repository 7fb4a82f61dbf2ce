"""``PgAdminReads`` on PostgreSQL (to be filled in)."""

from __future__ import annotations

from agent_core.storage.postgres.engine import PgDatabase


class PgAdminReads:
    def __init__(self, db: PgDatabase) -> None:
        self._db = db
