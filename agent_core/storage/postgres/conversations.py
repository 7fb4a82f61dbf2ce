"""Conversations and their segments on PostgreSQL: creating, ending, replacing, accounting, mapping rows.

Invariants (the port's, ``agent_core.storage.conversations``): a conversation keeps one id for its whole
life and always names an existing tip segment (both rows are written by one statement); at most one live
conversation exists per session key (the partial unique index ``conversations_live_key``: a racing creator
inserts nothing and reads the winner's); replacing a key's live conversation holds the key's advisory
transaction lock, so two ``/new`` of one key serialise as they do on SQLite; every segment carries the
full principal of its conversation; ending and freezing are first-writer-wins (``WHERE … IS NULL``).
Every time stored is the server's ``mg_now()``. Functions take the caller's connection so other
repositories call them inside their own transaction.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Sequence
from typing import Any

from ..errors import StateError, UnknownSegmentError
from ..records import ConversationRecord, ModelCall, NewSegment, Principal, SegmentRecord, TokenUsage
from .engine import Conn

SEGMENT_COLUMNS = (
    "id, conversation_id, parent_segment_id, system_prompt, model, started_at, ended_at, end_reason, "
    "input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost_usd, title, "
    "person_id, platform, user_id, chat_id, chat_type, thread_id, display_name, session_key"
)
CONVERSATION_COLUMNS = (
    "id, session_key, person_id, platform, title, created_at, ended_at, end_reason, tip_segment_id"
)
KEY_LOCK_SPACE = 0x6D67  # "mg": the first key of two-int advisory locks on a session key

_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"  # Crockford base32: no i, l, o, u
_CREATE_ATTEMPTS = 8

# One statement writes the conversation and its first segment, so neither can exist without the other;
# a conflict on the live key (another creator committed first) inserts neither row.
_CREATE = """WITH c AS (
    INSERT INTO conversations(id, session_key, person_id, platform, title, created_at, tip_segment_id)
    VALUES (%(cid)s, %(key)s, %(person_id)s, %(platform)s, %(title)s, mg_now(), %(sid)s)
    ON CONFLICT (session_key) WHERE ended_at IS NULL DO NOTHING
    RETURNING id, created_at)
INSERT INTO segments(id, conversation_id, parent_segment_id, session_key, person_id, platform, user_id,
    chat_id, chat_type, thread_id, display_name, system_prompt, model, title, started_at)
SELECT %(sid)s, c.id, NULL, %(key)s, %(person_id)s, %(platform)s, %(user_id)s, %(chat_id)s,
    %(chat_type)s, %(thread_id)s, %(display_name)s, %(system_prompt)s, %(model)s, %(title)s, c.created_at
FROM c"""


class LiveConversationChurnError(StateError):
    """Every attempt to create a key's live conversation lost to one that ended before it could be read."""

    def __init__(self, session_key: str, attempts: int) -> None:
        self.session_key = session_key
        super().__init__(
            f"the live conversation of {session_key!r} changed {attempts} times while opening it"
        )


def new_id(prefix: str) -> str:
    """A short unique id that sorts by creation time: 45 bits of milliseconds, then 50 random bits.

    The host clock only orders ids loosely; nothing compares them with stored times.
    """
    value = (int(time.time() * 1000) << 50) | secrets.randbits(50)
    chars = []
    for _ in range(19):
        value, digit = divmod(value, 32)
        chars.append(_ALPHABET[digit])
    return f"{prefix}_{''.join(reversed(chars))}"


def segment_from_row(row: Sequence[Any]) -> SegmentRecord:
    return SegmentRecord(
        id=str(row[0]),
        conversation_id=str(row[1]),
        parent_session_id=row[2],
        system_prompt=row[3],
        model=row[4],
        started_at=float(row[5]),
        ended_at=None if row[6] is None else float(row[6]),
        end_reason=row[7],
        usage=TokenUsage(int(row[8]), int(row[9]), int(row[10]), int(row[11]), float(row[12])),
        title=row[13],
        principal=Principal(row[14], row[15], row[16], row[17], row[18], row[19], row[20]),
        session_key=str(row[21]),
    )


def conversation_from_row(row: Sequence[Any]) -> ConversationRecord:
    return ConversationRecord(
        id=str(row[0]),
        session_key=str(row[1]),
        person_id=row[2],
        platform=row[3],
        title=row[4],
        created_at=float(row[5]),
        ended_at=None if row[6] is None else float(row[6]),
        end_reason=row[7],
        tip_session_id=str(row[8]),
    )


