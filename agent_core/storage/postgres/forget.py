"""Forgetting conversations on PostgreSQL: their rows, and the search rows derived from them, in one
transaction.

Invariants: the words and trigrams live in the message rows themselves (a generated ``tsvector`` and GIN
indexes, search_ddl.py), so deleting a message removes its index entries in the same transaction; the
transaction first takes the window builder's lock (``WINDOW_LOCK``, blocking) and the segment rows
``FOR UPDATE`` (which every append locks first), so no window batch or append that read the messages
before can write after them; usage rows keep their numbers with ``FORGOTTEN`` for their links.
PostgreSQL keeps a deleted row's bytes in its heap page until (auto)vacuum reclaims it and in the WAL
until the WAL is recycled; no SQL can read them, and docs/operations.md says how long they last.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import LiteralString

from ..forgetting import FORGOTTEN, ForgottenConversations
from .engine import Conn
from .window_builder import WINDOW_LOCK

_DERIVED: tuple[LiteralString, ...] = (
    "DELETE FROM search_windows WHERE conversation_id = ANY(%s)",
    "DELETE FROM search_participants WHERE conversation_id = ANY(%s)",
    "DELETE FROM search_open_segments WHERE conversation_id = ANY(%s)",
    "DELETE FROM compression_cooldowns WHERE conversation_id = ANY(%s)",
)


async def delete_conversations(conn: Conn, conversation_ids: Collection[str]) -> ForgottenConversations:
    """Delete the conversations with their segments, messages, search windows and cooldowns, and unlink
    their usage rows; call inside one write transaction."""
    ids = sorted(set(conversation_ids))
    await conn.execute("SELECT pg_advisory_xact_lock(%s)", (WINDOW_LOCK,))
    await conn.execute(
        "SELECT id FROM segments WHERE conversation_id = ANY(%s) ORDER BY id FOR UPDATE", (ids,)
    )
    usage = await conn.execute(
        "UPDATE usage_log SET conversation_id = %s, segment_id = %s WHERE conversation_id = ANY(%s)",
        (FORGOTTEN, FORGOTTEN, ids),
    )
    await conn.execute(
        "DELETE FROM search_window_vectors WHERE window_id IN "
        "(SELECT id FROM search_windows WHERE conversation_id = ANY(%s))",
        (ids,),
    )
    for statement in _DERIVED:
        await conn.execute(statement, (ids,))
    messages = await conn.execute("DELETE FROM messages WHERE conversation_id = ANY(%s)", (ids,))
    segments = await conn.execute("DELETE FROM segments WHERE conversation_id = ANY(%s)", (ids,))
    conversations = await conn.execute("DELETE FROM conversations WHERE id = ANY(%s)", (ids,))
    return ForgottenConversations(
        conversations=max(conversations.rowcount, 0),
        segments=max(segments.rowcount, 0),
        messages=max(messages.rowcount, 0),
        usage_rows_unlinked=max(usage.rowcount, 0),
    )


# The person's user messages, each with the rest of its turn (see agent_core/storage/forgetting.py).
_AUTHORED_TURNS: LiteralString = """
    WITH mine AS (SELECT id, segment_id FROM messages WHERE author = %s AND role = 'user'),
    turns AS (SELECT mine.id AS start, mine.segment_id AS segment,
        (SELECT min(n.id) FROM messages n WHERE n.segment_id = mine.segment_id AND n.role = 'user'
            AND n.id > mine.id) AS stop FROM mine)
    SELECT DISTINCT m.id FROM turns JOIN messages m ON m.segment_id = turns.segment AND m.id >= turns.start
        AND (turns.stop IS NULL OR m.id < turns.stop) AND (m.id = turns.start OR m.role <> 'user')"""


async def delete_authored_turns(conn: Conn, person_id: str) -> int:
    """Delete the person's remaining user messages with their turns, and the search windows holding any
    of them; call inside one write transaction."""
    await conn.execute("SELECT pg_advisory_xact_lock(%s)", (WINDOW_LOCK,))
    await conn.execute(
        "SELECT id FROM segments WHERE id IN (SELECT segment_id FROM messages WHERE author = %s "
        "AND role = 'user') ORDER BY id FOR UPDATE",
        (person_id,),
    )
    ids = [int(r[0]) for r in await (await conn.execute(_AUTHORED_TURNS, (person_id,))).fetchall()]
    if not ids:
        return 0
    await conn.execute(
        "DELETE FROM search_window_vectors WHERE window_id IN "
        "(SELECT id FROM search_windows WHERE message_ids && %s::bigint[])",
        (ids,),
    )
    await conn.execute("DELETE FROM search_windows WHERE message_ids && %s::bigint[]", (ids,))
    deleted = await conn.execute("DELETE FROM messages WHERE id = ANY(%s)", (ids,))
    return max(deleted.rowcount, 0)


async def blank_audit_texts(conn: Conn, person_id: str) -> int:
    """Blank the old/new texts of the person's memory audit records; call inside one write transaction."""
    cursor = await conn.execute(
        "UPDATE memory_audit SET old_text = NULL, new_text = NULL WHERE person_id = %s "
        "AND (old_text IS NOT NULL OR new_text IS NOT NULL)",
        (person_id,),
    )
    return max(cursor.rowcount, 0)
