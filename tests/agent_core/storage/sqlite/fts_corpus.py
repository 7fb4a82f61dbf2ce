"""A real in-memory FTS5 corpus with the production tokenizers, searched the way the caller will.

Invariant: the two tables use exactly the tokenizers agent_core/storage/sqlite builds (contentless porter
unicode61 and contentless trigram with detail=full), and `search` follows the plan documented in
agent_core/storage/sqlite/match_expressions.py: expand trigram prefixes through fts5vocab, run porter then
trigram, and run the trigram fallback only when too few messages were found.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from agent_core.search import MAX_QUERY_CHARS, MAX_TERMS, plan_query
from agent_core.storage.sqlite.match_expressions import (
    MAX_EXPANSIONS_PER_PREFIX,
    FtsQuery,
    fts_query_for,
    trigram_prefix_bounds,
)

_SCHEMA = """
CREATE TABLE messages(id INTEGER PRIMARY KEY, body TEXT NOT NULL);
CREATE VIRTUAL TABLE porter_fts USING fts5(
    body, content='', tokenize='porter unicode61 remove_diacritics 2');
CREATE VIRTUAL TABLE trigram_fts USING fts5(body, content='', tokenize='trigram', detail=full);
CREATE VIRTUAL TABLE temp.trigram_vocab USING fts5vocab(main, trigram_fts, 'row');
"""
_VOCAB_SQL = "SELECT term FROM temp.trigram_vocab WHERE term >= ? AND term < ? ORDER BY doc DESC LIMIT ?"


def build_fts_query(text: str, *, max_chars: int = MAX_QUERY_CHARS, max_terms: int = MAX_TERMS) -> FtsQuery:
    """What the SQLite backend runs for ``text``: the planner's plan rendered as FTS5 expressions."""
    return fts_query_for(plan_query(text, max_chars=max_chars, max_terms=max_terms))


@dataclass(frozen=True, slots=True)
class SearchOutcome:
    ids: tuple[int, ...]
    vm_steps: int
    query: FtsQuery


class FtsCorpus:
    """Messages indexed in both FTS5 tables; `trailing_space` appends one space to indexed text."""

    def __init__(self, connection: sqlite3.Connection, *, trailing_space: bool) -> None:
        self._db = connection
        self._suffix = " " if trailing_space else ""
        self._steps = 0
        self._db.set_progress_handler(self._count_step, 100)

    def _count_step(self) -> int:
        self._steps += 1
        return 0

    def add(self, rows: Iterable[tuple[int, str]]) -> None:
        rows = list(rows)
        indexed = [(rowid, body + self._suffix) for rowid, body in rows]
        with self._db:
            self._db.executemany("INSERT INTO messages(id, body) VALUES (?, ?)", rows)
            self._db.executemany("INSERT INTO porter_fts(rowid, body) VALUES (?, ?)", indexed)
            self._db.executemany("INSERT INTO trigram_fts(rowid, body) VALUES (?, ?)", indexed)

    def expand(self, query: FtsQuery) -> FtsQuery:
        expansions: dict[str, list[str]] = {}
        for prefix in query.trigram_prefixes:
            low, high = trigram_prefix_bounds(prefix)
            cursor = self._db.execute(_VOCAB_SQL, (low, high, MAX_EXPANSIONS_PER_PREFIX))
            expansions[prefix] = [row[0] for row in cursor]
        return query.with_trigram_expansions(expansions)

    def vocabulary(self, low: str, high: str) -> list[str]:
        sql = "SELECT term FROM temp.trigram_vocab WHERE term >= ? AND term < ? ORDER BY term"
        return [row[0] for row in self._db.execute(sql, (low, high))]

    def match(self, table: str, expression: str) -> list[int]:
        sql = f"SELECT rowid FROM {table} WHERE {table} MATCH ? ORDER BY bm25({table}) LIMIT 50"
        return [row[0] for row in self._db.execute(sql, (expression,))]

    def count(self, table: str, expression: str, limit: int) -> int:
        sql = f"SELECT count(*) FROM (SELECT 1 FROM {table} WHERE {table} MATCH ? LIMIT ?)"
        return int(self._db.execute(sql, (expression, limit)).fetchone()[0])

    def run(self, query: FtsQuery, *, enough: int = 5) -> SearchOutcome:
        self._steps = 0
        query = self.expand(query)
        found: dict[int, None] = {}
        for table, expression in (("porter_fts", query.porter), ("trigram_fts", query.trigram)):
            if expression is not None:
                found.update(dict.fromkeys(self.match(table, expression)))
        if len(found) < enough and query.trigram_fallback is not None:
            found.update(dict.fromkeys(self.match("trigram_fts", query.trigram_fallback)))
        return SearchOutcome(tuple(found), self._steps, query)

    def search(self, text: str) -> tuple[int, ...]:
        return self.run(build_fts_query(text)).ids

    def like_scan_steps(self, needle: str) -> int:
        """VM steps of the LIKE scan the anchor falls back to, for comparison."""
        self._steps = 0
        self._db.execute("SELECT id FROM messages WHERE body LIKE ?", (f"%{needle}%",)).fetchall()
        return self._steps


@contextmanager
def open_corpus(rows: Iterable[tuple[int, str]] = (), *, trailing_space: bool = False) -> Iterator[FtsCorpus]:
    connection = sqlite3.connect(":memory:")
    try:
        connection.executescript(_SCHEMA)
        corpus = FtsCorpus(connection, trailing_space=trailing_space)
        corpus.add(rows)
        yield corpus
    finally:
        connection.close()
