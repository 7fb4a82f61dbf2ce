"""The SQLite admin reads: every query behind ``gateway.storage.admin_reads``, and ``SqliteAdminReads``.

Every function takes a reader ``sqlite3.Connection`` and returns the port's frozen records; none writes.
Each ``SqliteAdminReads`` method is one ``StateStore.run_read``, so what one method returns is one
snapshot. Positions handed out as cursors are row ids: ids follow commit order here because SQLite
serialises every writer.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from agent_core.storage.sqlite import StateStore
from gateway.storage.admin_reads import (
    MAX_PAGE,
    ChatHistory,
    ConversationRow,
    FinishedTurn,
    GatewayCounters,
    MessageRow,
    MessageTally,
    Page,
    PersonRow,
    QueuedReply,
    TokenTotals,
)

from .outbox import chat_notices

_CONVERSATION_COLUMNS = """c.id, c.session_key, c.person_id, c.platform, c.title, c.created_at, c.ended_at,
    c.end_reason, c.tip_session_id,
    (SELECT count(*) FROM messages m WHERE m.conversation_id = c.id),
    (SELECT max(m.created_at) FROM messages m WHERE m.conversation_id = c.id)"""


def _clamp(limit: int) -> int:
    return max(1, min(limit, MAX_PAGE))


def list_conversations(
    conn: sqlite3.Connection,
    *,
    platform: str | None = None,
    person_id: str | None = None,
    active: bool | None = None,
    since: float | None = None,
    until: float | None = None,
    limit: int = 50,
    offset: int = 0,
) -> Page[ConversationRow]:
    """Conversations matching every given filter, newest first."""
    where, params = ["1 = 1"], list[object]()
    if platform is not None:
        where.append("c.platform = ?")
        params.append(platform)
    if person_id is not None:
        where.append("c.person_id = ?")
        params.append(person_id)
    if active is not None:
        where.append("c.ended_at IS NULL" if active else "c.ended_at IS NOT NULL")
    if since is not None:
        where.append("(c.ended_at IS NULL OR c.ended_at >= ?)")
        params.append(since)
    if until is not None:
        where.append("c.created_at < ?")
        params.append(until)
    clause = " AND ".join(where)
    total = int(conn.execute(f"SELECT count(*) FROM conversations c WHERE {clause}", params).fetchone()[0])
    limit, offset = _clamp(limit), max(0, offset)
    rows = conn.execute(
        f"""SELECT {_CONVERSATION_COLUMNS} FROM conversations c WHERE {clause}
            ORDER BY c.created_at DESC, c.id LIMIT ? OFFSET ?""",
        [*params, limit, offset],
    ).fetchall()
    return Page(tuple(ConversationRow(*row) for row in rows), total, limit, offset)


def recent_conversations(
    conn: sqlite3.Connection, *, limit: int, include_ended: bool
) -> tuple[ConversationRow, ...]:
    live_only = "" if include_ended else "WHERE c.ended_at IS NULL "
    rows = conn.execute(
        f"SELECT {_CONVERSATION_COLUMNS} FROM conversations c {live_only}ORDER BY c.created_at DESC LIMIT ?",
        (max(limit, 1),),
    ).fetchall()
    return tuple(ConversationRow(*row) for row in rows)


def conversation_row(conn: sqlite3.Connection, conversation_id: str) -> ConversationRow | None:
    """One conversation with its counts, or None."""
    row = conn.execute(
        f"SELECT {_CONVERSATION_COLUMNS} FROM conversations c WHERE c.id = ?", (conversation_id,)
    ).fetchone()
    return None if row is None else ConversationRow(*row)


# Session keys starting with a prefix, exactly (byte for byte, case-sensitive): the half-open range
# [prefix, prefix with its last character incremented) under SQLite's BINARY collation — which also lets
# the session_key index serve it. (LIKE would match case-insensitively: another browser's key.)
_PREFIX_RANGE = "c.session_key >= ? AND c.session_key < ? AND substr(c.session_key, 1, length(?)) = ?"


def _prefix_range(key_prefix: str) -> tuple[str, str, str, str]:
    if not key_prefix:
        raise ValueError("a session key prefix must not be empty")
    upper = key_prefix[:-1] + chr(ord(key_prefix[-1]) + 1)
    return key_prefix, upper, key_prefix, key_prefix


def live_conversation_with_prefix(conn: sqlite3.Connection, key_prefix: str) -> str | None:
    """The id of the newest live conversation whose session key starts with exactly ``key_prefix``."""
    live = _live_tip(conn, key_prefix)
    return None if live is None else live[0]


def _live_tip(conn: sqlite3.Connection, key_prefix: str) -> tuple[str, str, float] | None:
    """(conversation id, tip segment id, tip started_at) of the prefix's newest live conversation."""
    row = conn.execute(
        f"""SELECT c.id, c.tip_session_id, s.started_at
            FROM conversations c JOIN sessions s ON s.id = c.tip_session_id
            WHERE c.ended_at IS NULL AND {_PREFIX_RANGE} ORDER BY c.created_at DESC LIMIT 1""",
        _prefix_range(key_prefix),
    ).fetchone()
    return None if row is None else (str(row[0]), str(row[1]), float(row[2]))


