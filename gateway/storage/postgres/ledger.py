"""The inbound ledger on PostgreSQL: which platform events the gateway has already accepted.

Invariant: ``(platform, event_id)`` is the primary key, so inserting the row is the real dedupe guard: a
second insert of one event waits for the first transaction and then does nothing (``ON CONFLICT DO
NOTHING``), so exactly one of any number of hosts recording an event at once sees it as new. ``seen`` is
only a fast pre-check. ``received_at`` is the server's clock (``mg_now()``).
"""

from __future__ import annotations

from agent_core.storage.postgres.engine import Conn


async def record_event(
    conn: Conn, platform: str, event_id: str, *, kind: str, conversation_id: str | None = None
) -> bool:
    """Insert the ledger row inside the caller's transaction; False when the event was already recorded."""
    cursor = await conn.execute(
        "INSERT INTO inbound_events(platform, event_id, conversation_id, received_at, kind) "
        "VALUES (%s, %s, %s, mg_now(), %s) ON CONFLICT (platform, event_id) DO NOTHING",
        (platform, event_id, conversation_id, kind),
    )
    return cursor.rowcount == 1


async def set_event_conversation(conn: Conn, platform: str, event_id: str, conversation_id: str) -> None:
    await conn.execute(
        "UPDATE inbound_events SET conversation_id = %s WHERE platform = %s AND event_id = %s",
        (conversation_id, platform, event_id),
    )


async def seen(conn: Conn, platform: str, event_id: str) -> bool:
    """Whether the event is already in the ledger (a read; the unique insert stays the real guard)."""
    cursor = await conn.execute(
        "SELECT 1 FROM inbound_events WHERE platform = %s AND event_id = %s", (platform, event_id)
    )
    return await cursor.fetchone() is not None
