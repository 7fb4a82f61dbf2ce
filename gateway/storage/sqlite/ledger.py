"""The inbound ledger: which platform events the gateway has already accepted.

Invariant: ``(platform, event_id)`` is UNIQUE, so inserting the row is the real dedupe guard — a platform
retry of an event whose row committed is refused, whichever process receives it. ``seen`` is only a fast
pre-check on a reader connection.
"""

from __future__ import annotations

import sqlite3


def record_event(
    conn: sqlite3.Connection,
    platform: str,
    event_id: str,
    *,
    kind: str,
    now: float,
    conversation_id: str | None = None,
) -> bool:
    """Insert the ledger row inside the caller's transaction; False when the event was already recorded."""
    cursor = conn.execute(
        "INSERT OR IGNORE INTO inbound_events(platform, event_id, conversation_id, received_at, kind) "
        "VALUES (?, ?, ?, ?, ?)",
        (platform, event_id, conversation_id, now, kind),
    )
    return cursor.rowcount == 1


def set_event_conversation(
    conn: sqlite3.Connection, platform: str, event_id: str, conversation_id: str
) -> None:
    conn.execute(
        "UPDATE inbound_events SET conversation_id = ? WHERE platform = ? AND event_id = ?",
        (conversation_id, platform, event_id),
    )


def seen(conn: sqlite3.Connection, platform: str, event_id: str) -> bool:
    """Whether the event is already in the ledger (a read; the unique insert stays the real guard)."""
    row = conn.execute(
        "SELECT 1 FROM inbound_events WHERE platform = ? AND event_id = ?", (platform, event_id)
    ).fetchone()
    return row is not None
