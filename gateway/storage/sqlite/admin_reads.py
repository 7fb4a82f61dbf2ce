"""Read-only queries for the admin API, the web chat history and the metrics scrape.

Every function takes a reader ``sqlite3.Connection`` (run them with ``StateStore.run_read``) and returns
frozen records; none writes. Paging is by ``limit``/``offset`` with a total so a client knows when to stop.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

T = TypeVar("T")

MAX_PAGE = 500


@dataclass(frozen=True, slots=True)
class ConversationRow:
    """One conversation in an admin listing, with message counts for a quick overview."""

    id: str
    session_key: str
    person_id: str | None
    platform: str | None
    title: str | None
    created_at: float
    ended_at: float | None
    end_reason: str | None
    tip_session_id: str
    message_count: int
    last_message_at: float | None


@dataclass(frozen=True, slots=True)
class Page(Generic[T]):
    """One page of rows plus the total matching rows (for ``offset + limit < total`` paging)."""

    rows: tuple[T, ...]
    total: int
    limit: int
    offset: int


@dataclass(frozen=True, slots=True)
class MessageRow:
    """A message as the admin API shows it (no api_content sidecar, no raw tool arguments)."""

    id: int
    session_id: str
    role: str
    content: str | None
    tool_name: str | None
    author: str | None
    platform_message_id: str | None
    created_at: float
    has_tool_calls: bool


@dataclass(frozen=True, slots=True)
class PersonRow:
    """A person (memory owner) and the platform accounts mapped to them (``platform:account_id``)."""

    id: str
    display_name: str | None
    created_at: float
    accounts: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class AuditRow:
    """One curated-memory write from ``memory_audit``."""

    id: int
    at: float
    person_id: str | None
    conversation_id: str | None
    actor: str
    store: str
    action: str
    old_text: str | None
    new_text: str | None


@dataclass(frozen=True, slots=True)
class GatewayCounters:
    """Totals for the metrics scrape, read from state.db so every process's work is counted."""

    jobs_by_state: tuple[tuple[str, int], ...]
    outbox_by_state: tuple[tuple[str, int], ...]
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int


def _clamp(limit: int) -> int:
    return max(1, min(limit, MAX_PAGE))


def list_conversations(
    conn: sqlite3.Connection,
    *,
    platform: str | None = None,
    person_id: str | None = None,
    active: bool | None = None,
    limit: int = 50,
    offset: int = 0,
) -> Page[ConversationRow]:
    """Conversations matching every given filter, newest first."""
    where, params = ["1 = 1"], []
    if platform is not None:
        where.append("c.platform = ?")
        params.append(platform)
    if person_id is not None:
        where.append("c.person_id = ?")
        params.append(person_id)
    if active is not None:
        where.append("c.ended_at IS NULL" if active else "c.ended_at IS NOT NULL")
    clause = " AND ".join(where)
    total = int(conn.execute(f"SELECT count(*) FROM conversations c WHERE {clause}", params).fetchone()[0])
    limit = _clamp(limit)
    rows = conn.execute(
        f"""SELECT c.id, c.session_key, c.person_id, c.platform, c.title, c.created_at, c.ended_at,
                   c.end_reason, c.tip_session_id,
                   (SELECT count(*) FROM messages m WHERE m.conversation_id = c.id),
                   (SELECT max(m.created_at) FROM messages m WHERE m.conversation_id = c.id)
            FROM conversations c WHERE {clause}
            ORDER BY c.created_at DESC, c.id LIMIT ? OFFSET ?""",
        [*params, limit, max(0, offset)],
    ).fetchall()
    return Page(tuple(ConversationRow(*row) for row in rows), total, limit, max(0, offset))


