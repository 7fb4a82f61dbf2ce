"""Conversations and their segments: creating, ending, replacing, accounting, and mapping rows to records.

Invariants: a conversation keeps one id for its whole life and always names an existing tip segment; at
most one live conversation exists per session key (a unique partial index); every segment carries the
full principal of its conversation; ending is first-writer-wins (``WHERE ended_at IS NULL``).
"""

from __future__ import annotations

import secrets
import sqlite3
import time
from collections.abc import Sequence
from typing import Any

from ..audit import MemoryAuditRecord
from ..errors import UnknownSegmentError
from ..records import ConversationRecord, ModelCall, NewSegment, Principal, SegmentRecord, TokenUsage

SEGMENT_COLUMNS = (
    "id, conversation_id, parent_session_id, system_prompt, model, started_at, ended_at, end_reason, "
    "input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost_usd, title, "
    "person_id, platform, user_id, chat_id, chat_type, thread_id, display_name, session_key"
)
CONVERSATION_COLUMNS = (
    "id, session_key, person_id, platform, title, created_at, ended_at, end_reason, tip_session_id"
)


_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"  # Crockford base32: no i, l, o, u


def new_id(prefix: str) -> str:
    """A short unique id that sorts by creation time: 45 bits of milliseconds, then 50 random bits."""
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
        ended_at=row[6],
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
        ended_at=row[6],
        end_reason=row[7],
        tip_session_id=str(row[8]),
    )


def get_segment(conn: sqlite3.Connection, segment_id: str) -> SegmentRecord | None:
    row = conn.execute(f"SELECT {SEGMENT_COLUMNS} FROM sessions WHERE id = ?", (segment_id,)).fetchone()
    return None if row is None else segment_from_row(row)


def segments(conn: sqlite3.Connection, conversation_id: str) -> list[SegmentRecord]:
    """Every segment of the conversation, oldest first (forks included, were there any)."""
    rows = conn.execute(
        f"SELECT {SEGMENT_COLUMNS} FROM sessions WHERE conversation_id = ? ORDER BY started_at, id",
        (conversation_id,),
    ).fetchall()
    return [segment_from_row(row) for row in rows]


def get_conversation(conn: sqlite3.Connection, conversation_id: str) -> ConversationRecord | None:
    row = conn.execute(
        f"SELECT {CONVERSATION_COLUMNS} FROM conversations WHERE id = ?", (conversation_id,)
    ).fetchone()
    return None if row is None else conversation_from_row(row)


def live_conversation(conn: sqlite3.Connection, session_key: str) -> ConversationRecord | None:
    row = conn.execute(
        f"SELECT {CONVERSATION_COLUMNS} FROM conversations WHERE session_key = ? AND ended_at IS NULL",
        (session_key,),
    ).fetchone()
    return None if row is None else conversation_from_row(row)


def insert_segment(
    conn: sqlite3.Connection,
    *,
    segment_id: str,
    conversation_id: str,
    parent_session_id: str | None,
    session_key: str,
    principal: Principal,
    spec: NewSegment,
    now: float,
) -> None:
    conn.execute(
        "INSERT INTO sessions(id, conversation_id, parent_session_id, session_key, person_id, platform, "
        "user_id, chat_id, chat_type, thread_id, display_name, system_prompt, model, title, started_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
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
            now,
        ),
    )


def ensure_conversation(
    conn: sqlite3.Connection, session_key: str, principal: Principal, spec: NewSegment, now: float
) -> tuple[ConversationRecord, bool]:
    """The live conversation for ``session_key``, creating it (with its first segment) if there is none."""
    existing = live_conversation(conn, session_key)
    if existing is not None:
        return existing, False
    conversation_id = new_id("cv")
    segment_id = new_id("sg")
    conn.execute(
        "INSERT INTO conversations(id, session_key, person_id, platform, title, created_at, tip_session_id) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        (conversation_id, session_key, principal.person_id, principal.platform, spec.title, now, segment_id),
    )
    insert_segment(
        conn,
        segment_id=segment_id,
        conversation_id=conversation_id,
        parent_session_id=None,
        session_key=session_key,
        principal=principal,
        spec=spec,
        now=now,
    )
    record = get_conversation(conn, conversation_id)
    assert record is not None
    return record, True


def end_conversation(conn: sqlite3.Connection, conversation_id: str, reason: str, now: float) -> bool:
    """End the conversation and its tip segment; False when it had already ended (first writer wins)."""
    cursor = conn.execute(
        "UPDATE conversations SET ended_at = ?, end_reason = ? WHERE id = ? AND ended_at IS NULL",
        (now, reason, conversation_id),
    )
    if cursor.rowcount == 0:
        return False
    conn.execute(
        "UPDATE sessions SET ended_at = ?, end_reason = ? WHERE id = "
        "(SELECT tip_session_id FROM conversations WHERE id = ?) AND ended_at IS NULL",
        (now, reason, conversation_id),
    )
    return True