def last_ended_with_prefix(conn: sqlite3.Connection, key_prefix: str) -> float | None:
    """When the newest ended conversation whose session key starts with exactly ``key_prefix`` ended."""
    row = conn.execute(
        f"SELECT max(c.ended_at) FROM conversations c WHERE c.ended_at IS NOT NULL AND {_PREFIX_RANGE}",
        _prefix_range(key_prefix),
    ).fetchone()
    return None if row is None or row[0] is None else float(row[0])


def message_page(
    conn: sqlite3.Connection, conversation_id: str, *, after_id: int = 0, limit: int = 100
) -> tuple[MessageRow, ...]:
    """A conversation's messages (every segment) with id > ``after_id``, oldest first."""
    rows = conn.execute(
        """SELECT id, session_id, role, content, tool_name, author, platform_message_id, created_at,
                  tool_calls IS NOT NULL
           FROM messages WHERE conversation_id = ? AND id > ? ORDER BY id LIMIT ?""",
        (conversation_id, after_id, _clamp(limit)),
    ).fetchall()
    return tuple(_message_row(row) for row in rows)


def _message_row(row: tuple[Any, ...]) -> MessageRow:
    return MessageRow(
        id=int(row[0]),
        session_id=str(row[1]),
        role=str(row[2]),
        content=row[3],
        tool_name=row[4],
        author=row[5],
        platform_message_id=row[6],
        created_at=float(row[7]),
        has_tool_calls=bool(row[8]),
    )


def chat_transcript(conn: sqlite3.Connection, session_id: str, *, limit: int = 200) -> tuple[MessageRow, ...]:
    """What a chat window shows for a segment: user messages and assistant text, the newest ``limit``."""
    rows = conn.execute(
        """SELECT id, session_id, role, content, tool_name, author, platform_message_id, created_at, 0
           FROM messages
           WHERE session_id = ? AND role IN ('user', 'assistant') AND tool_calls IS NULL
                 AND content IS NOT NULL AND content != ''
           ORDER BY id DESC LIMIT ?""",
        (session_id, _clamp(limit)),
    ).fetchall()
    return tuple(_message_row(row) for row in reversed(rows))


def chat_history(conn: sqlite3.Connection, key_prefix: str, chat_ref: str, *, limit: int) -> ChatHistory:
    live = _live_tip(conn, key_prefix)
    if live is None:
        ended = last_ended_with_prefix(conn, key_prefix)
        since = ended if ended is not None else 0.0
        return ChatHistory(None, (), chat_notices(conn, chat_ref, since=since, limit=_clamp(limit)))
    conversation_id, tip_id, started_at = live
    transcript = chat_transcript(conn, tip_id, limit=limit)
    notices = chat_notices(conn, chat_ref, since=started_at, limit=_clamp(limit))
    return ChatHistory(conversation_id, transcript, notices)


