"""The ``local`` provider's facts in PostgreSQL (table ``facts``, ranked by an English ``tsvector``).

Invariants: every read and write names a person and touches only that person's rows; a fact is stored
once per person (a unique index on the person and the content's digest, so long facts fit the index;
exact duplicates are no-ops); the search vector is a stored generated column, so it is always in step with
the content in the same transaction; user text never reaches ``tsquery`` syntax (the query is the OR of the
lexemes ``plainto_tsquery`` finds in the query's words), so no input can fail a lookup. The table is part
of the agent ladder's version 1: every host sees the same facts, and ``create`` has nothing left to do.
"""

from __future__ import annotations

import re
from typing import LiteralString

from ..facts import Fact
from .engine import Conn, PgDatabase

FACTS_DDL: tuple[LiteralString, ...] = (
    """CREATE TABLE facts (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, person_id text NOT NULL, content text NOT NULL,
        source text NOT NULL, created_at double precision NOT NULL DEFAULT mg_now(),
        search tsvector GENERATED ALWAYS AS (to_tsvector('english', content)) STORED)""",
    # Once per person; the digest keeps a long fact (a mirrored memory entry) within a btree entry's size.
    "CREATE UNIQUE INDEX facts_person_content ON facts(person_id, md5(content))",
    "CREATE INDEX facts_person ON facts(person_id, created_at)",
    "CREATE INDEX facts_search ON facts USING gin(search)",
)

_WORD = re.compile(r"\w+", re.UNICODE)
_MAX_QUERY_TERMS = 24

_INSERT: LiteralString = (
    "INSERT INTO facts (person_id, content, source) VALUES (%s, %s, %s)"
    " ON CONFLICT (person_id, md5(content)) DO NOTHING"
)
# md5 narrows to the index; the content comparison makes the match exact whatever the digest says.
_DELETE: LiteralString = "DELETE FROM facts WHERE person_id = %s AND md5(content) = md5(%s) AND content = %s"
# ``plainto_tsquery`` joins the lexemes it finds with ``&``; any one of them should match, as on SQLite.
_MATCHES: LiteralString = """
    WITH q AS (SELECT replace(plainto_tsquery('english', %s)::text, ' & ', ' | ')::tsquery AS query)
    SELECT f.content, f.source FROM facts f, q
    WHERE numnode(q.query) > 0 AND f.person_id = %s AND f.search @@ q.query
    ORDER BY ts_rank(f.search, q.query) DESC, f.created_at DESC, f.id DESC LIMIT %s"""
_NEWEST: LiteralString = (
    "SELECT content, source FROM facts WHERE person_id = %s ORDER BY created_at DESC, id DESC LIMIT %s"
)


def query_words(query: str) -> str | None:
    """The query's distinct words (longer than one character, at most 24) as plain text; None for none."""
    words = list(dict.fromkeys(w.lower() for w in _WORD.findall(query) if len(w) > 1))[:_MAX_QUERY_TERMS]
    return " ".join(words) or None


class PgFactStore:
    """``agent_core.storage.FactStore`` over one ``PgDatabase`` (the backend's own pool)."""

    def __init__(self, db: PgDatabase) -> None:
        self._db = db

    async def create(self) -> None:
        """Nothing to do: opening the backend migrated the schema, ``facts`` included."""

    async def add(self, person_id: str, content: str, source: str) -> bool:
        async def insert(conn: Conn) -> bool:
            cursor = await conn.execute(_INSERT, (person_id, content, source))
            return cursor.rowcount > 0

        return await self._db.run_write(insert)

    async def remove(self, person_id: str, content: str) -> int:
        async def delete(conn: Conn) -> int:
            cursor = await conn.execute(_DELETE, (person_id, content, content))
            return cursor.rowcount

        return await self._db.run_write(delete)

    async def forget_person(self, person_id: str) -> int:
        """Delete the person's facts (their bytes stay in dead tuples until vacuum, see forget.py)."""

        async def delete(conn: Conn) -> int:
            cursor = await conn.execute("DELETE FROM facts WHERE person_id = %s", (person_id,))
            return max(cursor.rowcount, 0)

        return await self._db.run_write(delete)

    async def replace(self, person_id: str, old: str, new: str, source: str) -> None:
        async def swap(conn: Conn) -> None:
            await conn.execute(_DELETE, (person_id, old, old))
            await conn.execute(_INSERT, (person_id, new, source))

        await self._db.run_write(swap)

    async def count(self, person_id: str) -> int:
        async def count(conn: Conn) -> int:
            row = await (
                await conn.execute("SELECT count(*) FROM facts WHERE person_id = %s", (person_id,))
            ).fetchone()
            return int(row[0]) if row is not None else 0

        return await self._db.run_read(count)

    async def top(self, person_id: str, query: str, limit: int) -> list[Fact]:
        """The person's facts best matching ``query`` (``ts_rank``), then their newest, up to ``limit``."""
        words = query_words(query)

        async def read(conn: Conn) -> list[Fact]:
            found: list[Fact] = []
            if words is not None:
                rows = await (await conn.execute(_MATCHES, (words, person_id, limit))).fetchall()
                found = [Fact(content, source) for content, source in rows]
            if len(found) < limit:
                seen = {fact.content for fact in found}
                rows = await (await conn.execute(_NEWEST, (person_id, limit))).fetchall()
                found += [Fact(c, s) for c, s in rows if c not in seen][: limit - len(found)]
            return found

        if limit <= 0:
            return []
        return await self._db.run_read(read)
