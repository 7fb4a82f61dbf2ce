"""Search columns and indexes on ``messages`` (filled in by the PostgreSQL search work)."""

from __future__ import annotations

from typing import LiteralString

SEARCH_DDL: tuple[LiteralString, ...] = ()
