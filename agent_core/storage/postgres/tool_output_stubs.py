"""Stubbing old tool outputs on PostgreSQL: the message rows updated in place.

Invariants: the search columns are generated from the row (search_ddl.py), so the UPDATE that writes the
stub also replaces the indexed words — search stops finding the old text at commit; rows are taken oldest
first ``FOR UPDATE SKIP LOCKED`` (a row another host is stubbing is left to it); the scan is served by the
partial index of large tool outputs (agent ladder step 5), whose floor term is written out here.
"""

from __future__ import annotations

from typing import LiteralString

from ..tool_output_stubs import TOOL_OUTPUT_FLOOR_CHARS, tool_output_stub
from .engine import Conn

assert TOOL_OUTPUT_FLOOR_CHARS == 1_000  # written into the query and the index below


async def stub_tool_outputs(conn: Conn, older_than_s: float, min_chars: int, limit: int, day: str) -> int:
    """Replace up to ``limit`` tool outputs longer than ``min_chars`` older than ``older_than_s`` by their
    stubs (``api_content`` cleared) inside the caller's transaction; returns how many."""
    cursor = await conn.execute(
        "SELECT id, length(content) FROM messages WHERE role = 'tool' AND length(content) > 1000 "
        "AND length(content) > %s AND created_at < mg_now() - %s ORDER BY created_at LIMIT %s "
        "FOR UPDATE SKIP LOCKED",
        (min_chars, older_than_s, limit),
    )
    rows = await cursor.fetchall()
    if not rows:
        return 0
    ids = [int(r[0]) for r in rows]
    stubs = [tool_output_stub(int(r[1]), day) for r in rows]
    await conn.execute(
        "UPDATE messages m SET content = u.stub, api_content = NULL "
        "FROM unnest(%s::bigint[], %s::text[]) AS u(id, stub) WHERE m.id = u.id",
        (ids, stubs),
    )
    return len(ids)


RETENTION_DDL: tuple[LiteralString, ...] = (
    "CREATE INDEX messages_large_tool_outputs ON messages(created_at) "
    "WHERE role = 'tool' AND length(content) > 1000",
    "CREATE INDEX conversations_ended ON conversations(ended_at) WHERE ended_at IS NOT NULL",
)
"""Agent ladder step 5: large tool outputs by age, ended conversations by end (retention's scans)."""