def list_persons(conn: sqlite3.Connection, *, limit: int = 50, offset: int = 0) -> Page[PersonRow]:
    """Persons with their accounts, oldest first."""
    total = int(conn.execute("SELECT count(*) FROM persons").fetchone()[0])
    limit, offset = _clamp(limit), max(0, offset)
    rows = conn.execute(
        "SELECT id, display_name, created_at FROM persons ORDER BY created_at, id LIMIT ? OFFSET ?",
        (limit, offset),
    ).fetchall()
    persons = tuple(PersonRow(row[0], row[1], row[2], _accounts(conn, row[0])) for row in rows)
    return Page(persons, total, limit, offset)


def get_person(conn: sqlite3.Connection, person_id: str) -> PersonRow | None:
    row = conn.execute(
        "SELECT id, display_name, created_at FROM persons WHERE id = ?", (person_id,)
    ).fetchone()
    return None if row is None else PersonRow(row[0], row[1], row[2], _accounts(conn, row[0]))


def _accounts(conn: sqlite3.Connection, person_id: str) -> tuple[str, ...]:
    rows = conn.execute(
        "SELECT platform, account_id FROM accounts WHERE person_id = ? ORDER BY platform, account_id",
        (person_id,),
    ).fetchall()
    return tuple(f"{platform}:{account}" for platform, account in rows)


def gateway_counters(conn: sqlite3.Connection) -> GatewayCounters:
    """Job and outbox counts by state, and model token totals over every segment."""
    jobs = conn.execute("SELECT state, count(*) FROM turn_jobs GROUP BY state ORDER BY state").fetchall()
    outbox = conn.execute("SELECT state, count(*) FROM outbox GROUP BY state ORDER BY state").fetchall()
    tokens = conn.execute(
        """SELECT coalesce(sum(input_tokens), 0), coalesce(sum(output_tokens), 0),
                  coalesce(sum(cache_read_tokens), 0), coalesce(sum(cache_write_tokens), 0) FROM sessions"""
    ).fetchone()
    return GatewayCounters(
        tuple((str(s), int(n)) for s, n in jobs),
        tuple((str(s), int(n)) for s, n in outbox),
        *(int(value) for value in tokens),
    )


def finished_turns_since(
    conn: sqlite3.Connection, finished_after: float, *, limit: int = 10_000
) -> tuple[FinishedTurn, ...]:
    """Jobs finished after ``finished_after`` with the seconds from enqueue to finish, oldest finish first."""
    rows = conn.execute(
        """SELECT id, finished_at, finished_at - created_at FROM turn_jobs
           WHERE state IN ('done', 'failed') AND finished_at > ? ORDER BY finished_at, id LIMIT ?""",
        (finished_after, limit),
    ).fetchall()
    return tuple(FinishedTurn(int(job), float(at), max(0.0, float(seconds))) for job, at, seconds in rows)


def conversation_token_totals(conn: sqlite3.Connection, conversation_id: str) -> TokenTotals:
    """Input and output tokens summed over the conversation's segments."""
    row = conn.execute(
        """SELECT coalesce(sum(input_tokens), 0), coalesce(sum(output_tokens), 0)
           FROM sessions WHERE conversation_id = ?""",
        (conversation_id,),
    ).fetchone()
    return TokenTotals(int(row[0]), int(row[1]))


def live_token_totals(conn: sqlite3.Connection, key_prefix: str) -> TokenTotals:
    conversation_id = live_conversation_with_prefix(conn, key_prefix)
    return TokenTotals() if conversation_id is None else conversation_token_totals(conn, conversation_id)


def outbox_count(conn: sqlite3.Connection, kind: str | None) -> int:
    if kind is None:
        return int(conn.execute("SELECT count(*) FROM outbox").fetchone()[0])
    return int(conn.execute("SELECT count(*) FROM outbox WHERE kind = ?", (kind,)).fetchone()[0])


def inbound_count(conn: sqlite3.Connection, platform: str | None) -> int:
    if platform is None:
        return int(conn.execute("SELECT count(*) FROM inbound_events").fetchone()[0])
    sql = "SELECT count(*) FROM inbound_events WHERE platform = ?"
    return int(conn.execute(sql, (platform,)).fetchone()[0])


