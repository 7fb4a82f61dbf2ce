"""The PostgreSQL admin reads: every query behind ``gateway.storage.admin_reads``, and ``PgAdminReads``.

Invariants: nothing here writes; each method is one read-only snapshot (``run_read``), so a page and its
total, or a chat's transcript and its notices, agree; session-key prefixes match code point for code point
under the ``C`` collation whatever the database's own (index ``conversations_key_c``), so case and
wildcard characters never widen a match; the admin API pages a conversation's messages by id, which is
exact here because appends lock their segment row before drawing ids and a compression switch holds the
parent's lock (``agent_core.storage.postgres.messages``). The two cursors over times — ``finished_turns``'
watermark and ``queued_replies``' position — read only below the visibility horizon (``visibility.py``,
read before the snapshot), so no row can become visible later behind a cursor that already moved on.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from agent_core.storage.postgres.engine import Conn, PgDatabase
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
from gateway.storage.outbox import NOTICE_KINDS, ChatNotice

from .visibility import visibility_horizon

Params = Sequence[object] | Mapping[str, object]

_CONVERSATION_COLUMNS = """c.id, c.session_key, c.person_id, c.platform, c.title, c.created_at, c.ended_at,
    c.end_reason, c.tip_segment_id,
    (SELECT count(*) FROM messages m WHERE m.conversation_id = c.id),
    (SELECT max(m.created_at) FROM messages m WHERE m.conversation_id = c.id)"""
_MESSAGE_COLUMNS = "id, segment_id, role, content, tool_name, author, platform_message_id, created_at"

# Exactly the keys starting with a prefix: the half-open range [prefix, prefix with its last character
# incremented) in code-point order — the ``C`` collation, which the ``conversations_key_c`` index serves.
_PREFIX_RANGE = 'c.session_key COLLATE "C" >= %s AND c.session_key COLLATE "C" < %s'
POSITION_SCALE = 1_000_000
"""A queued reply's position is its queuing time in microseconds of the server's clock."""


def _clamp(limit: int) -> int:
    return max(1, min(limit, MAX_PAGE))


def prefix_range(key_prefix: str) -> tuple[str, str]:
    """The bounds of the keys starting with ``key_prefix``; ValueError for an empty prefix."""
    if not key_prefix:
        raise ValueError("a session key prefix must not be empty")
    return key_prefix, key_prefix[:-1] + chr(ord(key_prefix[-1]) + 1)


def _conversation(row: Sequence[Any]) -> ConversationRow:
    return ConversationRow(
        id=str(row[0]),
        session_key=str(row[1]),
        person_id=row[2],
        platform=row[3],
        title=row[4],
        created_at=float(row[5]),
        ended_at=None if row[6] is None else float(row[6]),
        end_reason=row[7],
        tip_session_id=str(row[8]),
        message_count=int(row[9]),
        last_message_at=None if row[10] is None else float(row[10]),
    )


def _message(row: Sequence[Any]) -> MessageRow:
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


async def _one(conn: Conn, query: str, params: Params = ()) -> tuple[Any, ...] | None:
    return await (await conn.execute(query, params)).fetchone()


async def _all(conn: Conn, query: str, params: Params = ()) -> list[tuple[Any, ...]]:
    return await (await conn.execute(query, params)).fetchall()


async def _count(conn: Conn, query: str, params: Params = ()) -> int:
    row = await _one(conn, query, params)
    return 0 if row is None else int(row[0])


async def list_conversations(
    conn: Conn,
    *,
    platform: str | None = None,
    person_id: str | None = None,
    active: bool | None = None,
    since: float | None = None,
    until: float | None = None,
    limit: int = 50,
    offset: int = 0,
) -> Page[ConversationRow]:
    """Conversations matching every given filter, newest first (ties by id)."""
    where, params = ["TRUE"], list[object]()
    if platform is not None:
        where.append("c.platform = %s")
        params.append(platform)
    if person_id is not None:
        where.append("c.person_id = %s")
        params.append(person_id)
    if active is not None:
        where.append("c.ended_at IS NULL" if active else "c.ended_at IS NOT NULL")
    if since is not None:
        where.append("(c.ended_at IS NULL OR c.ended_at >= %s)")
        params.append(since)
    if until is not None:
        where.append("c.created_at < %s")
        params.append(until)
    clause = " AND ".join(where)
    total = await _count(conn, f"SELECT count(*) FROM conversations c WHERE {clause}", params)
    limit, offset = _clamp(limit), max(0, offset)
    rows = await _all(
        conn,
        f"SELECT {_CONVERSATION_COLUMNS} FROM conversations c WHERE {clause} "
        "ORDER BY c.created_at DESC, c.id LIMIT %s OFFSET %s",
        [*params, limit, offset],
    )
    return Page(tuple(_conversation(row) for row in rows), total, limit, offset)


async def recent_conversations(conn: Conn, *, limit: int, include_ended: bool) -> tuple[ConversationRow, ...]:
    live_only = "" if include_ended else "WHERE c.ended_at IS NULL "
    rows = await _all(
        conn,
        f"SELECT {_CONVERSATION_COLUMNS} FROM conversations c {live_only}"
        "ORDER BY c.created_at DESC, c.id LIMIT %s",
        (max(limit, 1),),
    )
    return tuple(_conversation(row) for row in rows)


async def conversation_row(conn: Conn, conversation_id: str) -> ConversationRow | None:
    """One conversation with its counts, or None."""
    row = await _one(
        conn, f"SELECT {_CONVERSATION_COLUMNS} FROM conversations c WHERE c.id = %s", (conversation_id,)
    )
    return None if row is None else _conversation(row)


async def live_tip(conn: Conn, key_prefix: str) -> tuple[str, str, float] | None:
    """(conversation id, tip segment id, tip started_at) of the prefix's newest live conversation."""
    row = await _one(
        conn,
        f"""SELECT c.id, c.tip_segment_id, s.started_at
            FROM conversations c JOIN segments s ON s.id = c.tip_segment_id
            WHERE c.ended_at IS NULL AND {_PREFIX_RANGE} ORDER BY c.created_at DESC, c.id LIMIT 1""",
        prefix_range(key_prefix),
    )
    return None if row is None else (str(row[0]), str(row[1]), float(row[2]))


