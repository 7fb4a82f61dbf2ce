"""The compression chain on PostgreSQL: the atomic segment switch, tip resolution and root-to-tip lineage.

Invariants: a conversation has exactly one tip; the switch (create the child with the parent's principal,
end the parent with ``compression``, write the child's first messages and the carried-over ones, move the
tip) happens in ONE transaction and is refused — nothing written, ``AlreadyCompressed`` — when the parent
has ended or is not the tip. Locks, in the order every writer of this backend takes them: the
conversation's row (as the turn queue does before it moves held messages into the tip), then the parent
segment's row (as every append does before it inserts), so an append either commits before the switch and
is carried over, or finds the parent ended and lands in the child. The unique index
``segments_one_child`` backs it in the database: a second child is never inserted (``ON CONFLICT DO
NOTHING``, then the refusal). Carry-over compares the parent's ids with the set the caller saw, never
with a maximum.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from ..errors import UnknownSegmentError
from ..messages import SegmentHistory
from ..records import AlreadyCompressed, Compressed, CompressionResult, EndReason, NewSegment, SegmentRecord
from .conversations import SEGMENT_COLUMNS, insert_segment, new_id, segment_from_row
from .engine import Conn
from .messages import PreparedMessage, insert_locked, segment_messages

_MAX_DEPTH = 100_000
_COPIED = (
    "conversation_id, role, content, tool_calls, tool_call_id, tool_name, reasoning, author, "
    "platform_message_id, api_content, created_at"
)
_S_COLUMNS = ", ".join("s." + column.strip() for column in SEGMENT_COLUMNS.split(","))


async def compress(
    conn: Conn,
    parent_segment_id: str,
    spec: NewSegment,
    messages: Sequence[PreparedMessage],
    seen: Collection[int] | None = None,
) -> CompressionResult:
    """Switch ``parent_segment_id`` to a new child segment; call inside one write transaction.

    ``seen`` holds the ids of the parent messages the compression plan read: every other message of the
    parent (one stored while the summary was written) is carried over after ``messages``, in order.
    """
    cursor = await conn.execute(
        "SELECT id, tip_segment_id FROM conversations "
        "WHERE id = (SELECT conversation_id FROM segments WHERE id = %s) FOR UPDATE",
        (parent_segment_id,),
    )
    locked = await cursor.fetchone()
    if locked is None:
        raise UnknownSegmentError(parent_segment_id)
    conversation_id, tip = str(locked[0]), str(locked[1])
    cursor = await conn.execute(
        f"SELECT {SEGMENT_COLUMNS} FROM segments WHERE id = %s FOR UPDATE", (parent_segment_id,)
    )
    row = await cursor.fetchone()
    if row is None:
        raise UnknownSegmentError(parent_segment_id)
    parent = segment_from_row(row)
    if parent.ended_at is not None or tip != parent.id:
        return AlreadyCompressed(parent.id, parent.end_reason, tip)
    child = await insert_segment(
        conn,
        segment_id=new_id("sg"),
        conversation_id=conversation_id,
        parent_session_id=parent.id,
        session_key=parent.session_key,
        principal=parent.principal,
        spec=spec,
    )
    if child is None:  # a child exists already (written by someone who bypassed the locks): never fork
        return AlreadyCompressed(parent.id, parent.end_reason, tip)
    await conn.execute(
        "UPDATE segments SET ended_at = %s, end_reason = %s WHERE id = %s AND ended_at IS NULL",
        (child.started_at, EndReason.COMPRESSION.value, parent.id),
    )
    ids = await insert_locked(conn, child.id, conversation_id, messages)
    if seen is not None:
        ids += await _carry_over(conn, parent, child.id, seen)
    await conn.execute(
        "UPDATE conversations SET tip_segment_id = %s WHERE id = %s", (child.id, conversation_id)
    )
    return Compressed(parent.id, child, tuple(ids))


async def _carry_over(conn: Conn, parent: SegmentRecord, child_id: str, seen: Collection[int]) -> list[int]:
    """Copy the parent's messages whose ids are not in ``seen`` to the end of the child; their new ids."""
    cursor = await conn.execute(
        "SELECT id FROM messages WHERE conversation_id = %s AND segment_id = %s ORDER BY id",
        (parent.conversation_id, parent.id),
    )
    known = frozenset(seen)
    unseen = [int(row[0]) for row in await cursor.fetchall() if int(row[0]) not in known]
    if not unseen:
        return []
    copied: list[int] = []
    async with conn.cursor() as copier:
        await copier.executemany(
            f"INSERT INTO messages (segment_id, {_COPIED}) SELECT %s, {_COPIED} FROM messages WHERE id = %s "
            "RETURNING id",
            [(child_id, message_id) for message_id in unseen],
            returning=True,
        )
        while True:
            found = await copier.fetchone()
            if found is not None:
                copied.append(int(found[0]))
            if not copier.nextset():
                break
    return copied


async def conversation_id_of(conn: Conn, segment_or_conversation_id: str) -> str:
    """The conversation named by a segment id or a conversation id."""
    cursor = await conn.execute(
        "SELECT conversation_id FROM segments WHERE id = %s "
        "UNION ALL SELECT id FROM conversations WHERE id = %s LIMIT 1",
        (segment_or_conversation_id, segment_or_conversation_id),
    )
    row = await cursor.fetchone()
    if row is None:
        raise UnknownSegmentError(segment_or_conversation_id)
    return str(row[0])


async def resolve_tip(conn: Conn, segment_or_conversation_id: str) -> SegmentRecord:
    """The current tip segment of the conversation that the given id belongs to (one statement)."""
    cursor = await conn.execute(
        f"SELECT {_S_COLUMNS} FROM conversations c JOIN segments s ON s.id = c.tip_segment_id "
        "WHERE c.id = COALESCE((SELECT conversation_id FROM segments WHERE id = %s), %s)",
        (segment_or_conversation_id, segment_or_conversation_id),
    )
    row = await cursor.fetchone()
    if row is None:
        raise UnknownSegmentError(segment_or_conversation_id)
    return segment_from_row(row)


async def tip_history(conn: Conn, segment_or_conversation_id: str) -> SegmentHistory:
    """The tip segment of the conversation the id belongs to, with its messages (call in one read)."""
    tip = await resolve_tip(conn, segment_or_conversation_id)
    return SegmentHistory(tip, tuple(await segment_messages(conn, tip.id)))


async def lineage(conn: Conn, segment_or_conversation_id: str) -> list[SegmentRecord]:
    """The conversation's segments from the root to the tip, following parent links."""
    tip = await resolve_tip(conn, segment_or_conversation_id)
    cursor = await conn.execute(
        "WITH RECURSIVE chain(id, depth) AS ("
        " SELECT %s::text, 0"
        " UNION ALL SELECT s.parent_segment_id, chain.depth + 1"
        " FROM segments AS s JOIN chain ON s.id = chain.id"
        " WHERE s.parent_segment_id IS NOT NULL AND chain.depth < %s)"
        f" SELECT {_S_COLUMNS} FROM chain JOIN segments AS s ON s.id = chain.id ORDER BY chain.depth DESC",
        (tip.id, _MAX_DEPTH),
    )
    return [segment_from_row(row) for row in await cursor.fetchall()]