def queued_replies(conn: sqlite3.Connection, *, after: int, limit: int) -> tuple[QueuedReply, ...]:
    rows = conn.execute(
        "SELECT id, conversation_id, created_at FROM outbox WHERE id > ? AND kind = 'reply' "
        "ORDER BY id LIMIT ?",
        (after, max(1, limit)),
    ).fetchall()
    return tuple(
        QueuedReply(int(at), str(conversation), float(created)) for at, conversation, created in rows
    )


def message_tallies(conn: sqlite3.Connection) -> tuple[MessageTally, ...]:
    rows = conn.execute(
        "SELECT conversation_id, sum(role = 'user'), sum(role = 'assistant' AND tool_calls IS NULL) "
        "FROM messages GROUP BY conversation_id ORDER BY conversation_id"
    ).fetchall()
    return tuple(MessageTally(str(c), int(users), int(replies)) for c, users, replies in rows)


class SqliteAdminReads:
    """``AdminReads`` over state.db; each method is one read on the store's reader connections."""

    def __init__(self, state: StateStore) -> None:
        self._state = state

    async def conversations(
        self,
        *,
        platform: str | None = None,
        person_id: str | None = None,
        active: bool | None = None,
        since: float | None = None,
        until: float | None = None,
        limit: int = 50,
        offset: int = 0,
    ) -> Page[ConversationRow]:
        return await self._state.run_read(
            lambda c: list_conversations(
                c,
                platform=platform,
                person_id=person_id,
                active=active,
                since=since,
                until=until,
                limit=limit,
                offset=offset,
            )
        )

    async def recent_conversations(self, *, limit: int, include_ended: bool) -> tuple[ConversationRow, ...]:
        return await self._state.run_read(
            lambda c: recent_conversations(c, limit=limit, include_ended=include_ended)
        )

    async def conversation(self, conversation_id: str) -> ConversationRow | None:
        return await self._state.run_read(lambda c: conversation_row(c, conversation_id))

    async def messages(
        self, conversation_id: str, *, after_id: int = 0, limit: int = 100
    ) -> tuple[MessageRow, ...]:
        return await self._state.run_read(
            lambda c: message_page(c, conversation_id, after_id=after_id, limit=limit)
        )

    async def persons(self, *, limit: int = 50, offset: int = 0) -> Page[PersonRow]:
        return await self._state.run_read(lambda c: list_persons(c, limit=limit, offset=offset))

    async def person(self, person_id: str) -> PersonRow | None:
        return await self._state.run_read(lambda c: get_person(c, person_id))

    async def live_conversation(self, key_prefix: str) -> str | None:
        _prefix_range(key_prefix)  # an empty prefix is refused before any I/O
        return await self._state.run_read(lambda c: live_conversation_with_prefix(c, key_prefix))

    async def last_ended(self, key_prefix: str) -> float | None:
        _prefix_range(key_prefix)
        return await self._state.run_read(lambda c: last_ended_with_prefix(c, key_prefix))

    async def chat_history(self, key_prefix: str, chat_ref: str, *, limit: int = 200) -> ChatHistory:
        _prefix_range(key_prefix)
        return await self._state.run_read(lambda c: chat_history(c, key_prefix, chat_ref, limit=limit))

    async def live_token_totals(self, key_prefix: str) -> TokenTotals:
        _prefix_range(key_prefix)
        return await self._state.run_read(lambda c: live_token_totals(c, key_prefix))

    async def gateway_counters(self) -> GatewayCounters:
        return await self._state.run_read(gateway_counters)

    async def finished_turns(self, finished_after: float, *, limit: int = 10_000) -> tuple[FinishedTurn, ...]:
        return await self._state.run_read(lambda c: finished_turns_since(c, finished_after, limit=limit))

    async def outbox_count(self, *, kind: str | None = None) -> int:
        return await self._state.run_read(lambda c: outbox_count(c, kind))

    async def inbound_count(self, *, platform: str | None = None) -> int:
        return await self._state.run_read(lambda c: inbound_count(c, platform))

    async def queued_replies(self, *, after: int = 0, limit: int = 1_000) -> tuple[QueuedReply, ...]:
        return await self._state.run_read(lambda c: queued_replies(c, after=after, limit=limit))

    async def message_tallies(self) -> tuple[MessageTally, ...]:
        return await self._state.run_read(message_tallies)
