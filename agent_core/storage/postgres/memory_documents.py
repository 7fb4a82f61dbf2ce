"""Curated memory documents and skills in PostgreSQL, shared by every host: ``MemoryDocuments`` and
``SkillTexts`` over a small blocking connection pool.

Invariants: a memory update is one read-committed transaction that first locks the document's row
(``SELECT … FOR UPDATE``, creating an empty row first when there is none), reads the committed text under
that lock, applies, and writes back with ``version + 1``, so writers on any hosts queue on the row and never
lose an update; a skill write or delete first takes a transaction advisory lock on the skill's name (in this
schema), so create-if-absent is exact even before the row exists; a deleted skill's text moves to
``skills_deleted`` in the same transaction (recoverable by an operator); stored texts are always written
canonically (``serialise_entries``, ``SkillDocument.render``), and a text changed by hand in the database
is refused by an update exactly like a hand-edited file; times are the server's (``mg_now()``).

Why blocking: the memory and skill code is synchronous (worker threads via ``asyncio.to_thread``, the CLI,
benchmarks, worker processes), so it gets a psycopg ``ConnectionPool`` of its own (at most
``DOCUMENT_POOL_MAX`` connections, opened on first use with the same DSN, schema, statement timeout and
options as the async pool) instead of hopping back onto the event loop from a thread; a server that cannot
be reached is ``PostgresUnavailableError``, as everywhere in this backend.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any, LiteralString, TypeVar

import psycopg
from psycopg.rows import TupleRow
from psycopg_pool import ConnectionPool, PoolTimeout

from agent_core.memory.entries import canonical_problem, parse_entries, salvage_entries, serialise_entries
from agent_core.storage.documents import PERSON_ID, DocumentContents, DocumentDriftError, Entries, check_key

from .engine import PgDatabase, PostgresUnavailableError

R = TypeVar("R")
SyncConn = psycopg.Connection[TupleRow]

DOCUMENT_POOL_MAX = 4
SKILL_LOCK_CLASS = 0x6D67736B  # "mgsk": the advisory-lock class of skill names (second key: the name's hash)

MEMORY_DDL: tuple[LiteralString, ...] = (
    # One row per curated store, keyed like its file (people/<id>/MEMORY.md): export writes the key as a path.
    """CREATE TABLE memory_documents (
        location text PRIMARY KEY, content text NOT NULL, version bigint NOT NULL,
        updated_at double precision NOT NULL)""",
    """CREATE TABLE skills (
        name text PRIMARY KEY, content text NOT NULL, version bigint NOT NULL,
        updated_at double precision NOT NULL)""",
    # What the file backend's skills/.deleted/ holds: every deleted skill's last text.
    """CREATE TABLE skills_deleted (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, name text NOT NULL, content text NOT NULL,
        deleted_at double precision NOT NULL)""",
)

_READ_DOCUMENT: LiteralString = "SELECT content FROM memory_documents WHERE location = %s"
_LOCK_DOCUMENT: LiteralString = "SELECT content FROM memory_documents WHERE location = %s FOR UPDATE"
_CREATE_DOCUMENT: LiteralString = """INSERT INTO memory_documents(location, content, version, updated_at)
    VALUES (%s, '', 0, mg_now()) ON CONFLICT (location) DO NOTHING"""
_STORE_DOCUMENT: LiteralString = """UPDATE memory_documents
    SET content = %s, version = version + 1, updated_at = mg_now() WHERE location = %s"""
_DOCUMENT_KEYS: LiteralString = "SELECT location FROM memory_documents ORDER BY location"

_LOCK_SKILL: LiteralString = "SELECT pg_advisory_xact_lock(%s, hashtext(%s))"
_READ_SKILL: LiteralString = "SELECT content FROM skills WHERE name = %s"
_STORE_SKILL: LiteralString = """INSERT INTO skills(name, content, version, updated_at)
    VALUES (%s, %s, 1, mg_now())
    ON CONFLICT (name) DO UPDATE
    SET content = EXCLUDED.content, version = skills.version + 1, updated_at = EXCLUDED.updated_at"""
_DELETE_SKILL: LiteralString = """WITH gone AS (DELETE FROM skills WHERE name = %s RETURNING name, content)
    INSERT INTO skills_deleted(name, content, deleted_at) SELECT name, content, mg_now() FROM gone
    RETURNING id"""
_SKILL_NAMES: LiteralString = "SELECT name FROM skills ORDER BY name"


class PgDocumentPool:
    """The blocking pool the documents use, opened on first use; ``close`` from any thread."""

    def __init__(self, db: PgDatabase, *, max_size: int = DOCUMENT_POOL_MAX) -> None:
        self.schema = db.schema
        self.where = db.where
        self._conninfo = db.conninfo
        self._kwargs: dict[str, Any] = {**db.connection_kwargs, "application_name": "mnemogate-documents"}
        self._timeout = db.settings.connect_timeout_s
        self._max_size = max(1, min(max_size, db.settings.pool_max))
        self._counters = db.counters
        self._pool: ConnectionPool[SyncConn] | None = None
        self._closed = False
        self._lock = threading.Lock()

    def close(self) -> None:
        """Close every connection; later use is ``PostgresUnavailableError``."""
        with self._lock:
            pool, self._pool, self._closed = self._pool, None, True
        if pool is not None:
            pool.close()

    @contextlib.contextmanager
    def connection(self) -> Iterator[SyncConn]:
        """A pooled connection in autocommit (each statement its own transaction)."""
        pool = self._opened()
        try:
            with pool.connection(timeout=self._timeout) as conn:
                self._counters.transactions += 1
                yield conn
        except (psycopg.OperationalError, PoolTimeout, OSError) as exc:
            raise PostgresUnavailableError(self.where, _reason(exc)) from exc

    @contextlib.contextmanager
    def transaction(self) -> Iterator[SyncConn]:
        """One read-committed transaction: committed when the block ends, rolled back when it raises."""
        with self.connection() as conn, conn.transaction():
            yield conn
        self._counters.commits += 1

    def _opened(self) -> ConnectionPool[SyncConn]:
        with self._lock:
            if self._closed:
                raise PostgresUnavailableError(self.where, "the document connection pool is closed")
            if self._pool is None:
                self._pool = ConnectionPool(
                    self._conninfo,
                    min_size=0,
                    max_size=self._max_size,
                    kwargs=self._kwargs,
                    timeout=self._timeout,
                    reconnect_timeout=0,
                    check=ConnectionPool.check_connection,
                    num_workers=1,
                    open=False,
                    name=f"mnemogate-documents-{self.schema}",
                )
                self._pool.open(wait=False)
            return self._pool


@contextlib.asynccontextmanager
async def open_document_pool(db: PgDatabase) -> AsyncIterator[PgDocumentPool]:
    """The documents' blocking pool for ``db``, closed (off the event loop) when the context exits."""
    pool = PgDocumentPool(db)
    try:
        yield pool
    finally:
        await asyncio.to_thread(pool.close)