async def get_segment(conn: Conn, segment_id: str) -> SegmentRecord | None:
    cursor = await conn.execute(f"SELECT {SEGMENT_COLUMNS} FROM segments WHERE id = %s", (segment_id,))
    row = await cursor.fetchone()
    return None if row is None else segment_from_row(row)


async def segments(conn: Conn, conversation_id: str) -> list[SegmentRecord]:
    """Every segment of the conversation, oldest first (forks included, were there any)."""
    cursor = await conn.execute(
        f"SELECT {SEGMENT_COLUMNS} FROM segments WHERE conversation_id = %s ORDER BY started_at, id",
        (conversation_id,),
    )
    return [segment_from_row(row) for row in await cursor.fetchall()]


async def get_conversation(conn: Conn, conversation_id: str) -> ConversationRecord | None:
    cursor = await conn.execute(
        f"SELECT {CONVERSATION_COLUMNS} FROM conversations WHERE id = %s", (conversation_id,)
    )
    row = await cursor.fetchone()
    return None if row is None else conversation_from_row(row)


async def live_conversation(conn: Conn, session_key: str) -> ConversationRecord | None:
    cursor = await conn.execute(
        f"SELECT {CONVERSATION_COLUMNS} FROM conversations WHERE session_key = %s AND ended_at IS NULL",
        (session_key,),
    )
    row = await cursor.fetchone()
    return None if row is None else conversation_from_row(row)


async def insert_segment(
    conn: Conn,
    *,
    segment_id: str,
    conversation_id: str,
    parent_session_id: str | None,
    session_key: str,
    principal: Principal,
    spec: NewSegment,
    started_at: float | None = None,
) -> SegmentRecord | None:
    """Insert one segment (``started_at`` defaults to the server's now); the record, or None when the
    parent already has a child (the unique index ``segments_one_child``: the chain never forks)."""
    cursor = await conn.execute(
        "INSERT INTO segments(id, conversation_id, parent_segment_id, session_key, person_id, platform, "
        "user_id, chat_id, chat_type, thread_id, display_name, system_prompt, model, title, started_at) "
        "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, COALESCE(%s, mg_now())) "
        "ON CONFLICT (parent_segment_id) WHERE parent_segment_id IS NOT NULL DO NOTHING "
        f"RETURNING {SEGMENT_COLUMNS}",
        (
            segment_id,
            conversation_id,
            parent_session_id,
            session_key,
            principal.person_id,
            principal.platform,
            principal.user_id,
            principal.chat_id,
            principal.chat_type,
            principal.thread_id,
            principal.display_name,
            spec.system_prompt,
            spec.model,
            spec.title,
            started_at,
        ),
    )
    row = await cursor.fetchone()
    return None if row is None else segment_from_row(row)


async def ensure_conversation(
    conn: Conn, session_key: str, principal: Principal, spec: NewSegment
) -> tuple[ConversationRecord, bool]:
    """The live conversation for ``session_key``, creating it (with its first segment) if there is none.

    True when this call created it. A creator that loses the race on the live key returns the winner's
    conversation (read committed: the next statement sees the row whose commit the conflict waited for).
    """
    for _ in range(_CREATE_ATTEMPTS):
        existing = await live_conversation(conn, session_key)
        if existing is not None:
            return existing, False
        conversation_id = new_id("cv")
        cursor = await conn.execute(_CREATE, _create_params(conversation_id, session_key, principal, spec))
        if cursor.rowcount == 1:
            record = await get_conversation(conn, conversation_id)
            assert record is not None
            return record, True
    # Each lost attempt means another conversation for the key was created and ended meanwhile.
    raise LiveConversationChurnError(session_key, _CREATE_ATTEMPTS)


def _create_params(
    conversation_id: str, session_key: str, principal: Principal, spec: NewSegment
) -> dict[str, Any]:
    return {
        "cid": conversation_id,
        "sid": new_id("sg"),
        "key": session_key,
        "person_id": principal.person_id,
        "platform": principal.platform,
        "user_id": principal.user_id,
        "chat_id": principal.chat_id,
        "chat_type": principal.chat_type,
        "thread_id": principal.thread_id,
        "display_name": principal.display_name,
        "system_prompt": spec.system_prompt,
        "model": spec.model,
        "title": spec.title,
    }


