"""The PostgreSQL person-data reads: every query behind ``gateway.storage.person_data``, and ``PgPersonData``.

Invariants: nothing here writes; each method is one read-only snapshot (``run_read``); pages are cut by id
(for one conversation exact, as appends lock their segment row before drawing ids —
``agent_core.storage.postgres.messages``; an export reading while turns run sees each page as of its read).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agent_core.storage.postgres.engine import Conn, PgDatabase
from agent_core.storage.postgres.messages import MESSAGE_COLUMNS, message_from_row
from agent_core.storage.records import MessageRecord
from gateway.storage.admin_reads import MAX_PAGE
from gateway.storage.person_data import UsageRecord

_AUTHORED = (
    f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE conversation_id = %s AND author = %s AND role = 'user' "
    "AND id > %s ORDER BY id LIMIT %s"
)


def _clamp(limit: int) -> int:
    return max(1, min(limit, MAX_PAGE))


async def _all(conn: Conn, query: str, params: Sequence[object]) -> list[tuple[Any, ...]]:
    return await (await conn.execute(query, params)).fetchall()


def _usage_record(r: Sequence[Any]) -> UsageRecord:
    tokens = (int(r[4]), int(r[5]), int(r[6]), int(r[7]))
    cost = None if r[8] is None else float(r[8])
    return UsageRecord(int(r[0]), float(r[1]), str(r[2]), str(r[3]), *tokens, cost, r[9], str(r[10]), r[11])


async def usage(conn: Conn, person_id: str, *, after_id: int, limit: int) -> tuple[UsageRecord, ...]:
    rows = await _all(
        conn,
        """SELECT id, at, conversation_id, segment_id, input_tokens, output_tokens, cache_read_tokens,
                  cache_write_tokens, cost_usd, model, kind, platform
           FROM usage_log WHERE person_id = %s AND id > %s ORDER BY id LIMIT %s""",
        (person_id, after_id, _clamp(limit)),
    )
    return tuple(_usage_record(r) for r in rows)


async def joined_conversations(conn: Conn, person_id: str) -> tuple[str, ...]:
    rows = await _all(
        conn,
        """SELECT DISTINCT m.conversation_id FROM messages m JOIN conversations c ON c.id = m.conversation_id
           WHERE m.author = %s AND m.role = 'user' AND c.person_id IS DISTINCT FROM %s
           ORDER BY m.conversation_id""",
        (person_id, person_id),
    )
    return tuple(str(r[0]) for r in rows)


async def authored_messages(
    conn: Conn, conversation_id: str, person_id: str, *, after_id: int, limit: int
) -> tuple[MessageRecord, ...]:
    rows = await _all(conn, _AUTHORED, (conversation_id, person_id, after_id, _clamp(limit)))
    return tuple(message_from_row(row) for row in rows)


class PgPersonData:
    """``PersonData`` over one ``PgDatabase``; each method is one read-only snapshot."""

    def __init__(self, db: PgDatabase) -> None:
        self._db = db

    async def usage(self, person_id: str, *, after_id: int = 0, limit: int = 500) -> tuple[UsageRecord, ...]:
        return await self._db.run_read(lambda c: usage(c, person_id, after_id=after_id, limit=limit))

    async def joined_conversations(self, person_id: str) -> tuple[str, ...]:
        return await self._db.run_read(lambda c: joined_conversations(c, person_id))

    async def authored_messages(
        self, conversation_id: str, person_id: str, *, after_id: int = 0, limit: int = 500
    ) -> tuple[MessageRecord, ...]:
        return await self._db.run_read(
            lambda c: authored_messages(c, conversation_id, person_id, after_id=after_id, limit=limit)
        )