class PgMemoryDocuments:
    """``MemoryDocuments`` as rows of ``memory_documents``."""

    def __init__(self, pool: PgDocumentPool) -> None:
        self._pool = pool

    def read(self, key: str) -> DocumentContents:
        """The committed entries of ``key`` (none when it has no row)."""
        with self._pool.connection() as conn:
            row = conn.execute(_READ_DOCUMENT, (check_key(key),)).fetchone()
        content = "" if row is None else str(row[0])
        return DocumentContents(parse_entries(content), canonical_problem(content))

    def update(self, key: str, apply: Callable[[Entries], tuple[Entries | None, R]]) -> R:
        """``apply`` holding the row lock; its new entries are stored in the same transaction."""
        check_key(key)
        with self._pool.transaction() as conn:
            content = _locked_document(conn, key)
            problem = canonical_problem(content)
            if problem is not None:
                raise DocumentDriftError(key, f"{problem} in the database", None)
            entries = parse_entries(content)
            new_entries, outcome = apply(entries)
            if new_entries is not None and new_entries != entries:
                conn.execute(_STORE_DOCUMENT, (serialise_entries(new_entries), key))
            return outcome

    def repair(self, key: str) -> tuple[Path | None, Entries]:
        """Rewrite a hand-changed row from its salvaged entries; the database keeps no backup file (None)."""
        check_key(key)
        with self._pool.transaction() as conn:
            content = _locked_document(conn, key)
            if canonical_problem(content) is None:
                return None, parse_entries(content)
            entries = salvage_entries(content)
            conn.execute(_STORE_DOCUMENT, (serialise_entries(entries), key))
            return None, entries

    def list_keys(self) -> tuple[str, ...]:
        """Every stored document's key, sorted."""
        with self._pool.connection() as conn:
            return tuple(str(row[0]) for row in conn.execute(_DOCUMENT_KEYS).fetchall())

    def forget_person(self, person_id: str) -> int:
        """Delete the rows of the person's documents (``people/<person>/…``); how many there were."""
        if PERSON_ID.fullmatch(person_id) is None:
            return 0
        prefix = f"people/{person_id}/"
        with self._pool.transaction() as conn:
            cursor = conn.execute(
                "DELETE FROM memory_documents WHERE left(location, length(%s)) = %s", (prefix, prefix)
            )
            return max(cursor.rowcount, 0)


