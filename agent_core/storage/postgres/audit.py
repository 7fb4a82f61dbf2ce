"""The memory audit trail and compression cooldowns on PostgreSQL.

Invariants: audit rows are only inserted, never edited, stamped with the server's ``mg_now()``, and read
newest first (``at``, then id) at most ``_AUDIT_PAGE`` at a time. A cooldown is one typed row per
conversation in ``compression_cooldowns`` (the port's ``agent_core.storage.cooldowns``); every ``put``
replaces it and, in the same transaction, deletes at most ``_SWEEP_LIMIT`` records that can no longer
matter: of an ended or missing conversation, of a segment that is no longer the tip, and those whose
``until`` is more than ``FORGET_AFTER_S`` before the new record's (rows another sweep holds are skipped,
so two puts never wait on each other's sweep). Cooldown times are the compressor's
and are compared only with each other, never with the server's clock.
"""

from __future__ import annotations

from ..audit import MemoryAuditRecord
from ..cooldowns import FORGET_AFTER_S, CompressionCooldown
from .engine import Conn

_AUDIT_PAGE = 500
_SWEEP_LIMIT = 100
_COOLDOWN_COLUMNS = "segment_id, until, after_message_id, turns, kind, reason, notified"

_SWEEP = """DELETE FROM compression_cooldowns WHERE conversation_id IN (
    SELECT k.conversation_id FROM compression_cooldowns k
    LEFT JOIN conversations c ON c.id = k.conversation_id
    WHERE k.conversation_id <> %s AND (
        c.id IS NULL OR c.ended_at IS NOT NULL OR c.tip_segment_id <> k.segment_id OR k.until < %s)
    LIMIT %s FOR UPDATE OF k SKIP LOCKED)"""


async def record_memory_audit(
    conn: Conn,
    *,
    person_id: str | None,
    conversation_id: str | None,
    actor: str,
    store: str,
    action: str,
    old_text: str | None,
    new_text: str | None,
    at: float | None = None,
) -> None:
    """Insert one audit row (``at``: the server's now unless given, e.g. by an import)."""
    await conn.execute(
        "INSERT INTO memory_audit(at, person_id, conversation_id, actor, store, action, old_text, new_text) "
        "VALUES (COALESCE(%s, mg_now()), %s, %s, %s, %s, %s, %s, %s)",
        (at, person_id, conversation_id, actor, store, action, old_text, new_text),
    )


async def memory_audit(conn: Conn, person_id: str, limit: int) -> list[MemoryAuditRecord]:
    """The person's memory audit records, newest first (``limit`` clamped to 1..500)."""
    cursor = await conn.execute(
        "SELECT id, at, person_id, conversation_id, actor, store, action, old_text, new_text "
        "FROM memory_audit WHERE person_id = %s ORDER BY at DESC, id DESC LIMIT %s",
        (person_id, max(1, min(limit, _AUDIT_PAGE))),
    )
    return [
        MemoryAuditRecord(int(r[0]), float(r[1]), r[2], r[3], str(r[4]), str(r[5]), str(r[6]), r[7], r[8])
        for r in await cursor.fetchall()
    ]


async def get_cooldown(conn: Conn, conversation_id: str) -> CompressionCooldown | None:
    cursor = await conn.execute(
        f"SELECT {_COOLDOWN_COLUMNS} FROM compression_cooldowns WHERE conversation_id = %s",
        (conversation_id,),
    )
    row = await cursor.fetchone()
    if row is None:
        return None
    return CompressionCooldown(
        segment_id=str(row[0]),
        until=float(row[1]),
        after_message_id=int(row[2]),
        turns=int(row[3]),
        kind=str(row[4]),
        reason=str(row[5]),
        notified=bool(row[6]),
    )


async def put_cooldown(conn: Conn, conversation_id: str, cooldown: CompressionCooldown) -> None:
    """Replace the record and sweep the ones that can no longer matter; call inside one write transaction."""
    await conn.execute(
        f"INSERT INTO compression_cooldowns(conversation_id, {_COOLDOWN_COLUMNS}) "
        "VALUES (%s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (conversation_id) DO UPDATE SET "
        "segment_id = EXCLUDED.segment_id, until = EXCLUDED.until, "
        "after_message_id = EXCLUDED.after_message_id, turns = EXCLUDED.turns, kind = EXCLUDED.kind, "
        "reason = EXCLUDED.reason, notified = EXCLUDED.notified",
        (
            conversation_id,
            cooldown.segment_id,
            cooldown.until,
            cooldown.after_message_id,
            cooldown.turns,
            cooldown.kind,
            cooldown.reason,
            cooldown.notified,
        ),
    )
    await conn.execute(_SWEEP, (conversation_id, cooldown.until - FORGET_AFTER_S, _SWEEP_LIMIT))


async def clear_cooldown(conn: Conn, conversation_id: str) -> None:
    await conn.execute("DELETE FROM compression_cooldowns WHERE conversation_id = %s", (conversation_id,))
