"""The ``local`` provider's facts in PostgreSQL (filled in by the facts work)."""

from __future__ import annotations

from typing import LiteralString

FACTS_DDL: tuple[LiteralString, ...] = ()


class PgFactStore:
    """``FactStore`` on PostgreSQL (to be filled in)."""

    def __init__(self, db: object) -> None:
        self._db = db
