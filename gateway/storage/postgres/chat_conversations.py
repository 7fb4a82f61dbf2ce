"""The chat-window port on PostgreSQL (``gateway.storage.chat_conversations``): a chat's conversations, its
live window, renaming and reopening.

Invariants (the port's): a chat is an exact session-key prefix (``C``-collation range, as the admin reads);
``reopen`` is one transaction that takes the session key's advisory lock first — the lock ``/new`` and the
idle end take — then the rows (the live conversation ended, the chosen one revived), the same order every
writer of a key's live conversation uses, so it cannot deadlock with them; the partial unique index on live
keys still guards "one live conversation per key"; every time stored is the server's ``mg_now()``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agent_core.storage.postgres.conversations import (
    end_conversation,
    get_conversation,
    live_conversation,
    lock_session_key,
)
from agent_core.storage.postgres.engine import Conn, PgDatabase
from gateway.storage.chat_conversations import (
    SWITCHED,
    ChatConversation,
    ChatWindow,
    CommandNotice,
    Reopened,
    clean_title,
)
from gateway.storage.outbox import NOTICE_KINDS, ChatNotice

from .admin_reads import _PREFIX_RANGE, _clamp, chat_transcript, last_ended_with_prefix, prefix_range

_LISTING = f"""SELECT c.id, c.title,
    (SELECT left(m.content, 200) FROM messages m
      WHERE m.conversation_id = c.id AND m.role = 'user' AND m.segment_id = (
        SELECT s.id FROM segments s WHERE s.conversation_id = c.id AND s.parent_segment_id IS NULL
        ORDER BY s.started_at LIMIT 1)
      ORDER BY m.id LIMIT 1),
    c.created_at,
    GREATEST(c.created_at, c.reopened_at,
        (SELECT max(m.created_at) FROM messages m WHERE m.conversation_id = c.id)) AS active,
    c.ended_at,
    (SELECT count(*) FROM messages m WHERE m.conversation_id = c.id AND m.role = 'user')
  FROM conversations c
  WHERE {_PREFIX_RANGE}
    AND (c.ended_at IS NULL OR EXISTS (SELECT 1 FROM messages m WHERE m.conversation_id = c.id))
  ORDER BY c.ended_at IS NOT NULL, active DESC, c.id LIMIT %s"""


async def list_chat_conversations(conn: Conn, key_prefix: str, limit: int) -> tuple[ChatConversation, ...]:
    cursor = await conn.execute(_LISTING, (*prefix_range(key_prefix), _clamp(limit)))
    return tuple(
        ChatConversation(
            id=str(r[0]),
            title=r[1],
            first_message=r[2],
            created_at=float(r[3]),
            last_active_at=float(r[4]),
            ended_at=r[5],
            user_messages=int(r[6]),
        )
        for r in await cursor.fetchall()
    )


async def command_notices(
    conn: Conn, chat_ref: str, *, since: float, limit: int, conversation_id: str = ""
) -> tuple[CommandNotice, ...]:
    """The newest ``limit`` command replies and notices for ``chat_ref``, oldest first: those filed under
    ``conversation_id``, and those filed under none since ``since`` (a chat's outbox ids follow commit
    order: its queuing lock)."""
    cursor = await conn.execute(
        "SELECT id, text, created_at, request_text, idempotency_key FROM outbox "
        "WHERE chat_ref = %s AND kind = ANY(%s) AND (conversation_id = %s AND conversation_id <> '' "
        "OR conversation_id = '' AND created_at >= %s) ORDER BY id DESC LIMIT %s",
        (chat_ref, list(NOTICE_KINDS), conversation_id, since, _clamp(limit)),
    )
    rows = await cursor.fetchall()
    return tuple(_notice(r) for r in reversed(rows))


async def chat_window(conn: Conn, key_prefix: str, chat_ref: str, limit: int) -> ChatWindow:
    cursor = await conn.execute(
        f"""SELECT c.id, c.tip_segment_id, GREATEST(s.started_at, c.reopened_at)
            FROM conversations c JOIN segments s ON s.id = c.tip_segment_id
            WHERE c.ended_at IS NULL AND {_PREFIX_RANGE} ORDER BY c.created_at DESC, c.id LIMIT 1""",
        prefix_range(key_prefix),
    )
    row = await cursor.fetchone()
    if row is None:
        ended = await last_ended_with_prefix(conn, key_prefix)
        since = ended if ended is not None else 0.0
        return ChatWindow(None, (), await command_notices(conn, chat_ref, since=since, limit=limit))
    transcript = await chat_transcript(conn, str(row[1]), limit=limit)
    notices = await command_notices(
        conn, chat_ref, since=float(row[2]), limit=limit, conversation_id=str(row[0])
    )
    return ChatWindow(str(row[0]), transcript, notices)


async def reopen_conversation(conn: Conn, key_prefix: str, conversation_id: str) -> Reopened | None:
    """Call inside ONE transaction (see the module invariants)."""
    found = await get_conversation(conn, conversation_id)
    if found is None or not found.session_key.startswith(key_prefix):
        return None
    await lock_session_key(conn, found.session_key)
    target = await get_conversation(conn, conversation_id)  # as it is now that the key is ours
    if target is None or target.ended_at is None:
        return None if target is None else Reopened(target.id, None)
    current = await live_conversation(conn, target.session_key)
    if current is not None:
        await end_conversation(conn, current.id, SWITCHED)
    await conn.execute(
        "UPDATE conversations SET ended_at = NULL, end_reason = NULL, reopened_at = mg_now() WHERE id = %s",
        (target.id,),
    )
    await conn.execute(
        "UPDATE segments SET ended_at = NULL, end_reason = NULL WHERE id = %s", (target.tip_session_id,)
    )
    return Reopened(target.id, current.id if current is not None else None)


class PgChatConversations:
    """``ChatConversations`` on PostgreSQL: each method is one transaction."""

    def __init__(self, db: PgDatabase) -> None:
        self._db = db

    async def conversations(self, key_prefix: str, *, limit: int = 50) -> tuple[ChatConversation, ...]:
        prefix_range(key_prefix)
        return await self._db.run_read(lambda c: list_chat_conversations(c, key_prefix, limit))

    async def window(self, key_prefix: str, chat_ref: str, *, limit: int = 200) -> ChatWindow:
        prefix_range(key_prefix)
        return await self._db.run_read(lambda c: chat_window(c, key_prefix, chat_ref, limit))

    async def rename(self, key_prefix: str, conversation_id: str, title: str | None) -> bool:
        async def work(conn: Conn) -> bool:
            cursor = await conn.execute(
                f"UPDATE conversations AS c SET title = %s WHERE c.id = %s AND {_PREFIX_RANGE}",
                (clean_title(title), conversation_id, *prefix_range(key_prefix)),
            )
            return cursor.rowcount == 1

        prefix_range(key_prefix)
        return await self._db.run_write(work)

    async def reopen(self, key_prefix: str, conversation_id: str) -> Reopened | None:
        prefix_range(key_prefix)
        return await self._db.run_write(lambda c: reopen_conversation(c, key_prefix, conversation_id))


def _notice(row: Sequence[Any]) -> CommandNotice:
    return CommandNotice(ChatNotice(int(row[0]), str(row[1]), float(row[2])), row[3], row[4])