async def live_conversation_with_prefix(conn: Conn, key_prefix: str) -> str | None:
    """The id of the newest live conversation whose session key starts with exactly ``key_prefix``."""
    live = await live_tip(conn, key_prefix)
    return None if live is None else live[0]


async def last_ended_with_prefix(conn: Conn, key_prefix: str) -> float | None:
    """When the newest ended conversation whose session key starts with exactly ``key_prefix`` ended."""
    row = await _one(
        conn,
        f"SELECT max(c.ended_at) FROM conversations c WHERE c.ended_at IS NOT NULL AND {_PREFIX_RANGE}",
        prefix_range(key_prefix),
    )
    return None if row is None or row[0] is None else float(row[0])


async def message_page(
    conn: Conn, conversation_id: str, *, after_id: int = 0, limit: int = 100
) -> tuple[MessageRow, ...]:
    """A conversation's messages (every segment) with id > ``after_id``, oldest first."""
    rows = await _all(
        conn,
        f"""SELECT {_MESSAGE_COLUMNS}, tool_calls IS NOT NULL FROM messages
            WHERE conversation_id = %s AND id > %s ORDER BY id LIMIT %s""",
        (conversation_id, after_id, _clamp(limit)),
    )
    return tuple(_message(row) for row in rows)


async def chat_transcript(conn: Conn, segment_id: str, *, limit: int = 200) -> tuple[MessageRow, ...]:
    """What a chat window shows for a segment: user messages and assistant text, the newest ``limit``."""
    rows = await _all(
        conn,
        f"""SELECT {_MESSAGE_COLUMNS}, false FROM messages
            WHERE segment_id = %s AND role IN ('user', 'assistant') AND tool_calls IS NULL
                  AND content IS NOT NULL AND content <> ''
            ORDER BY id DESC LIMIT %s""",
        (segment_id, _clamp(limit)),
    )
    return tuple(_message(row) for row in reversed(rows))


async def chat_notices(conn: Conn, chat_ref: str, *, since: float, limit: int) -> tuple[ChatNotice, ...]:
    """The newest ``limit`` command replies and notices for ``chat_ref`` queued at or after ``since``.

    A chat's outbox ids follow commit order (its queuing lock), so id order is the order they were sent in.
    """
    rows = await _all(
        conn,
        "SELECT id, text, created_at FROM outbox WHERE chat_ref = %s AND created_at >= %s "
        "AND kind = ANY(%s) ORDER BY id DESC LIMIT %s",
        (chat_ref, since, list(NOTICE_KINDS), limit),
    )
    return tuple(ChatNotice(int(row[0]), str(row[1]), float(row[2])) for row in reversed(rows))


async def chat_history(conn: Conn, key_prefix: str, chat_ref: str, *, limit: int) -> ChatHistory:
    live = await live_tip(conn, key_prefix)
    if live is None:
        ended = await last_ended_with_prefix(conn, key_prefix)
        since = ended if ended is not None else 0.0
        return ChatHistory(None, (), await chat_notices(conn, chat_ref, since=since, limit=_clamp(limit)))
    conversation_id, tip_id, started_at = live
    transcript = await chat_transcript(conn, tip_id, limit=limit)
    notices = await chat_notices(conn, chat_ref, since=started_at, limit=_clamp(limit))
    return ChatHistory(conversation_id, transcript, notices)


