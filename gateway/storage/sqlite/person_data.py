"""The SQLite person-data reads: every query behind ``gateway.storage.person_data``, and ``SqlitePersonData``.

Every function takes a reader ``sqlite3.Connection`` and returns the port's frozen records; none writes.
Each method is one ``StateStore.run_read`` (one snapshot); pages are cut by row id.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from agent_core.storage.records import MessageRecord
from agent_core.storage.sqlite import StateStore
from agent_core.storage.sqlite.messages import MESSAGE_COLUMNS, message_from_row
from gateway.storage.admin_reads import MAX_PAGE
from gateway.storage.person_data import UsageRecord


def _clamp(limit: int) -> int:
    return max(1, min(limit, MAX_PAGE))


def _usage_record(r: Sequence[Any]) -> UsageRecord:
    tokens = (int(r[4]), int(r[5]), int(r[6]), int(r[7]))
    cost = None if r[8] is None else float(r[8])
    return UsageRecord(int(r[0]), float(r[1]), str(r[2]), str(r[3]), *tokens, cost, r[9], str(r[10]), r[11])


def usage(conn: sqlite3.Connection, person_id: str, *, after_id: int, limit: int) -> tuple[UsageRecord, ...]:
    rows = conn.execute(
        """SELECT id, at, conversation_id, session_id, input_tokens, output_tokens, cache_read_tokens,
                  cache_write_tokens, cost_usd, model, kind, platform
           FROM usage_log WHERE person_id = ? AND id > ? ORDER BY id LIMIT ?""",
        (person_id, after_id, _clamp(limit)),
    ).fetchall()
    return tuple(_usage_record(r) for r in rows)


def joined_conversations(conn: sqlite3.Connection, person_id: str) -> tuple[str, ...]:
    rows = conn.execute(
        """SELECT DISTINCT m.conversation_id FROM messages m JOIN conversations c ON c.id = m.conversation_id
           WHERE m.author = ? AND m.role = 'user' AND c.person_id IS NOT ?
           ORDER BY m.conversation_id""",
        (person_id, person_id),
    ).fetchall()
    return tuple(str(r[0]) for r in rows)


def authored_messages(
    conn: sqlite3.Connection, conversation_id: str, person_id: str, *, after_id: int, limit: int
) -> tuple[MessageRecord, ...]:
    rows = conn.execute(
        f"""SELECT {MESSAGE_COLUMNS} FROM messages
            WHERE conversation_id = ? AND author = ? AND role = 'user' AND id > ? ORDER BY id LIMIT ?""",
        (conversation_id, person_id, after_id, _clamp(limit)),
    ).fetchall()
    return tuple(message_from_row(row) for row in rows)


class SqlitePersonData:
    """``PersonData`` over state.db; each method is one read on the store's reader connections."""

    def __init__(self, state: StateStore) -> None:
        self._state = state

    async def usage(self, person_id: str, *, after_id: int = 0, limit: int = 500) -> tuple[UsageRecord, ...]:
        return await self._state.run_read(lambda c: usage(c, person_id, after_id=after_id, limit=limit))

    async def joined_conversations(self, person_id: str) -> tuple[str, ...]:
        return await self._state.run_read(lambda c: joined_conversations(c, person_id))

    async def authored_messages(
        self, conversation_id: str, person_id: str, *, after_id: int = 0, limit: int = 500
    ) -> tuple[MessageRecord, ...]:
        return await self._state.run_read(
            lambda c: authored_messages(c, conversation_id, person_id, after_id=after_id, limit=limit)
        )