class PgSkillTexts:
    """``SkillTexts`` as rows of ``skills`` (deleted ones in ``skills_deleted``)."""

    def __init__(self, pool: PgDocumentPool) -> None:
        self._pool = pool

    def names(self) -> tuple[str, ...]:
        """Every stored skill's name, sorted."""
        with self._pool.connection() as conn:
            return tuple(str(row[0]) for row in conn.execute(_SKILL_NAMES).fetchall())

    def read(self, name: str) -> str | None:
        """The skill's committed text; None when there is no such skill."""
        with self._pool.connection() as conn:
            row = conn.execute(_READ_SKILL, (name,)).fetchone()
        return None if row is None else str(row[0])

    def write(self, name: str, apply: Callable[[str | None], str | None]) -> None:
        """``apply`` on the current text, holding the skill's name lock; its result stored in that same
        transaction."""
        with self._pool.transaction() as conn:
            self._lock(conn, name)
            row = conn.execute(_READ_SKILL, (name,)).fetchone()
            current = None if row is None else str(row[0])
            text = apply(current)
            if text is not None and text != current:
                conn.execute(_STORE_SKILL, (name, text))

    def delete(self, name: str) -> str | None:
        """Move the skill's text to ``skills_deleted``; which row holds it (None: no such skill)."""
        with self._pool.transaction() as conn:
            self._lock(conn, name)
            row = conn.execute(_DELETE_SKILL, (name,)).fetchone()
        if row is None:
            return None
        return f"skills_deleted id {row[0]} (schema {self._pool.schema})"

    def _lock(self, conn: SyncConn, name: str) -> None:
        conn.execute(_LOCK_SKILL, (SKILL_LOCK_CLASS, f"{self._pool.schema}/{name}"))


def _locked_document(conn: SyncConn, key: str) -> str:
    """The document's committed text with its row locked; an empty row is created first when there is none."""
    row = conn.execute(_LOCK_DOCUMENT, (key,)).fetchone()
    if row is None:
        conn.execute(_CREATE_DOCUMENT, (key,))
        row = conn.execute(_LOCK_DOCUMENT, (key,)).fetchone()
    if row is None:  # the row is never deleted, so it exists once the insert above returned
        raise AssertionError(f"memory document {key} vanished under its row lock")
    return str(row[0])


def _reason(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__
