"""The chat-window port on SQLite (``gateway.storage.chat_conversations``): a chat's conversations, its live
window, renaming and reopening.

Invariants (the port's): a chat is an exact session-key prefix (the admin reads' byte range); ``reopen`` is
one write transaction — the single writer orders it with every enqueue, so no message can land between
ending the key's live conversation and reviving the chosen one; the unique live-key index still guards
"one live conversation per key".
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Sequence
from typing import Any

from agent_core.storage.sqlite import StateStore
from agent_core.storage.sqlite.conversations import end_conversation, get_conversation, live_conversation
from gateway.storage.chat_conversations import (
    SWITCHED,
    ChatConversation,
    ChatWindow,
    CommandNotice,
    Reopened,
    clean_title,
)
from gateway.storage.outbox import NOTICE_KINDS, ChatNotice

from .admin_reads import _PREFIX_RANGE, _clamp, _prefix_range, chat_transcript, last_ended_with_prefix

_LISTING = f"""SELECT c.id, c.title,
    (SELECT substr(m.content, 1, 200) FROM messages m
      WHERE m.conversation_id = c.id AND m.role = 'user' AND m.session_id = (
        SELECT s.id FROM sessions s WHERE s.conversation_id = c.id AND s.parent_session_id IS NULL
        ORDER BY s.started_at LIMIT 1)
      ORDER BY m.id LIMIT 1),
    c.created_at,
    max(c.created_at, coalesce(c.reopened_at, 0),
        coalesce((SELECT max(m.created_at) FROM messages m WHERE m.conversation_id = c.id), 0)) AS active,
    c.ended_at,
    (SELECT count(*) FROM messages m WHERE m.conversation_id = c.id AND m.role = 'user')
  FROM conversations c
  WHERE {_PREFIX_RANGE}
    AND (c.ended_at IS NULL OR EXISTS (SELECT 1 FROM messages m WHERE m.conversation_id = c.id))
  ORDER BY c.ended_at IS NOT NULL, active DESC, c.id LIMIT ?"""


def list_chat_conversations(
    conn: sqlite3.Connection, key_prefix: str, limit: int
) -> tuple[ChatConversation, ...]:
    rows = conn.execute(_LISTING, (*_prefix_range(key_prefix), _clamp(limit))).fetchall()
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
        for r in rows
    )


def command_notices(
    conn: sqlite3.Connection, chat_ref: str, *, since: float, limit: int, conversation_id: str = ""
) -> tuple[CommandNotice, ...]:
    """The newest ``limit`` command replies and notices for ``chat_ref``, oldest first: those filed under
    ``conversation_id``, and those filed under none since ``since``."""
    marks = ", ".join("?" for _ in NOTICE_KINDS)
    rows = conn.execute(
        f"""SELECT id, text, created_at, request_text, idempotency_key FROM outbox
            WHERE chat_ref = ? AND kind IN ({marks})
              AND (conversation_id = ? AND conversation_id != '' OR conversation_id = '' AND created_at >= ?)
            ORDER BY id DESC LIMIT ?""",
        (chat_ref, *NOTICE_KINDS, conversation_id, since, _clamp(limit)),
    ).fetchall()
    return tuple(_notice(r) for r in reversed(rows))


def chat_window(conn: sqlite3.Connection, key_prefix: str, chat_ref: str, limit: int) -> ChatWindow:
    row = conn.execute(
        f"""SELECT c.id, c.tip_session_id, max(s.started_at, coalesce(c.reopened_at, 0))
            FROM conversations c JOIN sessions s ON s.id = c.tip_session_id
            WHERE c.ended_at IS NULL AND {_PREFIX_RANGE} ORDER BY c.created_at DESC LIMIT 1""",
        _prefix_range(key_prefix),
    ).fetchone()
    if row is None:
        ended = last_ended_with_prefix(conn, key_prefix)
        since = ended if ended is not None else 0.0
        return ChatWindow(None, (), command_notices(conn, chat_ref, since=since, limit=limit))
    transcript = chat_transcript(conn, str(row[1]), limit=limit)
    notices = command_notices(conn, chat_ref, since=float(row[2]), limit=limit, conversation_id=str(row[0]))
    return ChatWindow(str(row[0]), transcript, notices)


def rename_chat_conversation(
    conn: sqlite3.Connection, key_prefix: str, conversation_id: str, title: str | None
) -> bool:
    cursor = conn.execute(
        f"UPDATE conversations AS c SET title = ? WHERE c.id = ? AND {_PREFIX_RANGE}",
        (clean_title(title), conversation_id, *_prefix_range(key_prefix)),
    )
    return cursor.rowcount == 1


def reopen_conversation(
    conn: sqlite3.Connection, key_prefix: str, conversation_id: str, now: float
) -> Reopened | None:
    """Call inside ONE write transaction (see the port)."""
    _prefix_range(key_prefix)
    target = get_conversation(conn, conversation_id)
    if target is None or not target.session_key.startswith(key_prefix):
        return None
    if target.ended_at is None:
        return Reopened(target.id, None)
    current = live_conversation(conn, target.session_key)
    if current is not None:
        end_conversation(conn, current.id, SWITCHED, now)
    conn.execute(
        "UPDATE conversations SET ended_at = NULL, end_reason = NULL, reopened_at = ? WHERE id = ?",
        (now, target.id),
    )
    conn.execute(
        "UPDATE sessions SET ended_at = NULL, end_reason = NULL WHERE id = ?", (target.tip_session_id,)
    )
    return Reopened(target.id, current.id if current is not None else None)


class SqliteChatConversations:
    """``ChatConversations`` over state.db: each method is one read or one write transaction."""

    def __init__(self, state: StateStore) -> None:
        self._state = state

    async def conversations(self, key_prefix: str, *, limit: int = 50) -> tuple[ChatConversation, ...]:
        _prefix_range(key_prefix)
        return await self._state.run_read(lambda c: list_chat_conversations(c, key_prefix, limit))

    async def window(self, key_prefix: str, chat_ref: str, *, limit: int = 200) -> ChatWindow:
        _prefix_range(key_prefix)
        return await self._state.run_read(lambda c: chat_window(c, key_prefix, chat_ref, limit))

    async def rename(self, key_prefix: str, conversation_id: str, title: str | None) -> bool:
        _prefix_range(key_prefix)
        return await self._state.run_write(
            lambda c: rename_chat_conversation(c, key_prefix, conversation_id, title)
        )

    async def reopen(self, key_prefix: str, conversation_id: str) -> Reopened | None:
        _prefix_range(key_prefix)
        return await self._state.run_write(
            lambda c: reopen_conversation(c, key_prefix, conversation_id, time.time())
        )


def _notice(row: Sequence[Any]) -> CommandNotice:
    return CommandNotice(ChatNotice(int(row[0]), str(row[1]), float(row[2])), row[3], row[4])
