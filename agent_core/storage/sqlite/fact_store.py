"""The local provider's facts in their own SQLite file (``<home>/providers/local.db``), ranked by FTS5.

Invariants: every read and write names a person and touches only that person's rows; a fact is stored
once per person (``UNIQUE (person_id, content)``, exact duplicates are no-ops); the FTS index is kept in
step by triggers in the same transaction; user text never reaches FTS syntax (queries are built from
quoted word tokens). Each operation opens a short-lived connection on a worker thread, so the event loop
never blocks on SQLite and several processes can share the file.
"""

from __future__ import annotations

import asyncio
import re
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

from ..facts import Fact

T = TypeVar("T")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS facts (
    id INTEGER PRIMARY KEY,
    person_id TEXT NOT NULL,
    content TEXT NOT NULL,
    source TEXT NOT NULL,
    created_at REAL NOT NULL,
    UNIQUE (person_id, content)
);
CREATE INDEX IF NOT EXISTS facts_person ON facts (person_id, created_at);
CREATE VIRTUAL TABLE IF NOT EXISTS facts_fts USING fts5(
    content, content='facts', content_rowid='id', tokenize='porter unicode61'
);
CREATE TRIGGER IF NOT EXISTS facts_ai AFTER INSERT ON facts BEGIN
    INSERT INTO facts_fts(rowid, content) VALUES (new.id, new.content);
END;
CREATE TRIGGER IF NOT EXISTS facts_ad AFTER DELETE ON facts BEGIN
    INSERT INTO facts_fts(facts_fts, rowid, content) VALUES ('delete', old.id, old.content);
END;
"""
_INSERT = "INSERT OR IGNORE INTO facts (person_id, content, source, created_at) VALUES (?, ?, ?, ?)"
_DELETE = "DELETE FROM facts WHERE person_id = ? AND content = ?"
_WORD = re.compile(r"\w+", re.UNICODE)
_MAX_QUERY_TERMS = 24


def match_expression(query: str) -> str | None:
    """An FTS5 OR-query of the query's words, each quoted (None when it has no words)."""
    words = list(dict.fromkeys(w.lower() for w in _WORD.findall(query) if len(w) > 1))[:_MAX_QUERY_TERMS]
    return " OR ".join(f'"{w}"' for w in words) or None


class SqliteFactStore:
    """``agent_core.storage.FactStore`` over one SQLite file."""

    def __init__(self, path: Path) -> None:
        self._path = path

    async def create(self) -> None:
        await asyncio.to_thread(self._create)

    async def add(self, person_id: str, content: str, source: str) -> bool:
        return await self._run(
            lambda c: c.execute(_INSERT, (person_id, content, source, time.time())).rowcount > 0
        )

    async def remove(self, person_id: str, content: str) -> int:
        return await self._run(lambda c: c.execute(_DELETE, (person_id, content)).rowcount)

    async def forget_person(self, person_id: str) -> int:
        """Delete the person's facts; the FTS index is merged ('optimize') so no old segment keeps their
        words, freed pages are zeroed (``secure_delete``) and the WAL is emptied afterwards."""

        def forget() -> int:
            conn = sqlite3.connect(self._path, timeout=5.0, isolation_level=None)
            try:
                conn.execute("PRAGMA secure_delete=ON")
                conn.execute("BEGIN IMMEDIATE")
                try:
                    removed = conn.execute("DELETE FROM facts WHERE person_id = ?", (person_id,)).rowcount
                    if removed:
                        conn.execute("INSERT INTO facts_fts(facts_fts) VALUES ('optimize')")
                    conn.execute("COMMIT")
                except BaseException:
                    conn.execute("ROLLBACK")
                    raise
                conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
                return removed
            finally:
                conn.close()

        if not self._path.exists():
            return 0
        await asyncio.to_thread(self._create)
        return await asyncio.to_thread(forget)

    async def replace(self, person_id: str, old: str, new: str, source: str) -> None:
        def swap(conn: sqlite3.Connection) -> None:
            conn.execute(_DELETE, (person_id, old))
            conn.execute(_INSERT, (person_id, new, source, time.time()))

        await self._run(swap)

    async def count(self, person_id: str) -> int:
        def count(conn: sqlite3.Connection) -> int:
            (n,) = conn.execute("SELECT COUNT(*) FROM facts WHERE person_id = ?", (person_id,)).fetchone()
            return int(n)

        return await self._run(count)

    async def top(self, person_id: str, query: str, limit: int) -> list[Fact]:
        """The person's facts best matching ``query`` (BM25), then their newest ones, up to ``limit``."""
        return await self._run(lambda c: _top(c, person_id, query, limit))

    def _create(self) -> None:
        self._path.parent.mkdir(parents=True, exist_ok=True)
        with self._connect() as conn:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.executescript(_SCHEMA)

    async def _run(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        def run() -> T:
            with self._connect() as conn:
                return fn(conn)

        return await asyncio.to_thread(run)

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        conn = sqlite3.connect(self._path, timeout=5.0)
        try:
            with conn:
                yield conn
        finally:
            conn.close()


def _top(conn: sqlite3.Connection, person_id: str, query: str, limit: int) -> list[Fact]:
    found: list[Fact] = []
    expression = match_expression(query)
    if expression is not None:
        rows = conn.execute(
            "SELECT f.content, f.source FROM facts_fts JOIN facts f ON f.id = facts_fts.rowid "
            "WHERE facts_fts MATCH ? AND f.person_id = ? ORDER BY bm25(facts_fts) LIMIT ?",
            (expression, person_id, limit),
        ).fetchall()
        found = [Fact(content, source) for content, source in rows]
    if len(found) < limit:
        seen = {fact.content for fact in found}
        rows = conn.execute(
            "SELECT content, source FROM facts WHERE person_id = ? ORDER BY created_at DESC, id DESC LIMIT ?",
            (person_id, limit),
        ).fetchall()
        found += [Fact(c, s) for c, s in rows if c not in seen][: limit - len(found)]
    return found