def start_new_conversation(
    conn: sqlite3.Connection,
    session_key: str,
    principal: Principal,
    spec: NewSegment,
    reason: str,
    now: float,
) -> ConversationRecord:
    """End the key's live conversation (if any) with ``reason`` and start a fresh one, atomically."""
    current = live_conversation(conn, session_key)
    if current is not None:
        end_conversation(conn, current.id, reason, now)
    record, _ = ensure_conversation(conn, session_key, principal, spec, now)
    return record


def freeze_system_prompt(conn: sqlite3.Connection, segment_id: str, prompt: str) -> str:
    """Store ``prompt`` as the segment's system prompt unless one is already frozen; return the frozen one."""
    conn.execute(
        "UPDATE sessions SET system_prompt = ? WHERE id = ? AND system_prompt IS NULL", (prompt, segment_id)
    )
    row = conn.execute("SELECT system_prompt FROM sessions WHERE id = ?", (segment_id,)).fetchone()
    if row is None:
        raise UnknownSegmentError(segment_id)
    return str(row[0])


def add_usage(conn: sqlite3.Connection, segment_id: str, call: ModelCall) -> None:
    """Add ``call``'s tokens and known cost to the segment's counters and log the call (``usage_log``) with
    its model, kind, cost and the person and platform of the segment's conversation."""
    tokens = call.tokens()
    cursor = conn.execute(
        "UPDATE sessions SET input_tokens = input_tokens + ?, output_tokens = output_tokens + ?, "
        "cache_read_tokens = cache_read_tokens + ?, cache_write_tokens = cache_write_tokens + ?, "
        "cost_usd = cost_usd + ? WHERE id = ?",
        (
            tokens.input_tokens,
            tokens.output_tokens,
            tokens.cache_read_tokens,
            tokens.cache_write_tokens,
            tokens.cost_usd,
            segment_id,
        ),
    )
    if cursor.rowcount == 0:
        raise UnknownSegmentError(segment_id)
    if not call.spent_nothing:
        # One row per model call, so usage can be summed over any time range and grouped by who spent it.
        conn.execute(
            "INSERT INTO usage_log(at, session_id, conversation_id, input_tokens, output_tokens, "
            "cache_read_tokens, cache_write_tokens, cost_usd, model, kind, person_id, platform) "
            "SELECT ?, s.id, s.conversation_id, ?, ?, ?, ?, ?, ?, ?, c.person_id, c.platform "
            "FROM sessions s JOIN conversations c ON c.id = s.conversation_id WHERE s.id = ?",
            (
                time.time(),
                call.input_tokens,
                call.output_tokens,
                call.cache_read_tokens,
                call.cache_write_tokens,
                call.cost_usd,
                call.model,
                str(call.kind),
                segment_id,
            ),
        )


def record_memory_audit(
    conn: sqlite3.Connection,
    *,
    at: float,
    person_id: str | None,
    conversation_id: str | None,
    actor: str,
    store: str,
    action: str,
    old_text: str | None,
    new_text: str | None,
) -> None:
    conn.execute(
        "INSERT INTO memory_audit(at, person_id, conversation_id, actor, store, action, old_text, new_text) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (at, person_id, conversation_id, actor, store, action, old_text, new_text),
    )


_AUDIT_PAGE = 500


def memory_audit(conn: sqlite3.Connection, person_id: str, limit: int) -> list[MemoryAuditRecord]:
    """The person's memory audit records, newest first."""
    rows = conn.execute(
        "SELECT id, at, person_id, conversation_id, actor, store, action, old_text, new_text "
        "FROM memory_audit WHERE person_id = ? ORDER BY at DESC, id DESC LIMIT ?",
        (person_id, max(1, min(limit, _AUDIT_PAGE))),
    ).fetchall()
    return [
        MemoryAuditRecord(int(r[0]), float(r[1]), r[2], r[3], str(r[4]), str(r[5]), str(r[6]), r[7], r[8])
        for r in rows
    ]


def tip_segment_id(conn: sqlite3.Connection, conversation_id: str) -> str:
    """The id of the conversation's tip segment; UnknownSegmentError for an unknown conversation."""
    row = conn.execute("SELECT tip_session_id FROM conversations WHERE id = ?", (conversation_id,)).fetchone()
    if row is None:
        raise UnknownSegmentError(conversation_id)
    return str(row[0])