async def _accounts(conn: Conn, person_ids: Sequence[str]) -> dict[str, tuple[str, ...]]:
    """Each person's accounts (``platform:account_id``, sorted), for a whole page in one statement."""
    rows = await _all(
        conn,
        "SELECT person_id, platform, account_id FROM accounts WHERE person_id = ANY(%s) "
        'ORDER BY person_id, platform COLLATE "C", account_id COLLATE "C"',
        (list(person_ids),),
    )
    found: dict[str, list[str]] = {}
    for person, platform, account in rows:
        found.setdefault(str(person), []).append(f"{platform}:{account}")
    return {person: tuple(accounts) for person, accounts in found.items()}


async def _persons(conn: Conn, rows: Sequence[tuple[Any, ...]]) -> tuple[PersonRow, ...]:
    accounts = await _accounts(conn, [str(row[0]) for row in rows])
    return tuple(PersonRow(str(row[0]), row[1], float(row[2]), accounts.get(str(row[0]), ())) for row in rows)


async def list_persons(conn: Conn, *, limit: int = 50, offset: int = 0) -> Page[PersonRow]:
    """Persons with their accounts, oldest first."""
    total = await _count(conn, "SELECT count(*) FROM persons")
    limit, offset = _clamp(limit), max(0, offset)
    rows = await _all(
        conn,
        "SELECT id, display_name, created_at FROM persons ORDER BY created_at, id LIMIT %s OFFSET %s",
        (limit, offset),
    )
    return Page(await _persons(conn, rows), total, limit, offset)


async def get_person(conn: Conn, person_id: str) -> PersonRow | None:
    rows = await _all(conn, "SELECT id, display_name, created_at FROM persons WHERE id = %s", (person_id,))
    found = await _persons(conn, rows) if rows else ()
    return found[0] if found else None


async def gateway_counters(conn: Conn) -> GatewayCounters:
    """Job and outbox counts by state, and model token totals over every segment."""
    jobs = await _all(conn, "SELECT state, count(*) FROM turn_jobs GROUP BY state ORDER BY state")
    outbox = await _all(conn, "SELECT state, count(*) FROM outbox GROUP BY state ORDER BY state")
    tokens = await _one(
        conn,
        """SELECT coalesce(sum(input_tokens), 0), coalesce(sum(output_tokens), 0),
                  coalesce(sum(cache_read_tokens), 0), coalesce(sum(cache_write_tokens), 0) FROM segments""",
    )
    totals = (0, 0, 0, 0) if tokens is None else tuple(int(value) for value in tokens)
    return GatewayCounters(
        tuple((str(s), int(n)) for s, n in jobs), tuple((str(s), int(n)) for s, n in outbox), *totals
    )


async def finished_turns_since(
    conn: Conn, finished_after: float, *, before: float, limit: int = 10_000
) -> tuple[FinishedTurn, ...]:
    """Jobs finished after ``finished_after`` and before ``before`` (the horizon), oldest finish first."""
    rows = await _all(
        conn,
        """SELECT id, finished_at, finished_at - created_at FROM turn_jobs
           WHERE state IN ('done', 'failed') AND finished_at > %s AND finished_at < %s
           ORDER BY finished_at, id LIMIT %s""",
        (finished_after, before, max(1, limit)),
    )
    return tuple(FinishedTurn(int(job), float(at), max(0.0, float(seconds))) for job, at, seconds in rows)


async def live_token_totals(conn: Conn, key_prefix: str) -> TokenTotals:
    """Input and output tokens summed over the segments of the prefix's newest live conversation."""
    live = await live_tip(conn, key_prefix)
    if live is None:
        return TokenTotals()
    row = await _one(
        conn,
        "SELECT coalesce(sum(input_tokens), 0), coalesce(sum(output_tokens), 0) FROM segments "
        "WHERE conversation_id = %s",
        (live[0],),
    )
    return TokenTotals() if row is None else TokenTotals(int(row[0]), int(row[1]))


async def outbox_count(conn: Conn, kind: str | None) -> int:
    if kind is None:
        return await _count(conn, "SELECT count(*) FROM outbox")
    return await _count(conn, "SELECT count(*) FROM outbox WHERE kind = %s", (kind,))


async def inbound_count(conn: Conn, platform: str | None) -> int:
    if platform is None:
        return await _count(conn, "SELECT count(*) FROM inbound_events")
    return await _count(conn, "SELECT count(*) FROM inbound_events WHERE platform = %s", (platform,))