def conversation_row(conn: sqlite3.Connection, conversation_id: str) -> ConversationRow | None:
    """One conversation with its counts, or None."""
    row = conn.execute(
        """SELECT c.id, c.session_key, c.person_id, c.platform, c.title, c.created_at, c.ended_at,
                  c.end_reason, c.tip_session_id,
                  (SELECT count(*) FROM messages m WHERE m.conversation_id = c.id),
                  (SELECT max(m.created_at) FROM messages m WHERE m.conversation_id = c.id)
           FROM conversations c WHERE c.id = ?""",
        (conversation_id,),
    ).fetchone()
    return None if row is None else ConversationRow(*row)


# Session keys starting with a prefix, exactly (byte for byte, case-sensitive): the half-open range
# [prefix, prefix with its last character incremented) under SQLite's BINARY collation — which also lets
# the session_key index serve it. (LIKE would match case-insensitively: another browser's key.)
_PREFIX_RANGE = "session_key >= ? AND session_key < ? AND substr(session_key, 1, length(?)) = ?"


def _prefix_range(key_prefix: str) -> tuple[str, str, str, str]:
    if not key_prefix:
        raise ValueError("a session key prefix must not be empty")
    upper = key_prefix[:-1] + chr(ord(key_prefix[-1]) + 1)
    return key_prefix, upper, key_prefix, key_prefix


def live_conversation_with_prefix(conn: sqlite3.Connection, key_prefix: str) -> str | None:
    """The id of the newest live conversation whose session key starts with exactly ``key_prefix``."""
    row = conn.execute(
        f"""SELECT id FROM conversations WHERE ended_at IS NULL AND {_PREFIX_RANGE}
            ORDER BY created_at DESC LIMIT 1""",
        _prefix_range(key_prefix),
    ).fetchone()
    return None if row is None else str(row[0])


def last_ended_with_prefix(conn: sqlite3.Connection, key_prefix: str) -> float | None:
    """When the newest ended conversation whose session key starts with exactly ``key_prefix`` ended."""
    row = conn.execute(
        f"SELECT max(ended_at) FROM conversations WHERE ended_at IS NOT NULL AND {_PREFIX_RANGE}",
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


def list_persons(conn: sqlite3.Connection, *, limit: int = 50, offset: int = 0) -> Page[PersonRow]:
    """Persons with their accounts, oldest first."""
    total = int(conn.execute("SELECT count(*) FROM persons").fetchone()[0])
    limit = _clamp(limit)
    rows = conn.execute(
        "SELECT id, display_name, created_at FROM persons ORDER BY created_at, id LIMIT ? OFFSET ?",
        (limit, max(0, offset)),
    ).fetchall()
    persons = tuple(PersonRow(row[0], row[1], row[2], _accounts(conn, row[0])) for row in rows)
    return Page(persons, total, limit, max(0, offset))


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


def memory_audit(conn: sqlite3.Connection, person_id: str, *, limit: int = 100) -> tuple[AuditRow, ...]:
    """The person's memory writes, newest first."""
    rows = conn.execute(
        """SELECT id, at, person_id, conversation_id, actor, store, action, old_text, new_text
           FROM memory_audit WHERE person_id = ? ORDER BY at DESC, id DESC LIMIT ?""",
        (person_id, _clamp(limit)),
    ).fetchall()
    return tuple(AuditRow(*row) for row in rows)


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
) -> tuple[tuple[float, float], ...]:
    """(finished_at, seconds from enqueue to finish) for jobs finished after ``finished_after``."""
    rows = conn.execute(
        """SELECT finished_at, finished_at - created_at FROM turn_jobs
           WHERE state IN ('done', 'failed') AND finished_at > ? ORDER BY finished_at LIMIT ?""",
        (finished_after, limit),
    ).fetchall()
    return tuple((float(at), max(0.0, float(seconds))) for at, seconds in rows)


def conversation_token_totals(conn: sqlite3.Connection, conversation_id: str) -> tuple[int, int]:
    """(input, output) tokens summed over the conversation's segments."""
    row = conn.execute(
        """SELECT coalesce(sum(input_tokens), 0), coalesce(sum(output_tokens), 0)
           FROM sessions WHERE conversation_id = ?""",
        (conversation_id,),
    ).fetchone()
    return int(row[0]), int(row[1])
