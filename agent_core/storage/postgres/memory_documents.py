"""Curated memory documents and skills in PostgreSQL (filled in by the shared-memory work)."""

from __future__ import annotations

from typing import LiteralString

MEMORY_DDL: tuple[LiteralString, ...] = ()
