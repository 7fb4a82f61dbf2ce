"""``PgSearchIndex``: full-text search over messages on PostgreSQL (to be filled in)."""

from __future__ import annotations

from ..health import SearchHealth
from .engine import PgDatabase


class PgSearchIndex:
    def __init__(self, db: PgDatabase) -> None:
        self._db = db

    async def health(self) -> SearchHealth:
        return SearchHealth("ok", 0, 0)
