"""Compression-chain primitives: the atomic segment switch, tip resolution and root-to-tip lineage.

Invariants: a conversation has exactly one tip; the switch (end parent with ``compression``, create the
child with the parent's principal, write the child's first messages and the carried-over ones, move the
tip) happens in ONE write transaction and is refused — not forked — when the parent has already ended; a
unique index on ``sessions.parent_session_id`` backs this at the database level. Carry-over compares the
parent's ids with the set the caller saw (``agent_core.storage.CompressionChain``), never with a maximum.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Collection, Sequence

from ..errors import UnknownSegmentError
from ..messages import SegmentHistory
from ..records import AlreadyCompressed, Compressed, CompressionResult, EndReason, NewSegment, SegmentRecord
from .conversations import (
    SEGMENT_COLUMNS,
    get_segment,
    insert_segment,
    new_id,
    segment_from_row,
    tip_segment_id,
)
from .messages import PreparedMessage, insert_messages, segment_messages

_MAX_DEPTH = 100_000
_COPIED = (
    "conversation_id, role, content, tool_calls, tool_call_id, tool_name, reasoning, author, "
    "platform_message_id, api_content, created_at"
)


def compress(
    conn: sqlite3.Connection,
    parent_segment_id: str,
    spec: NewSegment,
    messages: Sequence[PreparedMessage],
    now: float,
    seen: Collection[int] | None = None,
) -> CompressionResult:
    """Switch ``parent_segment_id`` to a new child segment; call inside one write transaction.

    ``seen`` holds the ids of the parent messages the compression plan read: every other message of the
    parent (one stored while the summary was written) is carried over after ``messages``, in order.
    """
    parent = get_segment(conn, parent_segment_id)
    if parent is None:
        raise UnknownSegmentError(parent_segment_id)
    tip = tip_segment_id(conn, parent.conversation_id)
    if parent.ended_at is not None or tip != parent.id:
        return AlreadyCompressed(parent.id, parent.end_reason, tip)
    conn.execute(
        "UPDATE sessions SET ended_at = ?, end_reason = ? WHERE id = ? AND ended_at IS NULL",
        (now, EndReason.COMPRESSION.value, parent.id),
    )
    child_id = new_id("sg")
    insert_segment(
        conn,
        segment_id=child_id,
        conversation_id=parent.conversation_id,
        parent_session_id=parent.id,
        session_key=parent.session_key,
        principal=parent.principal,
        spec=spec,
        now=now,
    )
    ids = insert_messages(conn, child_id, parent.conversation_id, messages)
    if seen is not None:
        ids += _carry_over(conn, parent, child_id, seen)
    conn.execute(
        "UPDATE conversations SET tip_session_id = ? WHERE id = ?", (child_id, parent.conversation_id)
    )
    child = get_segment(conn, child_id)
    assert child is not None
    return Compressed(parent.id, child, tuple(ids))


def _carry_over(
    conn: sqlite3.Connection, parent: SegmentRecord, child_id: str, seen: Collection[int]
) -> list[int]:
    """Copy the parent's messages whose ids are not in ``seen`` to the end of the child; their new ids."""
    rows = conn.execute(
        "SELECT id FROM messages WHERE conversation_id = ? AND session_id = ? ORDER BY id",
        (parent.conversation_id, parent.id),
    )
    known = frozenset(seen)
    unseen = [int(row[0]) for row in rows if int(row[0]) not in known]
    copied: list[int] = []
    for message_id in unseen:
        cursor = conn.execute(
            f"INSERT INTO messages (session_id, {_COPIED}) SELECT ?, {_COPIED} FROM messages WHERE id = ?",
            (child_id, message_id),
        )
        copied.append(int(cursor.lastrowid or 0))
    return copied


def conversation_id_of(conn: sqlite3.Connection, segment_or_conversation_id: str) -> str:
    """The conversation named by a segment id or a conversation id."""
    row = conn.execute(
        "SELECT conversation_id FROM sessions WHERE id = ?", (segment_or_conversation_id,)
    ).fetchone()
    if row is not None:
        return str(row[0])
    row = conn.execute("SELECT id FROM conversations WHERE id = ?", (segment_or_conversation_id,)).fetchone()
    if row is None:
        raise UnknownSegmentError(segment_or_conversation_id)
    return str(row[0])


def resolve_tip(conn: sqlite3.Connection, segment_or_conversation_id: str) -> SegmentRecord:
    """The current tip segment of the conversation that the given id belongs to."""
    conversation_id = conversation_id_of(conn, segment_or_conversation_id)
    tip = get_segment(conn, tip_segment_id(conn, conversation_id))
    if tip is None:
        raise UnknownSegmentError(segment_or_conversation_id)
    return tip


def tip_history(conn: sqlite3.Connection, segment_or_conversation_id: str) -> SegmentHistory:
    """The tip segment of the conversation the id belongs to, with its messages (one read transaction)."""
    tip = resolve_tip(conn, segment_or_conversation_id)
    return SegmentHistory(tip, tuple(segment_messages(conn, tip.id)))


def lineage(conn: sqlite3.Connection, segment_or_conversation_id: str) -> list[SegmentRecord]:
    """The conversation's segments from the root to the tip, following parent links."""
    tip = resolve_tip(conn, segment_or_conversation_id)
    cursor = conn.execute(
        "WITH RECURSIVE chain(id, depth) AS ("
        " SELECT ?, 0"
        " UNION ALL SELECT s.parent_session_id, chain.depth + 1"
        " FROM sessions AS s JOIN chain ON s.id = chain.id"
        " WHERE s.parent_session_id IS NOT NULL AND chain.depth < ?)"
        f" SELECT {', '.join('s.' + c.strip() for c in SEGMENT_COLUMNS.split(','))}"
        " FROM chain JOIN sessions AS s ON s.id = chain.id ORDER BY chain.depth DESC",
        (tip.id, _MAX_DEPTH),
    )
    return [segment_from_row(row) for row in cursor.fetchall()]
