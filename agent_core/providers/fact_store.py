"""The local provider's fact table: one SQLite file with FTS5 ranking, every row owned by one person.

Invariants: every read and write names a person and touches only that person's rows; a fact is stored
once per person (exact duplicates are no-ops); the FTS index is kept in step by triggers in the same
transaction; user text never reaches FTS syntax (queries are built from quoted word tokens). Blocking:
callers run these methods in a worker thread.
"""

from __future__ import annotations

import re
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

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
_WORD = re.compile(r"\w+", re.UNICODE)
_MAX_QUERY_TERMS = 24


@dataclass(frozen=True)
class Fact:
    content: str
    source: str


def match_expression(query: str) -> str | None:
    """An FTS5 OR-query of the query's words, each quoted (None when it has no words)."""
    words = list(dict.fromkeys(w.lower() for w in _WORD.findall(query) if len(w) > 1))[:_MAX_QUERY_TERMS]
    return " OR ".join(f'"{w}"' for w in words) or None


class FactStore:
    """Blocking access to ``facts``; open a short-lived connection per operation."""

    def __init__(self, path: Path) -> None:
        self._path = path

    def create(self) -> None:
        self._path.parent.mkdir(parents=True, exist_ok=True)
        with self._connect() as conn:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.executescript(_SCHEMA)

    def add(self, person_id: str, content: str, source: str) -> bool:
        with self._connect() as conn:
            cursor = conn.execute(
                "INSERT OR IGNORE INTO facts (person_id, content, source, created_at) VALUES (?, ?, ?, ?)",
                (person_id, content, source, time.time()),
            )
            return cursor.rowcount > 0

    def remove(self, person_id: str, content: str) -> int:
        with self._connect() as conn:
            return conn.execute(
                "DELETE FROM facts WHERE person_id = ? AND content = ?", (person_id, content)
            ).rowcount

    def replace(self, person_id: str, old: str, new: str, source: str) -> None:
        with self._connect() as conn:
            conn.execute("DELETE FROM facts WHERE person_id = ? AND content = ?", (person_id, old))
            conn.execute(
                "INSERT OR IGNORE INTO facts (person_id, content, source, created_at) VALUES (?, ?, ?, ?)",
                (person_id, new, source, time.time()),
            )

    def count(self, person_id: str) -> int:
        with self._connect() as conn:
            (n,) = conn.execute("SELECT COUNT(*) FROM facts WHERE person_id = ?", (person_id,)).fetchone()
            return int(n)

    def top(self, person_id: str, query: str, limit: int) -> list[Fact]:
        """The person's facts best matching ``query`` (BM25), then their newest ones, up to ``limit``."""
        found: list[Fact] = []
        expression = match_expression(query)
        with self._connect() as conn:
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
                    "SELECT content, source FROM facts WHERE person_id = ? ORDER BY created_at DESC, id DESC "
                    "LIMIT ?",
                    (person_id, limit),
                ).fetchall()
                found += [Fact(c, s) for c, s in rows if c not in seen][: limit - len(found)]
        return found

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        conn = sqlite3.connect(self._path, timeout=5.0)
        try:
            with conn:
                yield conn
        finally:
            conn.close()
