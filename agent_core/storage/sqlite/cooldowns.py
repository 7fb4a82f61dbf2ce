"""Compression cooldowns in state.db: one JSON record per conversation in ``meta``, swept as records are put.

Invariants (the port's, ``agent_core.storage.cooldowns``): a record lives under the ``meta`` key
``compression.cooldown/<conversation id>``; every ``put`` also forgets, in the same transaction and at most
``_SWEEP_LIMIT`` of them, the records that can no longer matter: of an ended or missing conversation, of a
segment that is no longer the tip, unreadable ones, and those whose time ran out more than
``FORGET_AFTER_S`` before the new record's. An unreadable record reads as None (it only costs one early
retry of a compression).
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import asdict

from ..cooldowns import FORGET_AFTER_S, CompressionCooldown

_PREFIX = "compression.cooldown/"
_PREFIX_END = _PREFIX[:-1] + chr(ord(_PREFIX[-1]) + 1)  # the first key past every key with the prefix
_SWEEP_LIMIT = 100

# CASE, not OR: SQLite evaluates CASE branches lazily, so json_extract never sees a malformed value.
_SWEEP = f"""DELETE FROM meta WHERE key IN (
    SELECT m.key FROM meta m LEFT JOIN conversations c ON c.id = substr(m.key, {len(_PREFIX) + 1})
    WHERE m.key >= ? AND m.key < ? AND m.key != ? AND CASE
        WHEN c.id IS NULL OR c.ended_at IS NOT NULL OR NOT json_valid(m.value) THEN 1
        ELSE c.tip_session_id IS NOT json_extract(m.value, '$.segment_id')
            OR json_extract(m.value, '$.until') < ?
        END
    LIMIT ?)"""


def get_cooldown(conn: sqlite3.Connection, conversation_id: str) -> CompressionCooldown | None:
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (_PREFIX + conversation_id,)).fetchone()
    if row is None:
        return None
    try:
        return CompressionCooldown(**json.loads(str(row[0])))
    except (TypeError, ValueError):
        return None


def put_cooldown(conn: sqlite3.Connection, conversation_id: str, cooldown: CompressionCooldown) -> None:
    """Replace the record and sweep the ones that can no longer matter; call inside one write transaction."""
    key = _PREFIX + conversation_id
    horizon = cooldown.until - FORGET_AFTER_S
    conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, json.dumps(asdict(cooldown))))
    conn.execute(_SWEEP, (_PREFIX, _PREFIX_END, key, horizon, _SWEEP_LIMIT))


def clear_cooldown(conn: sqlite3.Connection, conversation_id: str) -> None:
    conn.execute("DELETE FROM meta WHERE key = ?", (_PREFIX + conversation_id,))