async def end_conversation(conn: Conn, conversation_id: str, reason: str) -> bool:
    """End the conversation and its tip segment; False when it had already ended (first writer wins)."""
    cursor = await conn.execute(
        "UPDATE conversations SET ended_at = mg_now(), end_reason = %s "
        "WHERE id = %s AND ended_at IS NULL RETURNING tip_segment_id, ended_at",
        (reason, conversation_id),
    )
    row = await cursor.fetchone()
    if row is None:
        return False
    await conn.execute(
        "UPDATE segments SET ended_at = %s, end_reason = %s WHERE id = %s AND ended_at IS NULL",
        (row[1], reason, row[0]),
    )
    return True


async def lock_session_key(conn: Conn, session_key: str) -> None:
    """Hold the key's advisory lock until the transaction ends (serialises replacing its conversation)."""
    await conn.execute("SELECT pg_advisory_xact_lock(%s, hashtext(%s))", (KEY_LOCK_SPACE, session_key))


async def start_new_conversation(
    conn: Conn, session_key: str, principal: Principal, spec: NewSegment, reason: str
) -> ConversationRecord:
    """End the key's live conversation (if any) with ``reason`` and start a fresh one, atomically.

    Holds the key's advisory lock first, so a racing replacement of the same key waits and then
    replaces this one's conversation in turn, as SQLite's single writer would order them.
    """
    await lock_session_key(conn, session_key)
    current = await live_conversation(conn, session_key)
    if current is not None:
        await end_conversation(conn, current.id, reason)
    record, _ = await ensure_conversation(conn, session_key, principal, spec)
    return record


async def freeze_system_prompt(conn: Conn, segment_id: str, prompt: str) -> str:
    """Store ``prompt`` as the segment's system prompt unless one is already frozen; return the frozen one."""
    cursor = await conn.execute(
        "UPDATE segments SET system_prompt = COALESCE(system_prompt, %s) WHERE id = %s "
        "RETURNING system_prompt",
        (prompt, segment_id),
    )
    row = await cursor.fetchone()
    if row is None:
        raise UnknownSegmentError(segment_id)
    return str(row[0])


async def add_usage(conn: Conn, segment_id: str, call: ModelCall) -> None:
    """Add ``call``'s tokens and known cost to the segment's counters (this also takes the segment's row
    lock) and log the call (``usage_log``) with its model, kind, cost and the person and platform of the
    segment's conversation."""
    tokens = call.tokens()
    cursor = await conn.execute(
        "UPDATE segments SET input_tokens = input_tokens + %s, output_tokens = output_tokens + %s, "
        "cache_read_tokens = cache_read_tokens + %s, cache_write_tokens = cache_write_tokens + %s, "
        "cost_usd = cost_usd + %s WHERE id = %s RETURNING conversation_id",
        (
            tokens.input_tokens,
            tokens.output_tokens,
            tokens.cache_read_tokens,
            tokens.cache_write_tokens,
            tokens.cost_usd,
            segment_id,
        ),
    )
    row = await cursor.fetchone()
    if row is None:
        raise UnknownSegmentError(segment_id)
    if not call.spent_nothing:
        await conn.execute(
            "INSERT INTO usage_log(at, segment_id, conversation_id, input_tokens, output_tokens, "
            "cache_read_tokens, cache_write_tokens, cost_usd, model, kind, person_id, platform) "
            "SELECT mg_now(), %s, c.id, %s, %s, %s, %s, %s, %s, %s, c.person_id, c.platform "
            "FROM conversations c WHERE c.id = %s",
            (
                segment_id,
                call.input_tokens,
                call.output_tokens,
                call.cache_read_tokens,
                call.cache_write_tokens,
                call.cost_usd,
                call.model,
                str(call.kind),
                row[0],
            ),
        )


async def tip_segment_id(conn: Conn, conversation_id: str) -> str:
    """The id of the conversation's tip segment; UnknownSegmentError for an unknown conversation."""
    cursor = await conn.execute("SELECT tip_segment_id FROM conversations WHERE id = %s", (conversation_id,))
    row = await cursor.fetchone()
    if row is None:
        raise UnknownSegmentError(conversation_id)
    return str(row[0])