async def queued_replies(conn: Conn, *, after: int, before: float, limit: int) -> tuple[QueuedReply, ...]:
    """Replies queued after position ``after`` and before the horizon ``before``, in position order.

    A position is the queuing time in microseconds; rows sharing the last position of a full page are all
    returned (a page never ends between two rows of one position, which the next read would skip).
    """
    scale = POSITION_SCALE
    rows = await _all(
        conn,
        # The time range is the index's (a position above ``after`` is queued at least 1 µs past it).
        """WITH q AS (
               SELECT floor(created_at * %s)::bigint AS position, id, conversation_id, created_at
               FROM outbox
               WHERE kind = 'reply' AND created_at >= %s::double precision / %s AND created_at < %s)
           SELECT position, conversation_id, created_at FROM q
           WHERE position > %s
             AND position <= (SELECT max(p) FROM (SELECT position AS p FROM q WHERE position > %s
                                                  ORDER BY position, id LIMIT %s) AS page)
           ORDER BY position, id""",
        (scale, after, scale, before, after, after, max(1, limit)),
    )
    return tuple(
        QueuedReply(int(at), str(conversation), float(created)) for at, conversation, created in rows
    )


async def message_tallies(conn: Conn) -> tuple[MessageTally, ...]:
    rows = await _all(
        conn,
        "SELECT conversation_id, count(*) FILTER (WHERE role = 'user'), "
        "count(*) FILTER (WHERE role = 'assistant' AND tool_calls IS NULL) "
        'FROM messages GROUP BY conversation_id ORDER BY conversation_id COLLATE "C"',
    )
    return tuple(MessageTally(str(c), int(users), int(replies)) for c, users, replies in rows)


class PgAdminReads:
    """``AdminReads`` over one ``PgDatabase``; each method is one read-only snapshot."""

    def __init__(self, db: PgDatabase) -> None:
        self._db = db

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
        return await self._db.run_read(
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
        return await self._db.run_read(
            lambda c: recent_conversations(c, limit=limit, include_ended=include_ended)
        )

    async def conversation(self, conversation_id: str) -> ConversationRow | None:
        return await self._db.run_read(lambda c: conversation_row(c, conversation_id))

    async def messages(
        self, conversation_id: str, *, after_id: int = 0, limit: int = 100
    ) -> tuple[MessageRow, ...]:
        return await self._db.run_read(
            lambda c: message_page(c, conversation_id, after_id=after_id, limit=limit)
        )

    async def persons(self, *, limit: int = 50, offset: int = 0) -> Page[PersonRow]:
        return await self._db.run_read(lambda c: list_persons(c, limit=limit, offset=offset))

    async def person(self, person_id: str) -> PersonRow | None:
        return await self._db.run_read(lambda c: get_person(c, person_id))

    async def live_conversation(self, key_prefix: str) -> str | None:
        prefix_range(key_prefix)  # an empty prefix is refused before any I/O
        return await self._db.run_read(lambda c: live_conversation_with_prefix(c, key_prefix))

    async def last_ended(self, key_prefix: str) -> float | None:
        prefix_range(key_prefix)
        return await self._db.run_read(lambda c: last_ended_with_prefix(c, key_prefix))

    async def chat_history(self, key_prefix: str, chat_ref: str, *, limit: int = 200) -> ChatHistory:
        prefix_range(key_prefix)
        return await self._db.run_read(lambda c: chat_history(c, key_prefix, chat_ref, limit=limit))

    async def live_token_totals(self, key_prefix: str) -> TokenTotals:
        prefix_range(key_prefix)
        return await self._db.run_read(lambda c: live_token_totals(c, key_prefix))

    async def gateway_counters(self) -> GatewayCounters:
        return await self._db.run_read(gateway_counters)

    async def finished_turns(self, finished_after: float, *, limit: int = 10_000) -> tuple[FinishedTurn, ...]:
        horizon = await visibility_horizon(self._db)  # before the snapshot it guards
        return await self._db.run_read(
            lambda c: finished_turns_since(c, finished_after, before=horizon, limit=limit)
        )

    async def outbox_count(self, *, kind: str | None = None) -> int:
        return await self._db.run_read(lambda c: outbox_count(c, kind))

    async def inbound_count(self, *, platform: str | None = None) -> int:
        return await self._db.run_read(lambda c: inbound_count(c, platform))

    async def queued_replies(self, *, after: int = 0, limit: int = 1_000) -> tuple[QueuedReply, ...]:
        horizon = await visibility_horizon(self._db)  # before the snapshot it guards
        return await self._db.run_read(lambda c: queued_replies(c, after=after, before=horizon, limit=limit))

    async def message_tallies(self) -> tuple[MessageTally, ...]:
        return await self._db.run_read(message_tallies)
